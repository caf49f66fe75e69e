"""The engine's adapter for Kubernetes.

One namespace's pass (``reconciler``) over the shared engine, its runtime backend (pods instead
of processes), resources materialized from custom objects, approvals, statuses written back, and
the hub that runs passes.
"""
