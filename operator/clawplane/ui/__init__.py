"""The dashboard at ``/ui`` of the supervisor's endpoint: live state, agents, servers and approvals.

Server-rendered pages (Jinja2, autoescaped) behind a cookie login that takes a folder token
(``read`` scope to look, ``approve`` to answer approvals). The page's own small script follows
the folder's event queue over Server-Sent Events and refreshes what changed; every page reads
without it. ``cli run`` (and any other entry point that runs a supervisor) passes ``dashboard``
as the supervisor's ``pages``.
"""

from clawplane.ui.app import dashboard

__all__ = ["dashboard"]
