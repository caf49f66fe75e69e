"""clawplane._utils."""
