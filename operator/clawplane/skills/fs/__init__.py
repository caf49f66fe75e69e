"""Skills on disk: scanning the roots OpenClaw reads, apart from deciding what they mean.

``discovery`` walks a root for skill folders as OpenClaw does, over ``listing`` (bounded
directory reads) and ``pathfacts`` (what a path is, symlinks and containment included);
``fscache`` and ``fscover`` keep what was read until the folder changes.
"""
