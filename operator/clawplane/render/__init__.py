"""clawplane.render."""
