"""clawplane.planning."""
