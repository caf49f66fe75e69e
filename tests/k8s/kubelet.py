"""A kubelet and Deployment controller for the emulator: clawplane's server pods run as real processes.

For every Deployment labelled ``app.kubernetes.io/managed-by: clawplane`` it keeps one pod
running the container's command on this machine, with the pod's environment (literals and
``secretKeyRef`` values read from the emulator's Secrets) and volumes (``emptyDir``,
``secret``, ``configMap`` and ``projected`` sources written to a pod folder, mount paths in the
arguments and environment mapped onto it). It probes the container's ``readinessProbe`` and
writes what a real cluster would: a Pod (owned by the Deployment, restart counts, Ready) and
the Deployment's status (observedGeneration, replicas, updated/ready/available). A new pod
template rolls the pod; a crashed process is restarted with backoff.

What cannot be the same here: processes listen on 127.0.0.1 on a free port (``--host``/``--port``
in the arguments are rewritten), and ``resolve(url)`` maps a Service URL
(``http://NAME.NAMESPACE.svc:PORT/...``) to the ready pod behind it, which is how tests give
the operator a route to in-cluster Services. The image is this machine: ``clawplane`` runs this
checkout's ``python -m clawplane``; ``uvx PACKAGE ARGS`` runs the package's command installed
beside this Python (the image's uvx with a warm cache, since there is no network here; a
package that is not installed fails the pod, naming it); other commands run from PATH.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import hashlib
import json
import os
import re
import secrets
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import kmock
from tests.k8s import objects as o
from tests.k8s.api import Emulator
from tests.k8s.wire import Target

from clawplane._utils.identity import ProcessIdentity, identify

JSON = dict[str, Any]
DEPLOYMENTS = kmock.resource("apps", "v1", "deployments")
PODS = kmock.resource("", "v1", "pods")
SERVICES = kmock.resource("", "v1", "services")
SECRETS = kmock.resource("", "v1", "secrets")
CONFIGMAPS = kmock.resource("", "v1", "configmaps")
MANAGED = ("app.kubernetes.io/managed-by", "clawplane")
PROBE_INTERVAL = 0.1
"""Seconds between readiness probes; a real kubelet uses periodSeconds, tests cannot wait that long."""
_URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")
_SERVICE_URL = re.compile(r"^(https?)://([a-z0-9-]+)\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?(?::(\d+))?(/.*)?$")


class ConfigError(Exception):
    """The pod cannot start (what a kubelet reports as CreateContainerConfigError)."""


class Store(Protocol):
    """Where the kubelet reads Deployments, Services, Secrets and ConfigMaps and writes Pods and statuses."""

    def items(self, res: kmock.resource) -> list[JSON]:
        """Every live object of ``res`` in every namespace."""

    def live(self, res: kmock.resource, namespace: str, name: str) -> JSON | None:
        """One live object, or None."""

    def create(self, res: kmock.resource, namespace: str, body: JSON) -> None:
        """Create an object."""

    def delete(self, res: kmock.resource, namespace: str, name: str) -> None:
        """Delete an object (gone already is fine)."""

    def set_status(self, res: kmock.resource, current: JSON, status: JSON) -> None:
        """Write ``status`` over ``current``'s (its /status subresource)."""

    async def next_change(self, timeout: float) -> None:
        """Return after the next change (or ``timeout``)."""

    def wake(self) -> None:
        """End a ``next_change`` wait now."""


