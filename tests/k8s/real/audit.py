"""The real API server's audit log read as a per-client request log (who did what, by verb).

The emulator counts the requests each client makes; a real API server says the same in its audit
log (one JSON event per request, Metadata level): the user, the RBAC verb, the object and the
answer. Reading it only from an offset gives one test's window.
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.k8s.operator_run import wait_for
from tests.k8s.real.client import Kube

JSON = dict[str, Any]
HTTP_VERBS = {"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE"}
WRITES = frozenset(HTTP_VERBS)


def events(log: Path, offset: int = 0) -> list[JSON]:
    """The audit events written after byte ``offset`` (a line still being written is left out)."""
    with log.open("rb") as stream:
        stream.seek(offset)
        data = stream.read()
    complete = data[: data.rfind(b"\n") + 1]
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


def key(event: JSON) -> tuple[str, str, str]:
    """``(apiGroup, resource[/subresource], verb)`` as RBAC names a request."""
    ref = event.get("objectRef") or {}
    resource = ref.get("resource", "")
    if ref.get("subresource"):
        resource += "/" + ref["subresource"]
    return (ref.get("apiGroup", ""), resource, event["verb"])


def query(event: JSON) -> dict[str, str]:
    """The request's query parameters (first value of each)."""
    return {k: v[0] for k, v in parse_qs(urlsplit(event.get("requestURI", "")).query).items()}


def is_dry_run(event: JSON) -> bool:
    """A server-side dry run stores nothing: not a write."""
    return query(event).get("dryRun") == "All"


class AuditWindow:
    """One user's requests in the audit log from the moment this window opened."""

    def __init__(self, log: Path, username: str) -> None:
        self.log, self.username = log, username
        self.offset = log.stat().st_size

    def reopen(self) -> None:
        """Forget what came before now."""
        self.offset = self.log.stat().st_size

    def settle(self, admin: Kube) -> None:
        """Wait until a request made now is in the log, so the events of answered requests are too.

        The API server writes a request's event right after answering it; a marker request of the
        admin's, once logged, shows the writer has caught up with what came before it.
        """
        marker = f"audit-marker-{secrets.token_hex(6)}"
        admin.get("v1", "ConfigMap", "default", marker)
        wait_for(
            "the audit log to catch up",
            lambda: any(
                (e.get("objectRef") or {}).get("name") == marker for e in events(self.log, self.offset)
            ),
        )

    def mine(self) -> list[JSON]:
        """This user's completed (or, for watches, started) requests."""
        return [
            e for e in events(self.log, self.offset)
            if e["user"]["username"] == self.username and e.get("stage") in ("ResponseComplete", "ResponseStarted")
            and not (e["verb"] == "watch" and e.get("stage") == "ResponseComplete")
        ]  # fmt: skip

    def writes(
        self, resource: str, namespace: str | None = None, name: str | None = None
    ) -> list[tuple[str, str, str | None]]:
        """``(HTTP verb, name, subresource)`` of each write to ``resource``, refused ones too (not dry runs)."""
        found = []
        for event in self.mine():
            ref = event.get("objectRef") or {}
            if event["verb"] not in WRITES or is_dry_run(event) or ref.get("resource") != resource:
                continue
            if namespace is not None and ref.get("namespace") != namespace:
                continue
            if name is not None and ref.get("name") != name:
                continue
            found.append((HTTP_VERBS[event["verb"]], str(ref.get("name", "")), ref.get("subresource")))
        return found

    def write_tally(self) -> Counter[tuple[str, str, str | None]]:
        """Writes by ``(HTTP verb, resource, subresource)``, refused ones too (not dry runs)."""
        return Counter(
            (HTTP_VERBS[e["verb"]], (e.get("objectRef") or {}).get("resource", ""), (e.get("objectRef") or {}).get("subresource"))
            for e in self.mine() if e["verb"] in WRITES and not is_dry_run(e)
        )  # fmt: skip

    def tally(self) -> Counter[tuple[str, str, str | None]]:
        """Requests by ``(verb, resource, subresource)``, verbs as RBAC names them (dry runs as ``dryrun-<verb>``)."""
        counts: Counter[tuple[str, str, str | None]] = Counter()
        for event in self.mine():
            ref = event.get("objectRef") or {}
            if not ref.get("resource"):
                continue
            verb = f"dryrun-{event['verb']}" if is_dry_run(event) else event["verb"]
            counts[(verb, ref["resource"], ref.get("subresource"))] += 1
        return counts

    def watches(self) -> list[tuple[str, str | None, str | None]]:
        """``(resource, namespace or None, labelSelector or None)`` of every watch opened."""
        return [
            ((e.get("objectRef") or {}).get("resource", ""), (e.get("objectRef") or {}).get("namespace"),
             query(e).get("labelSelector"))
            for e in self.mine() if e["verb"] == "watch"
        ]  # fmt: skip

    def used(self) -> set[tuple[str, str, str]]:
        """Every ``(apiGroup, resource, verb)`` this user asked for."""
        return {key(e) for e in self.mine() if e.get("objectRef")}

    def refused(self) -> list[tuple[str, str, str]]:
        """What RBAC refused this user (HTTP 403), sorted."""
        return sorted({key(e) for e in self.mine() if (e.get("responseStatus") or {}).get("code") == 403})
