"""The dashboard's routes: login and logout, the pages, approval answers and the live stream.

The proxy in front has checked Host and Origin already. Here every page but the login form
needs a session cookie (401 with the login form otherwise, and nothing of the folder);
every POST needs a same-origin ``Origin`` header, and every POST but the login its session's
CSRF token. Answers need the token's ``approve`` scope. Responses carry a strict CSP (no
inline script or style, nothing from elsewhere) and are never cached.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from importlib.resources import files
from typing import Any

import anyio
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from clawplane.approvals import ApprovalError, Decision
from clawplane.events import Event
from clawplane.runtimes import RequestGuard
from clawplane.runtimes.proxy import reply
from clawplane.secrets import redact_data
from clawplane.supervisor import PagesContext
from clawplane.ui import views
from clawplane.ui.sessions import COOKIE, TTL_S, Session, Sessions
from clawplane.ui.source import LocalSource, Source

__all__ = ["dashboard", "dashboard_of"]

_RENDERED_AFTER: ContextVar[int | None] = ContextVar("rendered_after", default=None)
"""The newest event when a GET page began reading the folder; None outside one (a form's
error page then streams from the newest event, not the whole backlog)."""

_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
}
_STATIC = {"live.js": "text/javascript", "style.css": "text/css"}
_KEEPALIVE_S = 15.0
MAX_BODY = 64 * 1024
"""The largest form a listener of the dashboard's own reads (a login, an answer with its reason)."""

Handler = Callable[[Request], Awaitable[Response]]