class EmulatorStore:
    """The emulator's object store, read and written in place (on the emulator's loop)."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu

    def _target(self, res: kmock.resource, namespace: str | None, name: str | None = None, sub: str | None = None) -> Target:
        return Target(res, self.emu.resources[res], namespace, name, sub)

    def items(self, res: kmock.resource) -> list[JSON]:
        return self.emu._live_items(self._target(res, None))

    def live(self, res: kmock.resource, namespace: str, name: str) -> JSON | None:
        return self.emu._live((res, namespace, name))

    def create(self, res: kmock.resource, namespace: str, body: JSON) -> None:
        self.emu._create(self._target(res, namespace), body)

    def delete(self, res: kmock.resource, namespace: str, name: str) -> None:
        live = self.emu._live((res, namespace, name))
        if live is not None:
            self.emu._delete_object(self._target(res, namespace, name), name, live)

    def set_status(self, res: kmock.resource, current: JSON, status: JSON) -> None:
        meta = current["metadata"]
        new = copy.deepcopy(current)
        new["status"] = status
        self.emu._update(self._target(res, meta["namespace"], meta["name"], "status"), current, new)

    async def next_change(self, timeout: float) -> None:
        await self.emu.next_change(timeout=timeout)

    def wake(self) -> None:
        self.emu._wake()


@dataclass
class _Pod:
    namespace: str
    deployment: str
    name: str
    template_hash: str
    folder: Path
    process: asyncio.subprocess.Process | None = None
    identity: ProcessIdentity | None = None
    """The pod process's identity at start: its group id is signalled only while it still holds it."""
    port: int | None = None
    container_port: int | None = None
    ready: bool = False
    stopped: bool = False
    restarts: int = 0
    reason: str = "ContainerCreating"
    stderr: list[str] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class Kubelet:
    """Runs on the store's event loop (``EmulatorThread.start_kubelet``, ``tests/k8s/real/kubelet.py``)."""

    def __init__(self, store: Store | Emulator, root: Path) -> None:
        self.store: Store = EmulatorStore(store) if isinstance(store, Emulator) else store
        self.root = root
        self.pods: dict[tuple[str, str], _Pod] = {}
        self.routes: dict[tuple[str, str, int], int] = {}
        """(namespace, Service, port) → local port of a ready pod; replaced whole, read from other threads."""
        self._stopping = False
        self._lock = asyncio.Lock()
        """Held by a sync and by stop(): pods are never started while stopping."""

    # --- the loop ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Reconcile pods with Deployments on every store change until cancelled."""
        while not self._stopping:
            await self._sync()
            await self.store.next_change(timeout=1.0)

    async def stop(self) -> None:
        """Stop every pod process (SIGTERM, then SIGKILL) and end ``run``."""
        self._stopping = True
        async with self._lock:
            for pod in list(self.pods.values()):
                await self._kill(pod)
            self.pods.clear()
        self.store.wake()  # run() is waiting for a change; let it see _stopping

    async def _sync(self) -> None:
        async with self._lock:
            if not self._stopping:
                await self._sync_locked()

    async def _sync_locked(self) -> None:
        wanted: dict[tuple[str, str], JSON] = {}
        for dep in self.store.items(DEPLOYMENTS):
            labels = dep["metadata"].get("labels") or {}
            if labels.get(MANAGED[0]) == MANAGED[1] and not dep["metadata"].get("deletionTimestamp"):
                wanted[(dep["metadata"]["namespace"], dep["metadata"]["name"])] = dep
        for key, pod in list(self.pods.items()):
            dep = wanted.get(key)
            if dep is None or _template_hash(dep) != pod.template_hash or int(dep["spec"].get("replicas", 1)) == 0:
                await self._kill(pod)
                self._delete_pod(pod)
                del self.pods[key]
        for key, dep in wanted.items():
            if key not in self.pods and int(dep["spec"].get("replicas", 1)) > 0:
                self.pods[key] = self._new_pod(dep)
                await self._start(self.pods[key], dep)
            elif key in self.pods:
                self._write_status(self.pods[key], dep)  # e.g. a new generation with the same template
        self._publish_routes()

    # --- pods ----------------------------------------------------------------------------------

    def _new_pod(self, dep: JSON) -> _Pod:
        ns, name = dep["metadata"]["namespace"], dep["metadata"]["name"]
        digest = _template_hash(dep)
        pod_name = f"{name}-{digest[:10]}-{''.join(secrets.choice('bcdfghjklmnpqrstvwxz2456789') for _ in range(5))}"
        folder = self.root / ns / pod_name
        return _Pod(ns, name, pod_name, digest, folder)

    async def _start(self, pod: _Pod, dep: JSON) -> None:
        template = dep["spec"]["template"]
        self._write_pod(pod, dep)
        try:
            argv, env, cwd = self._container(pod, template)
        except ConfigError as exc:
            pod.reason = "CreateContainerConfigError"
            pod.stderr.append(str(exc))
            self._write_status(pod, dep)
            return
        pod.process = await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        pod.identity = identify(pod.process.pid)
        pod.reason = "Running"
        pod.tasks = [asyncio.create_task(self._watch_process(pod, template))]

    def _container(self, pod: _Pod, template: JSON) -> tuple[list[str], dict[str, str], str]:
        spec = template["spec"]
        (container,) = spec["containers"][:1]
        mounts = self._volumes(pod, spec, container)
        command = list(container.get("command") or ["clawplane"]) + list(container.get("args") or [])
        argv = [_mapped(arg, mounts) for arg in command]
        argv = _image_command(_loopback(argv))
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        for var in container.get("env") or []:
            value = self._env_value(pod.namespace, var)
            if value is not None:  # an optional Secret key that is not there: unset, as a kubelet leaves it
                env[var["name"]] = _mapped(value, mounts)
        pod.container_port = next((int(p["containerPort"]) for p in container.get("ports") or []), None)
        workdir = container.get("workingDir")
        cwd = _mapped(workdir, mounts) if workdir else str(pod.folder)
        Path(cwd).mkdir(parents=True, exist_ok=True)
        return argv, env, cwd

    def _env_value(self, namespace: str, var: JSON) -> str | None:
        if "value" in var:
            return str(var["value"])
        ref = (var.get("valueFrom") or {}).get("secretKeyRef")
        if ref is None:
            raise ConfigError(f"env {var['name']}: only value and secretKeyRef are run here")
        if ref.get("optional") and ref["key"] not in (self.store.live(SECRETS, namespace, ref["name"]) or {}).get(
            "data", {}
        ):
            return None
        data = self._secret_data(namespace, ref["name"])
        if ref["key"] not in data:
            raise ConfigError(f'couldn\'t find key {ref["key"]} in Secret {namespace}/{ref["name"]}')
        return data[ref["key"]].decode("utf-8")

    def _secret_data(self, namespace: str, name: str) -> dict[str, bytes]:
        secret = self.store.live(SECRETS, namespace, name)
        if secret is None:
            raise ConfigError(f'secret "{name}" not found')
        return {k: base64.b64decode(v) for k, v in (secret.get("data") or {}).items()}

    def _volumes(self, pod: _Pod, spec: JSON, container: JSON) -> list[tuple[str, str]]:
        """Write each mounted volume under the pod folder; returns (mount path, host path), longest first."""
        sources: dict[str, Path] = {}
        for vol in spec.get("volumes") or []:
            target = pod.folder / "volumes" / vol["name"]
            target.mkdir(parents=True, exist_ok=True)
            mode = 0o644
            files: dict[str, tuple[bytes, int]] = {}
            if "secret" in vol:
                mode = int(vol["secret"].get("defaultMode", 0o644))
                files = self._items(self._secret_data(pod.namespace, vol["secret"]["secretName"]), vol["secret"], mode)
            elif "configMap" in vol:
                mode = int(vol["configMap"].get("defaultMode", 0o644))
                files = self._items(self._config_map_data(pod.namespace, vol["configMap"]["name"]), vol["configMap"], mode)
            elif "projected" in vol:
                mode = int(vol["projected"].get("defaultMode", 0o644))
                for source in vol["projected"].get("sources") or []:
                    if "secret" in source:
                        data = self._secret_data(pod.namespace, source["secret"]["name"])
                        files.update(self._items(data, source["secret"], mode))
                    elif "configMap" in source:
                        data = self._config_map_data(pod.namespace, source["configMap"]["name"])
                        files.update(self._items(data, source["configMap"], mode))
            for rel, (content, file_mode) in files.items():
                path = target / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
                path.chmod(file_mode)
            sources[vol["name"]] = target
        mounts = [(m["mountPath"], str(sources[m["name"]])) for m in container.get("volumeMounts") or []]
        return sorted(mounts, key=lambda m: -len(m[0]))

    def _config_map_data(self, namespace: str, name: str) -> dict[str, bytes]:
        cm = self.store.live(CONFIGMAPS, namespace, name)
        if cm is None:
            raise ConfigError(f'configmap "{name}" not found')
        data = {k: str(v).encode() for k, v in (cm.get("data") or {}).items()}
        data.update({k: base64.b64decode(v) for k, v in (cm.get("binaryData") or {}).items()})
        return data

    @staticmethod
    def _items(data: dict[str, bytes], source: JSON, mode: int) -> dict[str, tuple[bytes, int]]:
        items = source.get("items")
        if not items:
            return {key: (value, mode) for key, value in data.items()}
        out: dict[str, tuple[bytes, int]] = {}
        for item in items:
            if item["key"] not in data:
                raise ConfigError(f"key {item['key']} not found")
            out[item["path"]] = (data[item["key"]], int(item.get("mode", mode)))
        return out

    async def _watch_process(self, pod: _Pod, template: JSON) -> None:
        """Read stderr (the port comes from the listening line), probe readiness, restart on exit."""
        assert pod.process is not None and pod.process.stderr is not None
        probe = asyncio.create_task(self._probe(pod, template))
        try:
            async for raw in pod.process.stderr:
                line = raw.decode("utf-8", "replace").rstrip()
                pod.stderr = [*pod.stderr[-200:], line]
                match = _URL.search(line)
                if match and pod.port is None:
                    pod.port = int(match.group(1))
            await pod.process.wait()
        finally:
            probe.cancel()
        if pod.stopped or self._stopping:
            return
        pod.ready, pod.port = False, None
        pod.restarts += 1
        pod.reason = "CrashLoopBackOff"
        dep = self.store.live(DEPLOYMENTS, pod.namespace, pod.deployment)
        if dep is None:
            return
        self._write_status(pod, dep)
        self._publish_routes()
        await asyncio.sleep(min(5.0, 0.2 * 2**pod.restarts))  # restart backoff, as a kubelet does
        async with self._lock:
            if not pod.stopped and not self._stopping:
                await self._start(pod, dep)

    async def _probe(self, pod: _Pod, template: JSON) -> None:
        container = template["spec"]["containers"][0]
        http = (container.get("readinessProbe") or {}).get("httpGet") or {}
        path = http.get("path", "/")
        async with aiohttp.ClientSession() as session:
            while True:
                ready = False
                if pod.port is not None:
                    with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                        async with session.get(
                            f"http://127.0.0.1:{pod.port}{path}", timeout=aiohttp.ClientTimeout(total=1)
                        ) as resp:
                            ready = 200 <= resp.status < 400
                if ready != pod.ready:
                    pod.ready = ready
                    dep = self.store.live(DEPLOYMENTS, pod.namespace, pod.deployment)
                    if dep is not None:
                        self._write_status(pod, dep)
                    self._publish_routes()
                await asyncio.sleep(PROBE_INTERVAL)  # the kubelet's probe period

    async def _kill(self, pod: _Pod) -> None:
        """Stop the pod's process group, then let its watcher read stderr to the end (closing the pipes)."""
        pod.stopped = True
        proc = pod.process
        if proc is not None and proc.returncode is None:
            # asyncio's watcher thread may have reaped it already (returncode comes later): then
            # its pid, and so the group id, may be another process's (pids wrap at 32768 here).
            if pod.identity is not None and identify(proc.pid) == pod.identity:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                if pod.identity is not None and identify(proc.pid) == pod.identity:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        for task in pod.tasks:
            try:
                await asyncio.wait_for(task, 10)
            except TimeoutError:
                task.cancel()
        pod.ready = False

    # --- objects ---------------------------------------------------------------------------------

    def _write_pod(self, pod: _Pod, dep: JSON) -> None:
        template = copy.deepcopy(dep["spec"]["template"])
        meta = template.get("metadata") or {}
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod.name,
                "namespace": pod.namespace,
                "labels": {**(meta.get("labels") or {}), "pod-template-hash": pod.template_hash[:10]},
                "annotations": meta.get("annotations") or {},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": pod.deployment,
                        "uid": dep["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": template["spec"],
        }
        if self.store.live(PODS, pod.namespace, pod.name) is None:
            self.store.create(PODS, pod.namespace, body)

    def _delete_pod(self, pod: _Pod) -> None:
        self.store.delete(PODS, pod.namespace, pod.name)

    def _write_status(self, pod: _Pod, dep: JSON) -> None:
        """Pod status (ready, restarts, waiting reason) and the Deployment's replica counts."""
        live_pod = self.store.live(PODS, pod.namespace, pod.name)
        if live_pod is not None:
            state: JSON = {"running": {"startedAt": o.now_rfc3339()}} if pod.reason == "Running" else {"waiting": {"reason": pod.reason}}
            status = {
                "phase": "Running" if pod.reason in ("Running", "CrashLoopBackOff") else "Pending",
                "conditions": [{"type": "Ready", "status": "True" if pod.ready else "False"}],
                "containerStatuses": [
                    {
                        "name": dep["spec"]["template"]["spec"]["containers"][0]["name"],
                        "ready": pod.ready,
                        "restartCount": pod.restarts,
                        "image": dep["spec"]["template"]["spec"]["containers"][0]["image"],
                        "imageID": "",
                        "started": pod.reason == "Running",
                        "state": state,
                    }
                ],
            }
            self._set_status(PODS, live_pod, status)
        generation = int(dep["metadata"].get("generation") or 1)
        ready = 1 if pod.ready else 0
        status = {
            "observedGeneration": generation,
            "replicas": 1,
            "updatedReplicas": 1 if pod.template_hash == _template_hash(dep) else 0,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "unavailableReplicas": 1 - ready,
            "conditions": [
                {"type": "Available", "status": "True" if ready else "False", "reason": "MinimumReplicasAvailable" if ready else "MinimumReplicasUnavailable"}
            ],
        }
        self._set_status(DEPLOYMENTS, dep, status)

    def _set_status(self, res: kmock.resource, obj: JSON, status: JSON) -> None:
        meta = obj["metadata"]
        current = self.store.live(res, meta["namespace"], meta["name"])
        if current is None or current.get("status") == status:
            return
        self.store.set_status(res, current, status)

    # --- Services ----------------------------------------------------------------------------------

    def _publish_routes(self) -> None:
        routes: dict[tuple[str, str, int], int] = {}
        ready = [p for p in self.pods.values() if p.ready and p.port is not None]
        for svc in self.store.items(SERVICES):
            selector = (svc.get("spec") or {}).get("selector") or {}
            ns = svc["metadata"]["namespace"]
            for pod in ready:
                live = self.store.live(PODS, ns, pod.name) if pod.namespace == ns else None
                labels = ((live or {}).get("metadata") or {}).get("labels") or {}
                if live is None or not selector or any(labels.get(k) != v for k, v in selector.items()):
                    continue
                for port in svc["spec"].get("ports") or []:
                    target = port.get("targetPort", port["port"])
                    if target == pod.container_port or isinstance(target, str):
                        assert pod.port is not None
                        routes[(ns, svc["metadata"]["name"], int(port["port"]))] = pod.port
        self.routes = routes

    def resolve(self, url: str) -> str | None:
        """The local URL of the ready pod behind a Service URL, or None (no such Service or no ready pod)."""
        match = _SERVICE_URL.match(url)
        if match is None:
            return None
        scheme, name, namespace, port, rest = match.groups()
        local = self.routes.get((namespace, name, int(port or 80)))
        return None if local is None else f"{scheme}://127.0.0.1:{local}{rest or ''}"

    def logs(self, namespace: str, deployment: str) -> str:
        """The stderr of a Deployment's pod (for failure messages)."""
        pod = self.pods.get((namespace, deployment))
        return "\n".join(pod.stderr) if pod else ""


