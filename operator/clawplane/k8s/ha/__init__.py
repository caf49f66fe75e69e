"""High availability: leader election (a Lease) and sharding namespaces across replicas.

Nothing is imported here: ``k8s.options`` (read by every CLI start) takes the Lease's default
name without loading the election's API client.
"""

DEFAULT_LEASE_NAME = "clawplane-operator"
"""The Lease's name when ``--leader-election-id`` is not given."""