class _Dashboard:
    def __init__(self, src: Source) -> None:
        self.src = src
        self.sessions = Sessions(src.tokens)
        self.env = Environment(
            loader=PackageLoader("clawplane.ui", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
        )
        # JSON for people (``tojson`` writes ``<`` as ``\u003c``: unreadable in <redacted>); autoescaped.
        self.env.filters["pretty"] = lambda value, indent=None: json.dumps(value, indent=indent, default=str)
        self.router = Router(
            routes=[
                Route("/ui", self.page(self.overview)),
                Route("/ui/", self.page(self.overview)),
                Route("/ui/login", self.login_form, methods=["GET"]),
                Route("/ui/login", self.login, methods=["POST"]),
                Route("/ui/logout", self.form(self.logout), methods=["POST"]),
                Route("/ui/servers/{name}", self.page(self.server)),
                Route("/ui/agents/{name}", self.page(self.agent)),
                Route("/ui/plan", self.page(self.plan)),
                Route("/ui/audit", self.page(self.audit)),
                Route("/ui/approvals", self.page(self.approvals), methods=["GET"]),
                Route("/ui/approvals/{id}", self.form(self.answer), methods=["POST"]),
                Route("/ui/events", self.page(self.events)),
                Route("/ui/static/{file}", self.static),
            ]
        )

    # -- plumbing -------------------------------------------------------------------------------

    def render(self, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(events_after=_RENDERED_AFTER.get(), **values)
        return HTMLResponse(html, status, headers=_HEADERS)

    def session(self, request: Request) -> Session | None:
        return self.sessions.get(request.cookies.get(COOKIE))

    def login_page(self, status: int, error: str = "") -> HTMLResponse:
        return self.render("login.html", status, error=error, session=None)

    def page(self, handler: Callable[[Request, Session], Awaitable[Response]]) -> Handler:
        """A GET that needs a session: 401 and the login form without one."""

        async def run(request: Request) -> Response:
            session = self.session(request)
            if session is None:
                return self.login_page(401)
            # Taken before the handler reads the folder: the page's live stream starts here,
            # so whatever happens while the page loads still reaches it.
            _RENDERED_AFTER.set(self.src.oversight.events.head())
            return await handler(request, session)

        return run

    def same_origin(self, request: Request) -> bool:
        origin, host = request.headers.get("origin"), request.headers.get("host")
        return bool(origin and host) and origin == f"{request.url.scheme}://{host}"

    def form(self, handler: Callable[[Request, Session, dict[str, str]], Awaitable[Response]]) -> Handler:
        """A POST from one of our forms: same origin, a session and its CSRF token."""

        async def run(request: Request) -> Response:
            if not self.same_origin(request):
                return self.render(
                    "error.html", 403, session=None, message="cross-site form posts are refused"
                )
            session = self.session(request)
            if session is None:
                return self.login_page(401)
            fields = {k: str(v) for k, v in (await request.form()).items() if isinstance(v, str)}
            if not session.csrf_ok(fields.get("csrf", "")):
                message = "this form is stale or was not sent by this dashboard (CSRF); reload and retry"
                return self.render("error.html", 403, session=session, message=message)
            return await handler(request, session, fields)

        return run

    # -- login ----------------------------------------------------------------------------------

    async def login_form(self, request: Request) -> Response:
        if self.session(request) is not None:
            return RedirectResponse("/ui", 303, headers=_HEADERS)
        return self.login_page(200)

    async def login(self, request: Request) -> Response:
        if not self.same_origin(request):
            return self.render("error.html", 403, session=None, message="cross-site form posts are refused")
        token = str((await request.form()).get("token") or "")
        opened = self.sessions.open(token) if token else None
        if opened is None:
            return self.login_page(401, "that token is not valid here (`clawplane token show FOLDER cli`)")
        if not isinstance(opened, tuple):
            return self.login_page(403, f'the token of consumer "{opened.consumer}" has no read scope')
        sid, _ = opened
        response = RedirectResponse("/ui", 303, headers=_HEADERS)
        response.set_cookie(COOKIE, sid, max_age=TTL_S, path="/ui", httponly=True, samesite="strict")
        return response

    async def logout(self, request: Request, session: Session, fields: dict[str, str]) -> Response:
        self.sessions.close(request.cookies.get(COOKIE))
        response = RedirectResponse("/ui/login", 303, headers=_HEADERS)
        response.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict")
        return response

    # -- pages ----------------------------------------------------------------------------------

    async def overview(self, request: Request, session: Session) -> Response:
        return self.render("overview.html", session=session, view=views.overview(self.src), nav="overview")

    async def server(self, request: Request, session: Session) -> Response:
        view = views.server_view(self.src, request.path_params["name"])
        if view is None:
            return self.render("error.html", 404, session=session, message="no such McpServer in this folder")
        return self.render("server.html", session=session, r=view, nav="overview")

    async def agent(self, request: Request, session: Session) -> Response:
        view = views.agent_view(self.src, request.path_params["name"])
        if view is None:
            return self.render("error.html", 404, session=session, message="no such Agent in this folder")
        return self.render("agent.html", session=session, r=view, nav="overview")

    async def plan(self, request: Request, session: Session) -> Response:
        # Planned by the query worker, as the MCP plan tool: the event loop only waits for it.
        view = await views.plan_view(self.src, f"dashboard:{session.consumer}")
        return self.render("plan.html", session=session, view=view, nav="plan")

    async def audit(self, request: Request, session: Session) -> Response:
        view = views.audit_view(self.src, dict(request.query_params))
        return self.render("audit.html", session=session, view=view, nav="audit")

    async def approvals(
        self, request: Request, session: Session, message: str = "", status: int = 200
    ) -> Response:
        view = views.approvals_view(self.src)
        return self.render(
            "approvals.html", status, session=session, view=view, nav="approvals", message=message
        )

    async def answer(self, request: Request, session: Session, fields: dict[str, str]) -> Response:
        if not session.may("approve"):
            message = (
                f'the token of consumer "{session.consumer}" has no approve scope: it can look, not answer'
            )
            return await self.approvals(request, session, message, 403)
        decision = fields.get("decision", "")
        if decision not in (Decision.APPROVE.value, Decision.REJECT.value):
            return await self.approvals(request, session, "choose approve or reject", 400)
        try:
            self.src.respond(
                request.path_params["id"],
                decision,
                by=f"ui:{session.consumer}",
                reason=fields.get("reason", "")[:500],
            )
        except ApprovalError as exc:
            return await self.approvals(request, session, str(exc), 409)
        return RedirectResponse("/ui/approvals", 303, headers=_HEADERS)

    async def static(self, request: Request) -> Response:
        name = request.path_params["file"]
        if name not in _STATIC:
            return Response("not found", 404, headers=_HEADERS)
        body = files("clawplane.ui").joinpath("static", name).read_bytes()
        return Response(body, 200, media_type=_STATIC[name], headers=_HEADERS)

    # -- live -----------------------------------------------------------------------------------

    async def events(self, request: Request, session: Session) -> Response:
        queue = self.src.oversight.events
        given = request.headers.get("last-event-id") or request.query_params.get("after")
        head = _RENDERED_AFTER.get()  # read by ``page`` as this request began
        cursor = _cursor(given, queue.head() if head is None else head)
        sid = request.cookies.get(COOKIE)

        async def stream() -> AsyncIterator[str]:
            nonlocal cursor
            yield "retry: 2000\n\n"
            while not self.src.shutdown.is_set() and self.sessions.get(sid) is not None:
                page = await _until(queue.wait(cursor, timeout=_KEEPALIVE_S, limit=200), self.src.shutdown)
                if page is None:
                    return
                for event in page.events:
                    yield _sse(event)
                if page.gap is not None:
                    yield f"data: {json.dumps({'type': 'gap'})}\n\n"
                if not page.events:
                    yield ": keep-alive\n\n"
                cursor = page.next_cursor

        headers = {**_HEADERS, "x-accel-buffering": "no"}
        return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.router(scope, receive, send)


def _cursor(given: str | None, head: int) -> int:
    """Where a stream starts: after the event the client names (a reconnect's Last-Event-ID,
    or the page's render point), never beyond the newest; at the newest without one."""
    try:
        return max(0, min(int(given or ""), head))
    except ValueError:
        return head


def _sse(event: Event) -> str:
    data = redact_data({"type": event.type, "subject": event.subject, "at": event.at, **dict(event.data)})
    return f"id: {event.cursor}\ndata: {json.dumps(data)}\n\n"


async def _until(work: Awaitable[Any], stop: anyio.Event) -> Any:
    """``work``'s result, or None once ``stop`` is set first."""
    result: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            result.append(await work)
            tg.cancel_scope.cancel()

        async def watch() -> None:
            await stop.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(run)
        tg.start_soon(watch)
    return result[0] if result else None


def dashboard(ctx: PagesContext) -> ASGIApp:
    """The dashboard app for one folder's supervisor (its ``pages``)."""
    return _Dashboard(LocalSource(ctx))


def dashboard_of(src: Source, guard: RequestGuard) -> ASGIApp:
    """The dashboard over any source, on a listener of its own (the operator's).

    ``guard`` checks Host and Origin first, as the supervisor's endpoint does before its
    pages; bodies are bounded (``MAX_BODY``) before anything reads them; everything but
    ``/ui`` is 404.
    """
    pages = _Dashboard(src)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not await guard.check_origin(scope, send):
            return
        path = str(scope.get("path", ""))
        if path != "/ui" and not path.startswith("/ui/"):
            await reply(send, 404, {"error": f"nothing at {path}; the dashboard is at /ui"})
            return
        if scope.get("method") == "POST":
            length = dict(scope.get("headers") or ()).get(b"content-length")
            if length is None or not length.isdigit():
                await reply(send, 411, {"error": "a form post needs a Content-Length"})
                return
            if int(length) > MAX_BODY:
                await reply(send, 413, {"error": f"bodies over {MAX_BODY} bytes are refused"})
                return
        await pages(scope, receive, send)

    return app
