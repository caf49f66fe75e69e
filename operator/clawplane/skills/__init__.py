"""clawplane.skills."""
