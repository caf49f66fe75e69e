"""Pod specs and pod templates: defaults and validation.

Ported (the rules the objects in this project can hit) from kubernetes/kubernetes
``pkg/apis/core/v1/defaults.go`` (``SetDefaults_PodSpec``, ``_Container``, ``_Probe``, ...)
and ``pkg/apis/core/validation/validation.go`` (``ValidatePodTemplateSpec``,
``validateContainers``, ``validateEnv``, ``ValidateResourceRequirements``, ``validateVolumes``,
``validateProbe``, ``validateContainerPorts``).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from tests.k8s.rules import fielderrors as fe
from tests.k8s.rules import names, quantity
from tests.k8s.rules.fielderrors import FieldError
from tests.k8s.rules.meta import validate_annotations, validate_labels

JSON = dict[str, Any]
VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI",
    "fc", "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk",
    "projected", "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image",
)  # fmt: skip
PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
PROTOCOLS = ["SCTP", "TCP", "UDP"]
STANDARD_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
DEFAULT_MODE = 0o644


# --- defaults ----------------------------------------------------------------------------------


def default_template(template: JSON) -> None:
    """``SetDefaults_PodTemplateSpec`` and everything below it."""
    default_pod_spec(template.setdefault("spec", {}))


def default_pod_spec(spec: JSON) -> None:
    """``SetDefaults_PodSpec`` with its containers, probes, ports and volumes."""
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        _default_container(container)
    for volume in spec.get("volumes") or []:
        for source in ("secret", "configMap", "projected", "downwardAPI"):
            if isinstance(volume.get(source), dict):
                volume[source].setdefault("defaultMode", DEFAULT_MODE)


def _default_container(c: JSON) -> None:
    image = str(c.get("image") or "")
    tag = image.rsplit("/", 1)[-1]
    latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
    c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for port in c.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for env in c.get("env") or []:
        field_ref = (env.get("valueFrom") or {}).get("fieldRef")
        if isinstance(field_ref, dict):
            field_ref.setdefault("apiVersion", "v1")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(key)
        if isinstance(probe, dict):
            probe.setdefault("timeoutSeconds", 1)
            probe.setdefault("periodSeconds", 10)
            probe.setdefault("successThreshold", 1)
            probe.setdefault("failureThreshold", 3)
            if isinstance(probe.get("httpGet"), dict):
                probe["httpGet"].setdefault("scheme", "HTTP")
    resources = c.get("resources") or {}
    for kind in ("limits", "requests"):
        for name, amount in list((resources.get(kind) or {}).items()):
            with contextlib.suppress(quantity.QuantityError):  # reported by validation
                resources[kind][name] = quantity.canonical(amount)


# --- validation --------------------------------------------------------------------------------


def validate_template(template: JSON, path: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec``."""
    meta = template.get("metadata") or {}
    errs = validate_labels(meta.get("labels"), f"{path}.labels")
    errs += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    return errs + validate_pod_spec(template.get("spec") or {}, f"{path}.spec")


def validate_pod_spec(spec: JSON, path: str) -> list[FieldError]:
    """``ValidatePodSpec``: volumes, containers, policies."""
    errs, volumes = _volumes(spec.get("volumes") or [], f"{path}.volumes")
    containers = spec.get("containers") or []
    if not containers:
        errs.append(fe.required(f"{path}.containers"))
    errs += _containers(containers, volumes, f"{path}.containers")
    errs += _containers(spec.get("initContainers") or [], volumes, f"{path}.initContainers", init=True)
    policy = spec.get("restartPolicy") or ""
    if policy not in ("Always", "OnFailure", "Never"):
        errs.append(fe.not_supported(f"{path}.restartPolicy", policy, ["Always", "OnFailure", "Never"]))
    dns = spec.get("dnsPolicy") or ""
    if dns not in ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"):
        errs.append(fe.not_supported(f"{path}.dnsPolicy", dns, ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]))
    account = spec.get("serviceAccountName") or ""
    if account:
        errs += fe.each(f"{path}.serviceAccountName", account, names.is_dns1123_subdomain(account))
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is not None and grace < 0:
        errs.append(fe.invalid(f"{path}.terminationGracePeriodSeconds", grace, "must be greater than or equal to 0"))
    errs += _pod_security(spec.get("securityContext") or {}, f"{path}.securityContext")
    return errs


