"""clawplane.k8s."""
