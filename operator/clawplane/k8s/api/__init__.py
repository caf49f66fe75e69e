"""The Kubernetes API as the operator uses it.

``kubeapi`` is the client (typed calls, retries, watches); ``kubeconfig`` finds the credentials
(a kubeconfig file or the in-cluster service account).
"""