def _unique_label(name: str, path: str, seen: set[str]) -> list[FieldError]:
    """A required DNS-1123 label, unique among its siblings (container and volume names)."""
    if not name:
        return [fe.required(path)]
    errs = fe.each(path, name, names.is_dns1123_label(name))
    if name in seen:
        errs.append(fe.duplicate(path, name))
    seen.add(name)
    return errs


def _volumes(volumes: list[JSON], path: str) -> tuple[list[FieldError], set[str]]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, vol in enumerate(volumes):
        here = f"{path}[{i}]"
        errs += _unique_label(vol.get("name") or "", f"{here}.name", seen)
        sources = [s for s in VOLUME_SOURCES if vol.get(s) is not None]
        if not sources:
            errs.append(fe.required(here, "must specify a volume type"))
        elif len(sources) > 1:
            errs.append(fe.forbidden(f"{here}.{sources[1]}", "may not specify more than 1 volume type"))
        if isinstance(vol.get("secret"), dict):
            errs += _key_to_path_source(vol["secret"], f"{here}.secret", "secretName")
        if isinstance(vol.get("configMap"), dict):
            errs += _key_to_path_source(vol["configMap"], f"{here}.configMap", "name")
        if isinstance(vol.get("projected"), dict):
            errs += _projected(vol["projected"], f"{here}.projected")
    return errs, seen


def _mode(mode: Any, path: str) -> list[FieldError]:
    if mode is not None and not 0 <= int(mode) <= 0o777:
        return [fe.invalid(path, mode, "must be a number between 0 and 0777 (octal), both inclusive")]
    return []


