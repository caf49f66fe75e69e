"""The dashboard at ``/ui`` of the supervisor's endpoint: live state, agents, servers and approvals.

Server-rendered pages (Jinja2, autoescaped) behind a cookie login that takes a folder token
(``read`` scope to look, ``approve`` to answer approvals). The page's own small script follows
the folder's event queue over Server-Sent Events and refreshes what changed; every page reads
without it. ``cli run`` (and any other entry point that runs a supervisor) passes ``dashboard``
as the supervisor's ``pages``; ``clawplane k8s run`` serves ``dashboard_of`` a namespace's
``Source`` on a listener of its own.
"""

from clawplane.ui.app import MAX_BODY, dashboard, dashboard_of
from clawplane.ui.source import LocalSource, Source

__all__ = ["MAX_BODY", "LocalSource", "Source", "dashboard", "dashboard_of"]
