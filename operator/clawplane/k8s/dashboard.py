"""``clawplane k8s run --ui-port``: the dashboard of one namespace, from the operator's own state.

The operator keeps a state database per namespace (what each pass applied, its event and
approval queues, its audit log) and writes the namespace's resources out as a folder; the
dashboard reads exactly those, as it reads a folder's under ``clawplane run``. An answer to
an approval wakes the namespace's worker, so an approved action is carried out at once.

The listener is loopback unless ``--ui-bind-address`` says otherwise (reach it with
``kubectl port-forward``), checks Host and Origin as the supervisor's endpoint does, and takes
the token of ``--ui-token-file`` (``read`` and ``approve``) or ``--ui-reader-token-file``
(``read``); without a file, one is generated into ``STATE_DIR/ui-token`` (0600).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from clawplane.approvals import Approval
from clawplane.k8s.adapter.hub import Worker
from clawplane.k8s.metricsauth import FileToken
from clawplane.reconcile.engine import InvalidFolderError
from clawplane.reconcile.queries import QueryError, plan_document
from clawplane.reconcile.statusview import status_document
from clawplane.runtimes import Principal, RequestGuard, TokenTable
from clawplane.runtimes.proxy import bind, is_loopback, serve_app
from clawplane.state import store
from clawplane.ui import Source, dashboard_of

__all__ = ["GENERATED_UI_TOKEN_FILE", "DashboardOptions", "FileTokens", "NamespaceSource", "serve_dashboard"]

log = logging.getLogger("clawplane.k8s")
GENERATED_UI_TOKEN_FILE = "ui-token"
OPERATOR = Principal("dashboard", scopes=frozenset({"read", "approve"}))
READER = Principal("dashboard-reader", scopes=frozenset({"read"}))


@dataclass(frozen=True)
class DashboardOptions:
    """Where and for which namespace the operator serves its dashboard."""

    namespace: str
    token_file: Path
    """Its token may look and answer approvals."""
    reader_token_file: Path | None = None
    """Its token may only look."""
    host: str = "127.0.0.1"
    port: int = 0
    allowed_hosts: frozenset[str] = frozenset()
    """Host names accepted on a non-loopback address (none: any)."""
    on_listening: Callable[[str], None] | None = field(default=None, compare=False)
    """Called with the dashboard's URL once it listens."""


class FileTokens(TokenTable):
    """The tokens of the dashboard's files, re-read when a file changes (a rotated Secret)."""

    def __init__(self, files: list[FileToken]) -> None:
        super().__init__()
        self.files = files  # each is read now: a bad file fails at start-up, with its cause

    def _refresh(self) -> None:
        self.replace({f.digest(): f.principal for f in self.files if f.digest()})

    def authenticate(self, token: str) -> Principal | None:
        """The principal of ``token`` as the files hold them now."""
        self._refresh()
        return super().authenticate(token)

    def holder(self, digest: str) -> Principal | None:
        """The principal of a token digest, while its file still holds that token."""
        self._refresh()
        return super().holder(digest)


def dashboard_tokens(options: DashboardOptions) -> FileTokens:
    """The token table of ``options`` (raises ``MetricsAuthError`` naming a bad file)."""
    files = [FileToken(options.token_file, OPERATOR, "--ui-token-file")]
    if options.reader_token_file is not None:
        files.append(FileToken(options.reader_token_file, READER, "--ui-reader-token-file"))
    return FileTokens(files)


class NamespaceSource(Source):
    """One namespace as the operator's worker keeps it."""

    def __init__(self, worker: Worker, tokens: TokenTable, shutdown: anyio.Event) -> None:
        self.worker = worker
        rec = worker.reconciler
        self.ws, self.db, self.oversight, self.tokens, self.shutdown = (
            rec.ws, rec.db, rec.oversight, tokens, shutdown,
        )  # fmt: skip
        self.label = f"Namespace {rec.namespace}"

    def status(self) -> dict[str, Any]:
        """What the passes recorded: the pods' readiness is checked every pass."""
        return status_document(store.load_observed(self.db), supervised=False)

    def live(self) -> dict[str, dict[str, Any]]:
        """Nothing runs in the operator's process: its servers are pods."""
        return {}

    def sessions(self) -> dict[str, int]:
        """Sessions are held by the bridge pods, not counted here."""
        return {}

    def endpoint(self) -> str:
        """Servers are reached through their Services, not one endpoint."""
        return ""

    def loop(self) -> dict[str, Any]:
        """The namespace's last pass."""
        return dict(self.worker.reconciler.last)

    def plan(self) -> dict[str, Any]:
        """What a pass would do now, planned by an engine set up as the passes'."""
        try:
            return plan_document(self.worker.reconciler.plan())
        except InvalidFolderError as exc:
            raise QueryError(
                "the namespace's resources do not validate: "
                + "; ".join(str(d) for d in exc.diagnostics.sorted()[:5])
            ) from None

    def respond(self, approval_id: str, decision: str, *, by: str, reason: str) -> Approval:
        """Answer, then wake the worker so an approved action is carried out now."""
        done = self.oversight.respond(approval_id, decision, by=by, reason=reason)
        self.worker.poke()
        return done


async def serve_dashboard(options: DashboardOptions, worker: Worker, stop: asyncio.Event) -> None:
    """Serve the namespace's dashboard until ``stop`` is set."""
    shutdown = anyio.Event()
    guard_tokens = dashboard_tokens(options)
    guard = RequestGuard(options.host, guard_tokens, allowed_hosts=options.allowed_hosts)
    app = dashboard_of(NamespaceSource(worker, guard_tokens, shutdown), guard)
    if not is_loopback(options.host):
        log.warning(
            "the dashboard listens on %s: anyone who can reach it and holds its token can answer "
            "approvals; prefer 127.0.0.1 and kubectl port-forward",
            options.host,
        )
    try:
        sock = bind(options.host, options.port)
    except OSError as exc:
        log.error(
            "cannot serve the dashboard on %s:%d: %s; pick another --ui-port or --ui-bind-address",
            options.host, options.port, exc,
        )  # fmt: skip
        return
    async with serve_app(app, sock) as endpoint:
        url = f"{endpoint.base_url}/ui"
        log.info("dashboard of namespace %s at %s", options.namespace, url)
        if options.on_listening is not None:
            options.on_listening(url)
        try:
            await stop.wait()
        finally:
            shutdown.set()
