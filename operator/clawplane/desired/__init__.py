"""clawplane.desired."""