def _image_command(argv: list[str]) -> list[str]:
    """The container's argv as this machine runs it (see the module docstring)."""
    if argv[0] == "clawplane":
        argv = [sys.executable, "-m", "clawplane", *argv[1:]]
    try:
        sep = argv.index("--")
    except ValueError:
        return argv
    server = argv[sep + 1 :]
    if server and server[0] == "uvx":
        args = server[1:]
        package = args[1] if args[:1] == ["--from"] and len(args) > 2 else (args[0] if args else "")
        tool = args[2] if args[:1] == ["--from"] and len(args) > 2 else package
        rest = args[3:] if args[:1] == ["--from"] else args[1:]
        local = Path(sys.executable).parent / tool
        if not local.is_file():
            raise ConfigError(f"uvx {package}: not installed in the test image (pip install {package})")
        server = [str(local), *rest]
    return [*argv[: sep + 1], *server]


def _template_hash(dep: JSON) -> str:
    return hashlib.sha256(json.dumps(dep["spec"]["template"], sort_keys=True).encode()).hexdigest()


# The "image" these pods run is this checkout and its interpreter at their host paths, so
# those paths are image content, never under a volume: a clone in /tmp stays reachable although
# bridge pods mount an emptyDir at /tmp (in a real image the server files live outside it).
_IMAGE = tuple(str(p) for p in (Path(__file__).resolve().parents[2], Path(sys.prefix).resolve()))


def _in_image(value: str) -> bool:
    return any(value == root or value.startswith(root + "/") for root in _IMAGE)


def _mapped(value: str, mounts: list[tuple[str, str]]) -> str:
    """A path (or ``--flag=path``) under a mount path, moved onto the host folder of that volume."""
    if _in_image(value.partition("=")[2] if "=" in value else value):
        return value
    for mount, host in mounts:
        if value == mount or value.startswith(mount.rstrip("/") + "/"):
            return host + value[len(mount) :]
        if "=" in value:
            flag, _, rest = value.partition("=")
            if rest == mount or rest.startswith(mount.rstrip("/") + "/"):
                return f"{flag}={host}{rest[len(mount):]}"
    return value


def _loopback(argv: list[str]) -> list[str]:
    """``--host H`` → 127.0.0.1 and ``--port P`` → 0: pods here share one loopback interface."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--host", "--port") and i + 1 < len(argv) and "--" not in argv[:i]:
            out += [arg, "127.0.0.1" if arg == "--host" else "0"]
            i += 2
            continue
        out.append(arg)
        i += 1
    return out
