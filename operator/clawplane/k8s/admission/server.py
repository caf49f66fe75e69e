"""The validating admission webhook: HTTPS, served by every replica, renewed while it runs.

It runs in a thread of its own (its own event loop), started before leader election, so
standbys answer too and a slow validation never delays a reconcile. At start and every
``recheck`` seconds it reads the TLS Secret (renewing it when due), reloads the certificate
into the live TLS context when it changed, and keeps the configuration pointing here.

Kubernetes sends admission reviews unauthenticated (a cluster's API server has no token for
webhooks unless its admin configures one), so the answer holds nothing secret: whether the
object sent is valid, and why not. Requests must name one of the certificate's names as Host
and carry no Origin (a browser page's request always does; the API server's never).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from aiohttp import web

from clawplane._utils.atomicfile import atomic_write_bytes
from clawplane._utils.private import make_private_dirs
from clawplane.k8s.admission.certs import TlsMaterial
from clawplane.k8s.admission.objects import WatchedObjects
from clawplane.k8s.admission.registration import configuration, register
from clawplane.k8s.admission.settings import PATH, WebhookOptions
from clawplane.k8s.admission.store import current_material
from clawplane.k8s.admission.verdict import PREFIX, Baseline, Verdict, review_with
from clawplane.k8s.api.kubeapi import ApiError, Kind, KubeApi
from clawplane.k8s.api.kubeconfig import Connection

log = logging.getLogger("clawplane.k8s.admission")

MAX_BODY = 4 * 1024 * 1024
"""An AdmissionReview carries the object (etcd bounds those at 1.5 MiB) and its old version."""
RETRY_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)
BASELINES = 64
"""Namespaces whose validated objects are kept between reviews (least recently reviewed dropped)."""


def _hostname(host: str) -> str:
    """The name in a Host header, without its port (``[::1]:9443`` → ``::1``)."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0].lower()
    return host.rsplit(":", 1)[0].lower() if host.count(":") == 1 else host.lower()


def _refusal(uid: str, verdict: Verdict) -> dict[str, Any]:
    response: dict[str, Any] = {"uid": uid, "allowed": verdict.allowed}
    if not verdict.allowed:
        response["status"] = {"code": 422, "reason": "Invalid", "message": PREFIX + verdict.message}
    if verdict.warnings:
        response["warnings"] = [PREFIX + w for w in verdict.warnings]
    return response


class Webhook:
    """The webhook's request handling (see the module docstring)."""

    def __init__(
        self, api: KubeApi, kinds: list[Kind], options: WebhookOptions, objects: WatchedObjects | None = None
    ) -> None:
        self.api, self.kinds, self.options, self.objects = api, kinds, options, objects
        self.hosts = {n.lower() for n in options.names()}
        self._baselines: OrderedDict[str, Baseline] = OrderedDict()

    async def handle(self, request: web.Request) -> web.Response:
        """Answer one AdmissionReview."""
        host = _hostname(request.host or "")
        if host not in self.hosts:
            return web.json_response({"error": f"unknown Host {host[:64]!r}"}, status=421)
        if "Origin" in request.headers:  # the API server sends none; a browser page always does
            return web.json_response({"error": "cross-origin requests are refused"}, status=403)
        try:
            review_doc = json.loads(await request.read())
            req = review_doc["request"]
            uid = req["uid"]
            if not isinstance(uid, str):
                raise TypeError("uid")
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "not an AdmissionReview with request.uid"}, status=400)
        verdict = await self.decide(req)
        answer = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": _refusal(uid, verdict),
        }
        return web.json_response(answer)

    async def decide(self, req: dict[str, Any]) -> Verdict:
        """The verdict on a review's object; any failure of ours admits it, saying why."""
        obj = req.get("object")
        namespace = req.get("namespace") or ""
        if req.get("operation") not in ("CREATE", "UPDATE") or not isinstance(obj, dict):
            return Verdict(True)
        if self.options.namespaces and namespace not in self.options.namespaces:
            return Verdict(True)
        others = self.objects.objects(namespace) if self.objects is not None else None
        if others is None:  # the watches are not in step (yet): list, one request per kind, all at once
            try:
                listed = await asyncio.gather(*(self.api.list(kind, namespace) for kind in self.kinds))
                others = [obj for objs in listed for obj in objs]
            except (ApiError, OSError, httpx.HTTPError) as exc:
                log.warning(
                    "admission: cannot list namespace %s (%s); checking the object alone", namespace, exc
                )
                others = []
        try:
            verdict, base = await asyncio.to_thread(review_with, obj, others, self._baselines.get(namespace))
        except Exception:  # a defect of ours must not block users: admit, and say so in the log
            name = (obj.get("metadata") or {}).get("name")
            log.exception("admission: validation failed for %s/%s", namespace, name)
            return Verdict(True, warnings=["the webhook could not check this object; see the operator log"])
        self._baselines[namespace] = base
        self._baselines.move_to_end(namespace)
        while len(self._baselines) > BASELINES:
            self._baselines.popitem(last=False)
        return verdict


