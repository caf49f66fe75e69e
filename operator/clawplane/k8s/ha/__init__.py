"""High availability: leader election (a Lease) and sharding namespaces across replicas."""
