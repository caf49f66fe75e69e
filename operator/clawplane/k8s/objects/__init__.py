"""The objects the operator owns in a namespace.

Children (Deployments, Services, ConfigMaps) and their cache and watches, converging them to what
a pass wants, Kubernetes Events, skill files mounted from ConfigMaps, and secret references.
"""
