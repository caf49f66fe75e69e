"""OpenClaw's ``models`` and ``session`` → ModelProvider resources and the Gateway's typed fields.

``models.mode`` and ``models.catalogRefresh`` become the Gateway's ``spec.models``; each
``models.providers.<id>`` becomes a ModelProvider named after the id, field for field.
Secret-capable values go through ``import_secret``: env and single-value file SecretRefs
(and whole ``${VAR}`` strings) become ``valueFrom``; a literal credential is kept with a
warning pointing at ``valueFrom``. ``session`` becomes ``spec.session`` as written. These
sections are fully typed, so nothing of them can be carried as raw config: a value that
depends on ``${VAR}`` substitution outside a secret field, or a provider id clawplane
cannot name a resource after, is reported as not imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from pydantic import BaseModel

from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.values import import_secret, import_string
from clawplane.models import NAME_RE, ModelProviderSpec, ValueFrom, admits_reference

_LOST = object()
"""A value that could not be imported (already reported)."""


def import_models(
    models: Mapping[str, Any], report: ImportReport, secret_providers: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``models`` → (the Gateway's ``spec.models``, ModelProvider specs by provider id)."""
    gateway: dict[str, Any] = {}
    providers: dict[str, dict[str, Any]] = {}
    for key, value in models.items():
        if key == "providers" and isinstance(value, Mapping):
            for provider_id, entry in value.items():
                spec = _provider(str(provider_id), entry, report, secret_providers)
                if spec is not None:
                    providers[str(provider_id)] = spec
        else:
            imported = _plain(value, ("models", key), report)
            if imported is not _LOST:
                gateway[key] = imported
    return gateway, providers


def import_session(session: Any, report: ImportReport) -> Any | None:
    """``session`` → the Gateway's ``spec.session`` (every key has a typed field); None if lost."""
    imported = _plain(session, ("session",), report)
    return None if imported is _LOST else imported


def _provider(
    provider_id: str, entry: Any, report: ImportReport, secret_providers: Mapping[str, Any]
) -> dict[str, Any] | None:
    path: ConfigPath = ("models", "providers", provider_id)
    if not isinstance(entry, Mapping):
        report.unmapped(path, "a provider entry must be an object")
        return None
    if not NAME_RE.match(provider_id):
        report.unmapped(path, f"{provider_id!r} cannot be a resource name", "rename the provider")
        return None
    if provider_id != provider_id.lower():
        report.warn(
            "import.provider-id",
            path,
            f"OpenClaw lower-cases provider ids; model references name it {provider_id.lower()!r}",
            "rename the ModelProvider to its lower-case id",
        )
    spec = _Walker(report, secret_providers).object(entry, path, ModelProviderSpec)
    return spec if isinstance(spec, dict) else None


class _Walker:
    """Walks a provider entry beside the ModelProvider model, so secret fields are known by type."""

    def __init__(self, report: ImportReport, secret_providers: Mapping[str, Any]) -> None:
        self.report, self.secret_providers = report, secret_providers

    def object(self, value: Mapping[str, Any], path: ConfigPath, model: type[BaseModel] | None) -> Any:
        fields = (
            {info.alias or name: info.annotation for name, info in model.model_fields.items()}
            if model
            else {}
        )
        out: dict[str, Any] = {}
        for key, item in value.items():
            imported = self.value(item, (*path, key), fields.get(key))
            if imported is not _LOST:
                out[key] = imported
        return out

    def value(self, item: Any, path: ConfigPath, annotation: Any) -> Any:
        key = str(path[-1])
        if annotation is not None and admits_reference(annotation):
            if isinstance(item, Mapping) and not isinstance(item.get("source"), str):
                # A mapping of secret-capable values (headers, env).
                return {
                    name: secret
                    for name, raw in item.items()
                    if (secret := self.secret(raw, str(name), (*path, name), False)) is not _LOST
                }
            return self.secret(item, key, path, True)
        inner = _model_of(annotation)
        if isinstance(item, Mapping):
            return self.object(item, path, inner) if inner else _plain(item, path, self.report)
        if isinstance(item, list):
            found = [self.value(v, (*path, i), _item_type(annotation)) for i, v in enumerate(item)]
            return [v for v in found if v is not _LOST]
        return _plain(item, path, self.report)

    def secret(self, raw: Any, key: str, path: ConfigPath, credential: bool) -> Any:
        imported = import_secret(raw, key, path, self.report, self.secret_providers, credential=credential)
        return _LOST if imported is None else imported


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model a field holds (through Optional/Annotated), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation is not ValueFrom:
        return annotation
    for arg in get_args(annotation):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def _item_type(annotation: Any) -> Any:
    """The element type of a list field (``list[ProviderModel] | None`` → ``ProviderModel``)."""
    if getattr(annotation, "__origin__", None) is list:
        return get_args(annotation)[0]
    for arg in get_args(annotation):
        if getattr(arg, "__origin__", None) is list:
            return get_args(arg)[0]
        found = _item_type(arg)
        if found is not None:
            return found
    return None


def _plain(value: Any, path: ConfigPath, report: ImportReport) -> Any:
    """A value with no secrets: strings must not depend on ``${VAR}`` substitution (``_LOST`` if lost)."""
    if isinstance(value, str):
        text = import_string(value, path, report)
        return _LOST if text is None else text
    if isinstance(value, Mapping):
        found = {str(k): _plain(v, (*path, str(k)), report) for k, v in value.items()}
        return {k: v for k, v in found.items() if v is not _LOST}
    if isinstance(value, list):
        items = [_plain(v, (*path, i), report) for i, v in enumerate(value)]
        return [v for v in items if v is not _LOST]
    return value
