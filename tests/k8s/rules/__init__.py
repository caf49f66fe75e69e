"""The API server's write rules, ported to Python from the upstream Kubernetes sources.

Each module names the upstream file it follows. They are used by the emulator
(tests/k8s/api.py) on every write, so a manifest or child object that a real
kube-apiserver would refuse is refused here too, with the same field paths and wording.
"""