def _key_to_path_source(src: JSON, path: str, name_key: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if name_key == "secretName" and not src.get("secretName"):
        errs.append(fe.required(f"{path}.secretName"))
    if name_key == "name" and not src.get("name"):
        errs.append(fe.required(f"{path}.name"))
    errs += _mode(src.get("defaultMode"), f"{path}.defaultMode")
    for j, item in enumerate(src.get("items") or []):
        here = f"{path}.items[{j}]"
        key = item.get("key") or ""
        if not key:
            errs.append(fe.required(f"{here}.key"))
        else:
            errs += fe.each(f"{here}.key", key, names.is_config_map_key(key))
        errs += _local_path(item.get("path") or "", f"{here}.path")
        errs += _mode(item.get("mode"), f"{here}.mode")
    return errs


def _local_path(value: str, path: str) -> list[FieldError]:
    """``validateLocalDescendingPath``."""
    if not value:
        return [fe.required(path)]
    errs: list[FieldError] = []
    if value.startswith("/"):
        errs.append(fe.invalid(path, value, "must be a relative path"))
    if ".." in value.split("/"):
        errs.append(fe.invalid(path, value, "must not contain '..'"))
    return errs


def _projected(src: JSON, path: str) -> list[FieldError]:
    errs = _mode(src.get("defaultMode"), f"{path}.defaultMode")
    targets: set[str] = set()
    for i, source in enumerate(src.get("sources") or []):
        here = f"{path}.sources[{i}]"
        kinds = [k for k in ("secret", "configMap", "downwardAPI", "serviceAccountToken", "clusterTrustBundle") if source.get(k) is not None]
        if len(kinds) != 1:
            errs.append(fe.forbidden(here, "may not specify more than 1 volume type per source") if kinds else fe.required(here, "must specify one volume type"))
            continue
        body = source[kinds[0]]
        for j, item in enumerate(body.get("items") or []):
            target = item.get("path") or ""
            errs += _local_path(target, f"{here}.{kinds[0]}.items[{j}].path")
            if target in targets:
                errs.append(fe.invalid(f"{here}.{kinds[0]}.items[{j}].path", target, "conflicting duplicate paths"))
            targets.add(target)
        if kinds[0] in ("secret", "configMap") and not body.get("name"):
            errs.append(fe.required(f"{here}.{kinds[0]}.name"))
    return errs


def _containers(containers: list[JSON], volumes: set[str], path: str, *, init: bool = False) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        here = f"{path}[{i}]"
        errs += _unique_label(c.get("name") or "", f"{here}.name", seen)
        image = c.get("image") or ""
        if not image:
            errs.append(fe.required(f"{here}.image"))
        elif image != image.strip():
            errs.append(fe.invalid(f"{here}.image", image, "must not have leading or trailing whitespace"))
        errs += _ports(c.get("ports") or [], f"{here}.ports")
        errs += _env(c.get("env") or [], f"{here}.env")
        errs += _resources(c.get("resources") or {}, f"{here}.resources")
        errs += _mounts(c.get("volumeMounts") or [], volumes, f"{here}.volumeMounts")
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            if isinstance(c.get(probe), dict):
                if init:
                    errs.append(fe.forbidden(f"{here}.{probe}", "may not be set for init containers without restartPolicy=Always"))
                errs += _probe(c[probe], f"{here}.{probe}", must_succeed_once=probe != "readinessProbe")
        pull = c.get("imagePullPolicy") or ""
        if pull not in ("Always", "IfNotPresent", "Never"):
            errs.append(fe.not_supported(f"{here}.imagePullPolicy", pull, ["Always", "IfNotPresent", "Never"]))
        errs += _container_security(c.get("securityContext") or {}, f"{here}.securityContext")
    return errs


def _ports(ports: list[JSON], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        here = f"{path}[{i}]"
        name = port.get("name") or ""
        if name:
            errs += fe.each(f"{here}.name", name, names.is_port_name(name))
            if name in seen:
                errs.append(fe.duplicate(f"{here}.name", name))
            seen.add(name)
        number = port.get("containerPort")
        if not number:
            errs.append(fe.required(f"{here}.containerPort"))
        else:
            errs += fe.each(f"{here}.containerPort", number, names.is_port_number(int(number)))
        if port.get("hostPort"):
            errs += fe.each(f"{here}.hostPort", port["hostPort"], names.is_port_number(int(port["hostPort"])))
        protocol = port.get("protocol") or ""
        if protocol not in PROTOCOLS:
            errs.append(fe.not_supported(f"{here}.protocol", protocol, PROTOCOLS))
    return errs


def _env(env: list[JSON], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, var in enumerate(env):
        here = f"{path}[{i}]"
        name = var.get("name") or ""
        if not name:
            errs.append(fe.required(f"{here}.name"))
        else:
            errs += fe.each(f"{here}.name", name, names.is_relaxed_env_var_name(name))
        value_from = var.get("valueFrom")
        if value_from is None:
            continue
        sources = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef") if value_from.get(k) is not None]
        if var.get("value"):
            errs.append(fe.invalid(f"{here}.valueFrom", "", "may not be specified when `value` is not empty"))
        if not sources:
            errs.append(
                fe.invalid(
                    f"{here}.valueFrom", "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
                )
            )
        elif len(sources) > 1:
            errs.append(fe.invalid(f"{here}.valueFrom", "", "may not have more than one field specified at a time"))
        for kind in ("secretKeyRef", "configMapKeyRef"):
            ref = value_from.get(kind)
            if not isinstance(ref, dict):
                continue
            if not ref.get("name"):
                errs.append(fe.required(f"{here}.valueFrom.{kind}.name"))
            key = ref.get("key") or ""
            if not key:
                errs.append(fe.required(f"{here}.valueFrom.{kind}.key"))
            else:
                errs += fe.each(f"{here}.valueFrom.{kind}.key", key, names.is_config_map_key(key))
        field_ref = value_from.get("fieldRef")
        if isinstance(field_ref, dict) and not field_ref.get("fieldPath"):
            errs.append(fe.required(f"{here}.valueFrom.fieldRef.fieldPath"))
    return errs


def _resource_name(name: str) -> bool:
    if name in STANDARD_CONTAINER_RESOURCES or name.startswith("hugepages-"):
        return True
    return "/" in name and not names.is_qualified_name(name) and not name.startswith("kubernetes.io/")


def _resources(resources: JSON, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    parsed: dict[str, dict[str, Any]] = {"limits": {}, "requests": {}}
    for kind in ("limits", "requests"):
        for name, amount in (resources.get(kind) or {}).items():
            here = f"{path}.{kind}[{name}]"
            if not _resource_name(name):
                errs.append(fe.invalid(here, name, "must be a standard resource type or fully qualified"))
                continue
            try:
                value = quantity.value(amount)
            except quantity.QuantityError as exc:
                errs.append(fe.invalid(here, str(amount), str(exc)))
                continue
            if value < 0:
                errs.append(fe.invalid(here, str(amount), "must be greater than or equal to 0"))
            parsed[kind][name] = (value, str(amount))
    for name, (value, text) in parsed["requests"].items():
        limit = parsed["limits"].get(name)
        if limit is not None and value > limit[0]:
            errs.append(
                fe.invalid(f"{path}.requests", text, f"must be less than or equal to {name} limit of {limit[1]}")
            )
    return errs


def _mounts(mounts: list[JSON], volumes: set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    paths: set[str] = set()
    for i, mount in enumerate(mounts):
        here = f"{path}[{i}]"
        name = mount.get("name") or ""
        if not name:
            errs.append(fe.required(f"{here}.name"))
        elif name not in volumes:
            errs.append(fe.not_found(f"{here}.name", name))
        target = mount.get("mountPath") or ""
        if not target:
            errs.append(fe.required(f"{here}.mountPath"))
        elif target in paths:
            errs.append(fe.invalid(f"{here}.mountPath", target, "must be unique"))
        paths.add(target)
        sub = mount.get("subPath") or ""
        if sub:
            errs += _local_path(sub, f"{here}.subPath")
    return errs


def _probe(probe: JSON, path: str, *, must_succeed_once: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    handlers = [h for h in PROBE_HANDLERS if probe.get(h) is not None]
    if not handlers:
        errs.append(fe.required(path, "must specify a handler type"))
    elif len(handlers) > 1:
        errs.append(fe.forbidden(f"{path}.{handlers[1]}", "may not specify more than 1 handler type"))
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        value = probe.get(key)
        if value is not None and value < 0:
            errs.append(fe.invalid(f"{path}.{key}", value, "must be greater than or equal to 0"))
    if must_succeed_once and probe.get("successThreshold") not in (None, 1):
        errs.append(fe.invalid(f"{path}.successThreshold", probe["successThreshold"], "must be 1"))
    http = probe.get("httpGet")
    if isinstance(http, dict):
        errs += _port_or_name(http.get("port"), f"{path}.httpGet.port")
        scheme = http.get("scheme") or ""
        if scheme not in ("HTTP", "HTTPS"):
            errs.append(fe.not_supported(f"{path}.httpGet.scheme", scheme, ["HTTP", "HTTPS"]))
    tcp = probe.get("tcpSocket")
    if isinstance(tcp, dict):
        errs += _port_or_name(tcp.get("port"), f"{path}.tcpSocket.port")
    return errs


def _port_or_name(port: Any, path: str) -> list[FieldError]:
    if port is None or port == "":
        return [fe.required(path)]
    if isinstance(port, int):
        return fe.each(path, port, names.is_port_number(port))
    if re.fullmatch(r"[0-9]+", str(port)):
        return fe.each(path, port, names.is_port_number(int(port)))
    return fe.each(path, port, names.is_port_name(str(port)))


def _pod_security(ctx: JSON, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("runAsUser", "runAsGroup", "fsGroup"):
        value = ctx.get(key)
        if value is not None and not 0 <= value <= 2**31 - 1:
            errs.append(fe.invalid(f"{path}.{key}", value, "must be between 0 and 2147483647, inclusive"))
    return errs


def _container_security(ctx: JSON, path: str) -> list[FieldError]:
    errs = _pod_security(ctx, path)
    if ctx.get("privileged") and ctx.get("allowPrivilegeEscalation") is False:
        errs.append(fe.invalid(path, ctx, "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"))
    seccomp = ctx.get("seccompProfile") or {}
    if seccomp and seccomp.get("type") not in ("RuntimeDefault", "Unconfined", "Localhost"):
        errs.append(fe.not_supported(f"{path}.seccompProfile.type", seccomp.get("type"), ["Localhost", "RuntimeDefault", "Unconfined"]))
    return errs
