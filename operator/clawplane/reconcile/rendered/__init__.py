"""clawplane.reconcile.rendered: every file the engine renders, and writing the changed ones.

``outputs`` turns desired and observed state into text keyed by path, ``jsontext`` indents JSON
byte for byte as Python's ``json.dumps`` does, ``writing`` puts what changed on disk.
"""
