"""``Emulator``: kmock's in-memory Kubernetes API made faithful enough for kopf and kubectl.

kmock 0.8 (pinned) provides the HTTP server, the request DSL, discovery and the versioned object
store (``emu.objects[res, ns, name].history``). This subclass replaces its object semantics: server
metadata, resourceVersions, patch flavours, the status subresource, PUT, finalizers, selectors,
resumable watches, dry runs, server-side apply, CRD registration, owner GC and fault injection.
See shared/notes/k8s-testing.md for the gaps it closes.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import copy
import threading
import warnings
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp.web
import attrs
import kmock
from kmock._internal import enums, parsing, rendering
from tests.k8s import crds, tables
from tests.k8s import objects as o
from tests.k8s.crds import CRD_RESOURCE
from tests.k8s.discovery import DiscoveryMixin
from tests.k8s.openapi import OpenApiMixin
from tests.k8s.rules import fielderrors as fe
from tests.k8s.selectors import SELECTABLE_FIELDS, Matcher, SelectorError, combined_matcher
from tests.k8s.strict import StrictWrites
from tests.k8s.wire import (
    APPLY_PATCH,
    JSON_PATCH,
    STRATEGIC_PATCH,
    WRITE_METHODS,
    Target,
    WriteRecord,
    bearer,
    decode_body,
    parse_k8s_path,
)

JSON = dict[str, Any]
T = TypeVar("T")
NAMESPACES = kmock.resource("", "v1", "namespaces")
MAX_REQUEST_BYTES = 3 * 1024 * 1024


_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass
class _Injection:
    plural: str
    remaining: int
    verbs: tuple[str, ...]


@dataclass(frozen=True)
class _Event:
    rv: int
    type: str
    obj: JSON
    old: JSON | None


@attrs.define(kw_only=True)
class Emulator(StrictWrites, OpenApiMixin, DiscoveryMixin, kmock.KubernetesEmulator):
    """A Kubernetes API emulator for tests, enforcing the real API server's write rules.

    ``gc=False`` turns off the owner-reference garbage collector (on, as in every cluster).
    """

    gc: bool = True
    builtins: bool = True
    history_limit: int = 10000
    request_log_limit: int = 100
    """kmock matches each request against every request kept before it; keeping all makes a run quadratic."""

    _rv: int = attrs.field(default=0, init=False)
    _events: dict[kmock.resource, list[_Event]] = attrs.field(factory=lambda: defaultdict(list), init=False)
    _dropped_rv: dict[kmock.resource, int] = attrs.field(factory=dict, init=False)
    _wakeup: asyncio.Event = attrs.field(factory=asyncio.Event, init=False)
    _closing: bool = attrs.field(default=False, init=False)
    _guard: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _injections: list[_Injection] = attrs.field(factory=list, init=False)
    _write_log: list[WriteRecord] = attrs.field(factory=list, init=False)
    _crd_resources: dict[str, list[kmock.resource]] = attrs.field(factory=dict, init=False)
    _request_count: int = attrs.field(default=0, init=False)
    _teardowns: dict[str, asyncio.Task[None]] = attrs.field(factory=dict, init=False)
    _watch_log: list[tuple[str, str | None, str | None]] = attrs.field(factory=list, init=False)
    _partitioned: set[str] = attrs.field(factory=set, init=False)
    _tally: Counter[tuple[str, str, str | None]] = attrs.field(factory=Counter, init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.builtins:
            # kmock's k3s snapshot; verified to declare every built-in kind the operator touches
            # (namespaces, CRDs, configmaps, secrets, services, pods, both events, deployments with
            # /status, serviceaccounts, leases). kmock reads it with a deprecated importlib API.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "read_binary is deprecated", DeprecationWarning)
                self.resources.load_bundled()
        # A sub-priority above kmock's own fallbacks, below anything a test declares.
        (self.fallback**1)[self._is_resource_request] << self._serve_resource
        (self.fallback**1)[self._is_openapi_request] << self._serve_openapi

    # --- public test API -------------------------------------------------------------------------

    @property
    def resource_version(self) -> int:
        """The current global resourceVersion."""
        return self._rv

    def inject_conflicts(
        self, resource_plural: str, count: int, verbs: tuple[str, ...] = ("PUT", "PATCH")
    ) -> None:
        """Answer the next ``count`` matching writes (main or /status) with 409 Conflict, storing nothing."""
        with self._guard:
            self._injections.append(_Injection(resource_plural, count, tuple(v.upper() for v in verbs)))

    def writes(
        self, resource_plural: str, namespace: str | None = None, name: str | None = None
    ) -> list[tuple[str, str, str | None]]:
        """``(verb, path, subresource)`` of every POST/PUT/PATCH/DELETE received, rejected ones too (not dry runs)."""
        with self._guard:
            log = list(self._write_log)
        return [
            (w.verb, w.path, w.subresource)
            for w in log
            if w.plural == resource_plural
            and (namespace is None or w.namespace == namespace)
            and (name is None or w.name == name)
        ]

    def request_tally(self) -> Counter[tuple[str, str, str | None]]:
        """How many resource requests came, by ``(verb, plural, subresource)``; verbs as RBAC names them.

        ``get``, ``list``, ``watch``, ``create``, ``update``, ``patch``, ``delete``; a dry run is
        ``dryrun-<verb>``. Rejected requests count too (they cost a round trip all the same).
        """
        with self._guard:
            return Counter(self._tally)

    def watches(self) -> list[tuple[str, str | None, str | None]]:
        """``(plural, namespace or None, labelSelector or None)`` of every watch opened (the last 1000)."""
        with self._guard:
            return list(self._watch_log)

    def write_log(self) -> list[WriteRecord]:
        """Every write received so far, rejected ones too (not dry runs), with the client's token."""
        with self._guard:
            return list(self._write_log)

    def partition(self, token: str, cut: bool = True) -> None:
        """Cut off (or reconnect) the client with this bearer token: its requests get 503, and its open
        watches end, as when a network partition separates it from the API server."""
        with self._guard:
            if cut:
                self._partitioned.add(token)
            else:
                self._partitioned.discard(token)
        self._wake()

    def clear_writes(self) -> None:
        """Forget the write log (e.g. before restarting an operator)."""
        with self._guard:
            self._write_log.clear()

    async def wait_for(self, predicate: Callable[[], T | None], timeout: float) -> T:
        """Wait (on store changes, not by polling) until ``predicate()`` is truthy; return its value."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            wakeup = self._wakeup
            value = predicate()
            if value:
                return value
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {timeout}s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wakeup.wait(), remaining)

    async def next_change(self, timeout: float) -> None:
        """Return after the next store change (or ``timeout`` seconds, whichever comes first)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wakeup.wait(), timeout)

    def close_watches(self) -> None:
        """End all open watch streams and namespace teardowns (called before shutdown so it is quick)."""
        self._closing = True
        for task in self._teardowns.values():
            task.cancel()
        self._wake()

    # --- request plumbing --------------------------------------------------------------------------

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        """kmock's entry point, with a path parser that handles ``/api/v1/namespaces`` correctly."""
        raw_response: aiohttp.web.StreamResponse | None = None
        try:
            request = await self._parse(raw_request)
            self._request_count += 1
            self._requests.append(request)
            if len(self._requests) > 2 * self.request_log_limit:
                del self._requests[: -self.request_log_limit]
            try:
                return await self._handle(request)
            except rendering.StreamingError as exc:
                raw_response = exc.args[0]
                if exc.__cause__ is None:
                    raise
                raise exc.__cause__ from None
        except Exception as exc:
            if not self._errors:
                raise
            self._errors[-1].append(exc)
            if raw_response is None or not raw_response.prepared:
                return await self._render_error(exc)
            await self._stream_error(exc, raw_response)
            await raw_response.write_eof()
            return raw_response

    async def _parse(self, raw: aiohttp.web.BaseRequest) -> rendering.Request:
        # The real API server reads bodies of up to 3 MiB (aiohttp's default is 1 MiB).
        raw._client_max_size = MAX_REQUEST_BYTES
        body = await raw.read()
        k8s = parse_k8s_path(raw.path)
        resource = None
        if k8s.group is not None:
            resource = kmock.resource(group=k8s.group, version=k8s.version, plural=k8s.plural)
        method = enums.method(raw.method)
        return rendering.Request(
            id=self._request_count,
            raw_request=raw,
            url=raw.url,
            method=method,
            params=dict(raw.query),
            headers=dict(raw.headers),
            cookies=dict(raw.cookies),
            body=body,
            text=body.decode("utf-8", errors="replace"),
            data=decode_body(body),
            action=parsing.guess_k8s(k8s, method, dict(raw.query)),
            resource=resource,
            namespace=k8s.namespace,
            name=k8s.name,
            subresource=k8s.subresource,
        )

    async def _handle(self, request: rendering.Request) -> aiohttp.web.StreamResponse:
        if self._is_partitioned(request.headers):
            status = o.ApiError(503, "ServiceUnavailable", "the server is unreachable (partitioned)").status()
            return aiohttp.web.json_response(status, status=503)
        self._record_write(request)
        self._count(request)
        # Skip KubernetesEmulator._handle: its object bookkeeping is replaced by _serve_resource.
        return await kmock.RawHandler._handle(self, request)

    def _is_partitioned(self, headers: dict[str, str]) -> bool:
        user = bearer(headers)
        with self._guard:
            return bool(user) and user in self._partitioned

    @staticmethod
    def _is_resource_request(request: rendering.Request) -> bool:
        return request.resource is not None and request.resource.plural is not None

    def _record_write(self, request: rendering.Request) -> None:
        verb = str(request.method.value).upper()
        if not self._is_resource_request(request) or verb not in WRITE_METHODS:
            return
        if request.params.get("dryRun"):
            return
        assert request.resource is not None
        name = request.name
        if name is None and isinstance(request.data, dict):
            name = (request.data.get("metadata") or {}).get("name")
        record = WriteRecord(
            verb,
            request.url.path,
            request.subresource,
            str(request.resource.plural),
            request.namespace,
            name,
            bearer(request.headers),
        )
        with self._guard:
            self._write_log.append(record)

    def _count(self, request: rendering.Request) -> None:
        if not self._is_resource_request(request):
            return
        assert request.resource is not None
        method = str(request.method.value).upper()
        verb = _VERBS.get(method, method.lower())
        if method == "GET" and request.name is None:
            verb = "watch" if request.params.get("watch") in ("true", "1") else "list"
        if request.params.get("dryRun"):
            verb = f"dryrun-{verb}"
        with self._guard:
            self._tally[(verb, str(request.resource.plural), request.subresource)] += 1

    def _take_injection(self, plural: str, verb: str) -> bool:
        with self._guard:
            for inj in self._injections:
                if inj.plural == plural and verb in inj.verbs and inj.remaining > 0:
                    inj.remaining -= 1
                    return True
        return False

    async def _serve_resource(self, request: rendering.Request) -> rendering.Response:
        warnings: list[str] = []
        try:
            status, payload = await self._dispatch(request, warnings)
        except o.ApiError as exc:
            status, payload = exc.code, exc.status()
        except SelectorError as exc:
            status, payload = 400, o.ApiError(400, "BadRequest", str(exc)).status()
        # Always set status and headers explicitly: kmock's reaction Response keeps the last ones.
        # kmock merges these into the reaction's stored headers: always set Warning, None removes it.
        headers: dict[str, str | None] = {"Content-Type": "application/json", "Warning": None}
        if warnings:
            headers["Warning"] = ", ".join('299 - "' + w.replace('"', '\\"') + '"' for w in warnings)
        return rendering.Response(status=status, headers=headers, payload=payload)

    def _target(self, request: rendering.Request, warnings: list[str] | None = None) -> Target:
        assert request.resource is not None
        res = request.resource
        if res not in self.resources:
            raise o.ApiError(404, "NotFound", "the server could not find the requested resource")
        info = self.resources[res]
        namespace = request.namespace if info.namespaced else None
        sub = request.subresource
        # Only /status has emulated semantics; scale, exec, log and the like are not served.
        if sub is not None and (sub != "status" or sub not in info.subresources):
            raise o.ApiError(404, "NotFound", "the server could not find the requested resource")
        return Target(
            res,
            info,
            namespace,
            request.name,
            sub,
            dict(request.params),
            warnings if warnings is not None else [],
        )

    async def _dispatch(self, request: rendering.Request, warnings: list[str]) -> tuple[int, Any]:
        t = self._target(request, warnings)
        verb = str(request.method.value).upper()
        ctype = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if verb in ("POST", "PUT", "PATCH") and "protobuf" in ctype:
            raise o.ApiError(
                415, "UnsupportedMediaType", f"the body of the request was in an unknown format: {ctype}"
            )
        if verb == "PATCH":
            self._check_patch_type(t, ctype, self._is_custom(t.resource))
        body = request.data
        if verb in ("POST", "PUT", "PATCH") and request.body and body is None:
            raise o.ApiError(400, "BadRequest", "the request body could not be decoded")
        if verb == "GET":
            table = self._table_columns(t, request.headers.get("Accept", ""))
            if t.params.get("watch") in ("true", "1"):
                return 200, self._watch(t, table, bearer(request.headers))
            found = self._get(t) if t.name else self._list(t)
            if table is None:
                return 200, found
            items = [found] if t.name else found["items"]
            include = t.params.get("includeObject") or "Metadata"
            rv = str(found["metadata"].get("resourceVersion"))
            return 200, tables.to_table(table, items, resource_version=rv, include=include)
        if verb in WRITE_METHODS and not t.dry_run and self._take_injection(str(t.resource.plural), verb):
            raise o.conflict(t.qualified, t.name or "")
        if verb == "POST" and not t.name:
            return 201, self._create(t, self._object_body(body))
        if verb == "PUT" and t.name:
            return 200, self._replace(t, self._object_body(body))
        if verb == "PATCH" and t.name:
            return self._patch(t, body, ctype)
        if verb == "DELETE":
            return 200, self._delete(t, body if isinstance(body, dict) else {})
        raise o.ApiError(405, "MethodNotAllowed", f"{verb} is not supported on {request.url.path}")

    @staticmethod
    def _object_body(body: Any) -> JSON:
        if not isinstance(body, dict):
            raise o.ApiError(400, "BadRequest", "the request body must be a JSON object")
        return copy.deepcopy(body)

    # --- store --------------------------------------------------------------------------------------

    def _live(self, key: tuple[kmock.resource, str | None, str]) -> JSON | None:
        if key not in self.objects:
            return None
        stored = self.objects[key]
        return None if stored.deleted else copy.deepcopy(stored.raw)

    def _live_items(self, t: Target, matcher: Matcher | None = None) -> list[JSON]:
        found = []
        for (res, ns, _), stored in self.objects.items():
            if res != t.resource or stored.deleted or (t.namespace is not None and ns != t.namespace):
                continue
            obj = stored.raw
            if matcher is None or matcher(obj):
                found.append(copy.deepcopy(obj))
        return sorted(found, key=lambda x: (x["metadata"].get("namespace") or "", x["metadata"]["name"]))

    def _commit(
        self, t: Target, name: str, obj: JSON | None, old: JSON | None, final: JSON | None = None
    ) -> JSON:
        """Store a new version (or a deletion when ``obj`` is None), bump the rv, log the watch event."""
        self._rv += 1
        key = t.key(name)
        shown = copy.deepcopy(obj if obj is not None else final)
        assert shown is not None
        shown["metadata"]["resourceVersion"] = str(self._rv)
        if obj is None:
            self.objects[key].delete()
            event = "DELETED"
        elif key in self.objects:
            self.objects[key].create(copy.deepcopy(shown))
            event = "ADDED" if old is None else "MODIFIED"
        else:
            self.objects[key] = copy.deepcopy(shown)
            event = "ADDED"
        self._log_event(t.resource, _Event(self._rv, event, copy.deepcopy(shown), old))
        return shown

    def _log_event(self, res: kmock.resource, event: _Event) -> None:
        log = self._events[res]
        log.append(event)
        if len(log) > self.history_limit:
            self._dropped_rv[res] = log[0].rv
            del log[0]
        self._wake()

    def _wake(self) -> None:
        self._wakeup.set()
        self._wakeup = asyncio.Event()

    # --- reads --------------------------------------------------------------------------------------

    def _get(self, t: Target) -> JSON:
        assert t.name is not None
        obj = self._live(t.key())
        if obj is None:
            raise o.not_found(t.qualified, t.name)
        return obj

    def _matcher(self, t: Target) -> Matcher:
        fields = t.params.get("fieldSelector") or ""
        if t.name:
            fields = ",".join(filter(None, [fields, f"metadata.name={t.name}"]))
        selector = combined_matcher(t.params.get("labelSelector"), fields, self._selectable_fields(t))
        if t.namespace is None:
            return selector
        return lambda obj: (obj.get("metadata") or {}).get("namespace") == t.namespace and selector(obj)

    def _table_columns(self, t: Target, accept: str) -> list[JSON] | None:
        """A custom resource's printer columns when the client asks for a Table (None: plain JSON)."""
        if not tables.wants_table(accept) or not self._is_custom(t.resource):
            return None
        return self._custom_printer_columns(t.resource)

    def _selectable_fields(self, t: Target) -> tuple[str, ...]:
        if self._is_custom(t.resource):
            return self._custom_selectable_fields(t.resource)
        return SELECTABLE_FIELDS.get((str(t.resource.group), str(t.resource.plural)), ())

    def _list(self, t: Target) -> JSON:
        items = self._live_items(t, self._matcher(t))
        group, version = t.resource.group, t.resource.version
        return {
            "kind": f"{t.info.kind or 'Object'}List",
            "apiVersion": f"{group}/{version}" if group else str(version),
            "metadata": {"resourceVersion": str(self._rv)},
            "items": items,
        }

    def _watch(self, t: Target, table: list[JSON] | None = None, user: str = "") -> AsyncIterator[Any]:
        matcher = self._matcher(t)  # parse now: a bad selector answers 400, not a broken stream
        with self._guard:
            self._watch_log.append((str(t.resource.plural), t.namespace, t.params.get("labelSelector")))
            del self._watch_log[:-1000]
        timeout = t.params.get("timeoutSeconds")
        since = t.params.get("resourceVersion") or "0"
        if not since.isdigit():
            raise o.ApiError(400, "BadRequest", f"invalid resourceVersion: {since!r}")
        stream = self._watch_stream(t, matcher, int(since), float(timeout) if timeout else None, user)
        return (
            stream
            if table is None
            else self._as_tables(stream, table, t.params.get("includeObject") or "Metadata")
        )

    @staticmethod
    async def _as_tables(stream: AsyncIterator[Any], columns: list[JSON], include: str) -> AsyncIterator[Any]:
        async for event in stream:
            if isinstance(event, dict) and event.get("type") != "ERROR":
                obj = event["object"]
                rv = str(obj["metadata"].get("resourceVersion"))
                event = {
                    **event,
                    "object": tables.to_table(columns, [obj], resource_version=rv, include=include),
                }
            yield event

    async def _watch_stream(
        self, t: Target, matcher: Matcher, since: int, timeout: float | None, user: str = ""
    ) -> AsyncIterator[Any]:
        yield b""  # send the headers now, even if nothing happens for a while
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        if since == 0:
            since = self._rv
            for obj in self._live_items(t, matcher):
                yield {"type": "ADDED", "object": obj}
        elif since < self._dropped_rv.get(t.resource, 0):
            yield {"type": "ERROR", "object": o.ApiError(410, "Expired", "too old resource version").status()}
            return
        while not self._closing and not (user and user in self._partitioned):
            wakeup = self._wakeup
            events = self._events[t.resource]
            pending = events[bisect.bisect_right(events, since, key=lambda e: e.rv) :]
            for event in pending:
                since = event.rv
                shown = self._as_seen(event, matcher)
                if shown is not None:
                    yield shown
            if pending:
                continue  # more may have arrived while yielding
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return
            try:
                await asyncio.wait_for(wakeup.wait(), remaining)
            except TimeoutError:
                return

    @staticmethod
    def _as_seen(event: _Event, matcher: Matcher) -> JSON | None:
        """The event as a selector-filtered watch sees it (objects leaving the selection are DELETED)."""
        now = matcher(event.obj)
        before = event.old is not None and matcher(event.old)
        if event.type != "MODIFIED":
            return {"type": event.type, "object": event.obj} if now else None
        if now and before:
            return {"type": "MODIFIED", "object": event.obj}
        if now or before:
            return {"type": "ADDED" if now else "DELETED", "object": event.obj}
        return None

    # --- writes -------------------------------------------------------------------------------------

    def _create(self, t: Target, body: JSON) -> JSON:
        meta = body.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise o.ApiError(400, "BadRequest", "metadata must be an object")
        if t.info.namespaced:
            if t.namespace and meta.get("namespace") not in (None, t.namespace):
                msg = "the namespace of the provided object does not match the namespace sent on the request"
                raise o.ApiError(400, "BadRequest", msg)
            t.namespace = t.namespace or meta.get("namespace")
            if not t.namespace:
                raise o.ApiError(400, "BadRequest", "a namespace is required for a namespaced resource")
            meta["namespace"] = t.namespace
        else:
            meta.pop("namespace", None)
        name = meta.get("name") or (
            o.generated_name(meta["generateName"]) if meta.get("generateName") else None
        )
        if not name:
            raise o.ApiError(422, "Invalid", f"{t.info.kind} is invalid: metadata.name: Required value")
        if self._live(t.key(name)) is not None:
            raise o.already_exists(t.qualified, name)
        self._namespace_lifecycle(t)
        if meta.get("resourceVersion"):
            raise o.ApiError(
                500, "InternalError", "resourceVersion should not be set on objects to be created"
            )
        group, version = t.resource.group, t.resource.version
        # apiVersion and kind first, as the real server serialises them.
        body = {"apiVersion": f"{group}/{version}" if group else version, "kind": t.info.kind, **body}
        meta.update(name=name, uid=o.new_uid(), creationTimestamp=o.now_rfc3339(), generation=1)
        for key in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(key, None)
        if t.has_status:
            body.pop("status", None)  # the real server ignores status on create
        self._admit(t, body, None)
        if t.dry_run:
            return body
        created = self._commit(t, name, body, None)
        self._after_write(t, created)
        return created

    def _replace(self, t: Target, body: JSON) -> JSON:
        assert t.name is not None
        old = self._get(t)
        meta = body.get("metadata") or {}
        if meta.get("name") not in (None, t.name):
            raise o.ApiError(400, "BadRequest", "the name of the object does not match the name on the URL")
        if not meta.get("resourceVersion") and (self._is_custom(t.resource) or t.resource == CRD_RESOURCE):
            # customResourceStrategy (and the CRD strategy) refuse unconditional updates.
            error = fe.invalid("metadata.resourceVersion", fe.Raw("0x0"), "must be specified for an update")
            status = fe.invalid_status(t.qualified_kind, str(t.info.kind), t.name, [error])
            raise o.ApiError(422, "Invalid", status["message"], body=status)
        if meta.get("resourceVersion") not in (None, "", old["metadata"]["resourceVersion"]):
            raise o.conflict(t.qualified, t.name)
        return self._update(t, old, self._merge_endpoint(t, old, body))

    def _merge_endpoint(self, t: Target, old: JSON, wanted: JSON) -> JSON:
        """Keep only what the addressed endpoint may change: .status on /status, the rest otherwise."""
        if t.subresource == "status":
            new = copy.deepcopy(old)
            if wanted.get("status") is None:
                new.pop("status", None)
            else:
                new["status"] = wanted["status"]
            return new
        new = o.carry_server_fields(wanted, old)
        new.setdefault("apiVersion", old.get("apiVersion"))
        new.setdefault("kind", old.get("kind"))
        if t.has_status:
            new.pop("status", None)
            if "status" in old:
                new["status"] = old["status"]
        return new

    def _patch(self, t: Target, body: Any, ctype: str) -> tuple[int, JSON]:
        assert t.name is not None
        old = self._live(t.key())
        if ctype == APPLY_PATCH:
            if not isinstance(body, dict):
                raise o.ApiError(400, "BadRequest", "an apply patch must be an object")
            if old is None:
                return 201, self._create(t, copy.deepcopy(body))
        if old is None:
            raise o.not_found(t.qualified, t.name)
        if isinstance(body, dict):
            wanted_rv = (body.get("metadata") or {}).get("resourceVersion")
            if wanted_rv not in (None, "", old["metadata"]["resourceVersion"]):
                raise o.conflict(t.qualified, t.name)
        if ctype == JSON_PATCH or isinstance(body, list):
            patched = o.json_patch(old, body)
        elif ctype == STRATEGIC_PATCH and not self._is_custom(t.resource):
            patched = o.strategic_merge_patch(old, self._object_body(body))
        else:
            patched = o.merge_patch(old, self._object_body(body))
        patched.setdefault("metadata", {})["resourceVersion"] = old["metadata"]["resourceVersion"]
        return 200, self._update(t, old, self._merge_endpoint(t, old, patched))

    def _update(self, t: Target, old: JSON, new: JSON) -> JSON:
        """Store ``new`` over ``old``: generation, no-op detection, finalizer release, dry runs."""
        assert t.name is not None
        new.setdefault("metadata", {})["resourceVersion"] = old["metadata"]["resourceVersion"]
        if o.content_of(new, t.has_status) != o.content_of(old, t.has_status):
            new["metadata"]["generation"] = int(old["metadata"].get("generation") or 1) + 1
        self._admit(t, new, old)
        if new == old or t.dry_run:
            return new
        meta = new["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            return self._finally_delete(t, t.name, new, old)
        stored = self._commit(t, t.name, new, old)
        self._after_write(t, stored)
        return stored

    def _delete(self, t: Target, options: JSON) -> Any:
        if t.name is None:
            return self._delete_collection(t)
        old = self._get(t)
        pre = options.get("preconditions") or {}
        meta = old["metadata"]
        if pre.get("resourceVersion") not in (None, meta["resourceVersion"]) or pre.get("uid") not in (
            None,
            meta["uid"],
        ):
            raise o.conflict(t.qualified, t.name)
        if t.dry_run:
            return old
        return self._delete_object(t, t.name, old)

    def _delete_collection(self, t: Target) -> JSON:
        items = self._live_items(t, self._matcher(t))
        if not t.dry_run:
            for obj in items:
                meta = obj["metadata"]
                sub = Target(t.resource, t.info, meta.get("namespace"), meta["name"], None, t.params)
                self._delete_object(sub, meta["name"], obj)
        return {**self._list(t), "items": items}

    def _delete_object(self, t: Target, name: str, old: JSON) -> JSON:
        """DELETE semantics: mark objects with finalizers, remove the others (then collect garbage)."""
        meta = old["metadata"]
        if t.resource == NAMESPACES:
            return self._delete_namespace(t, name, old)
        if meta.get("finalizers"):
            if meta.get("deletionTimestamp"):
                return old
            new = copy.deepcopy(old)
            new["metadata"].update(deletionTimestamp=o.now_rfc3339(), deletionGracePeriodSeconds=0)
            return self._commit(t, name, new, old)
        return self._finally_delete(t, name, old, old)

    def _finally_delete(self, t: Target, name: str, final: JSON, old: JSON) -> JSON:
        gone = self._commit(t, name, None, old, final=final)
        if t.resource == CRD_RESOURCE:
            self._unregister_crd(gone)
        if self.gc:
            self._collect_garbage(gone)
        return gone

    # --- CRDs, GC -------------------------------------------------------------------------------

    def _after_write(self, t: Target, obj: JSON) -> None:
        if t.resource == CRD_RESOURCE and not obj["metadata"].get("deletionTimestamp"):
            self._register_crd(obj)

    def _register_crd(self, crd: JSON) -> None:
        """Declare every served version of a CRD for discovery (and forget versions no longer served)."""
        self._forget_crd_resources(crd["metadata"]["name"])
        kinds = crds.served_kinds(crd)
        for res, info in kinds.items():
            self.resources[res] = info
        self._crd_resources[crd["metadata"]["name"]] = list(kinds)

    def _forget_crd_resources(self, crd_name: str) -> list[kmock.resource]:
        gone = self._crd_resources.pop(crd_name, [])
        for res in gone:
            if res in self.resources:
                del self.resources[res]
        return gone

    def _unregister_crd(self, crd: JSON) -> None:
        """Unregister the kinds and drop their objects, as the real server does when a CRD goes."""
        for res in self._forget_crd_resources(crd["metadata"]["name"]):
            info = kmock.ResourceInfo(kind="Object")
            for (key_res, ns, name), stored in list(self.objects.items()):
                if key_res == res and not stored.deleted:
                    t = Target(res, info, ns, name, None)
                    self._commit(t, name, None, stored.raw, final=stored.raw)

    def _collect_garbage(self, owner: JSON) -> None:
        """Delete dependents whose owners are all gone (namespaces are torn down by tests/k8s/strict.py)."""
        uid = owner["metadata"]["uid"]
        live_uids = {s.raw["metadata"].get("uid") for s in self.objects.values() if not s.deleted}
        for (res, ns, name), stored in list(self.objects.items()):
            if stored.deleted or res not in self.resources:
                continue
            obj = copy.deepcopy(stored.raw)
            owners = {ref.get("uid") for ref in obj["metadata"].get("ownerReferences") or []}
            orphaned = uid in owners and not (owners - {uid}) & live_uids
            if orphaned:
                t = Target(res, self.resources[res], ns, name, None)
                if self._live(t.key()) is not None:
                    self._delete_object(t, name, obj)
