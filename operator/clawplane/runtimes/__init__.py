"""clawplane.runtimes."""
