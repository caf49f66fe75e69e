"""clawplane.reconcile."""