class WebhookService:
    """Runs the webhook in its own thread until ``stop``."""

    def __init__(
        self,
        options: WebhookOptions,
        connection: Callable[[], Connection],
        kinds: list[Kind],
        state_dir: Path,
    ) -> None:
        self.options, self.connection, self.kinds = options, connection, kinds
        self.folder = state_dir / "webhook"
        self.ready = threading.Event()
        """Set once the webhook serves and its configuration points at it."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._main, name="clawplane-webhook", daemon=True)
        self.material: TlsMaterial | None = None
        self._site: web.TCPSite | None = None

    def start(self) -> None:
        """Start serving in the background."""
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving (the configuration stays: the failure policy then applies)."""
        self._stopping.set()  # seen by a thread that has not made its loop yet
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: it has stopped
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout)

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        if self._stopping.is_set():
            return
        conn = self.connection()
        options = self.options
        if not options.namespace:
            options = replace(options, namespace=conn.namespace)
        if options.target.service and not options.target.namespace:
            options = replace(options, target=replace(options.target, namespace=options.namespace))
        self.options = options
        api = KubeApi(conn)
        objects = WatchedObjects(self.kinds, options.namespaces)
        following = asyncio.create_task(objects.run(api), name="admission-watches")
        webhook = Webhook(api, self.kinds, options, objects)
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_post(PATH, webhook.handle)
        runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        failures = 0
        try:
            while not self._stop.is_set():
                try:
                    await self._refresh(api, context, runner, options)
                    failures = 0
                    wait = options.recheck_seconds
                except (ApiError, OSError, ValueError, httpx.HTTPError) as exc:
                    wait = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                    failures += 1
                    log.error("admission webhook: %s; retrying in %.0fs (%s)", exc, wait, self._fix(exc))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), wait)
        finally:
            following.cancel()
            await asyncio.gather(following, return_exceptions=True)
            await runner.cleanup()
            await api.aclose()

    def _fix(self, exc: Exception) -> str:
        options = self.options
        if isinstance(exc, ApiError) and exc.status == 403:
            return (
                f"grant get/create/update on Secret {options.namespace}/{options.secret} and on "
                f"ValidatingWebhookConfiguration {options.configuration}, as the chart's RBAC does"
            )
        if isinstance(exc, OSError) and self._site is None:
            return f"is port {options.port} on {options.bind} free? pick another --webhook-port"
        return "is the API server reachable?"

    async def _refresh(
        self, api: KubeApi, context: ssl.SSLContext, runner: web.AppRunner, options: WebhookOptions
    ) -> None:
        material = await current_material(api, options.namespace, options.secret, options.names())
        if material != self.material:
            make_private_dirs(self.folder)
            atomic_write_bytes(self.folder / "tls.crt", material.cert)
            atomic_write_bytes(self.folder / "tls.key", material.key)
            # New handshakes use the new pair; connections already open keep theirs.
            context.load_cert_chain(self.folder / "tls.crt", self.folder / "tls.key")
            if self.material is not None:
                log.info("admission webhook: serving a renewed certificate")
            self.material = material
        if self._site is None:
            site = web.TCPSite(runner, options.bind, options.port, ssl_context=context)
            await site.start()
            self._site = site
            log.info("admission webhook listening on https://%s:%d%s", options.bind, options.port, PATH)
        wanted = configuration(
            options.configuration,
            options.target,
            material.ca_bundle,
            failure_policy=options.failure_policy,
            timeout_seconds=options.timeout_seconds,
            namespaces=options.namespaces,
            selector=options.selector,
        )
        await register(api, wanted)
        self.ready.set()
