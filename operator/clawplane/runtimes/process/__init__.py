"""clawplane.runtimes.process: a stdio server's child process and proof that it is ours.

Starting it (``child``), marking it so a later supervisor can prove it started it (``marks``),
reaping orphans as the subreaper (``reaping``, ``childwatch``), its cgroup (``cgroups``), its
captured stderr (``stderr``) and the slots starts wait for (``starts``). Nothing here knows MCP.
"""
