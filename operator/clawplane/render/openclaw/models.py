"""ModelProvider resources and the Gateway's catalog settings → OpenClaw's ``models`` section.

Every field a provider sets is written under ``models.providers.<id>`` with OpenClaw's
key, and nothing it leaves unset, so OpenClaw's defaults apply to the rest. Secrets follow
``clawplane.render.secretvalues``: on SecretInput fields (``apiKey``, provider and request
``headers``, ``request.auth`` credentials, TLS material) a reference becomes a SecretRef;
model ``headers`` and ``localService.env`` are plain strings in OpenClaw, so an env
reference becomes ``${NAME}`` there. clawplane-only fields (``probe``,
``connectionTimeoutMs``) are not rendered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from clawplane.diagnostics import Diagnostic
from clawplane.models import Gateway, ModelProvider, admits_reference, literal_text
from clawplane.render.openclaw.keys import KeyRenderer
from clawplane.render.paths import absolute_path, base_dir_of
from clawplane.render.secretvalues import SecretRenderer
from clawplane.schema.openclaw import node_at

_CLAWPLANE_ONLY = frozenset({"probe", "connection_timeout_ms"})
# Under these keys OpenClaw takes plain strings, not SecretRefs.
_PLAIN_STRING_SUBTREES = frozenset({"models", "localService"})


def render_models(
    gateway: Gateway | None,
    providers: Sequence[ModelProvider],
    *,
    base_dirs: Mapping[str, Path],
    secrets: SecretRenderer,
    diagnostics: list[Diagnostic],
) -> dict[str, Any]:
    """The ``models`` section: ``mode`` and ``catalogRefresh`` from the Gateway, one entry per provider."""
    out: dict[str, Any] = {}
    if gateway is not None:
        keys = KeyRenderer(secrets=secrets, base_dir=base_dir_of(gateway, base_dirs), resource=gateway.key)
        out.update(keys.part(gateway.spec.models, node_at(("models",)), "models", exclude_unset=True))
    rendered = {
        provider.name: _Walker(provider, base_dir_of(provider, base_dirs), secrets).provider()
        for provider in providers
    }
    if rendered:
        out["providers"] = rendered
    return out


class _Walker:
    """Turns one provider's spec into OpenClaw's form, field by field."""

    def __init__(self, provider: ModelProvider, base_dir: Path, secrets: SecretRenderer) -> None:
        self.resource, self.base_dir, self.secrets = provider, base_dir, secrets

    def provider(self) -> dict[str, Any]:
        out = self._model(self.resource.spec, "spec", secret_input=True, skip=_CLAWPLANE_ONLY)
        # OpenClaw requires a display name; the id is the natural one.
        out["models"] = [{"id": m["id"], "name": m.get("name", m["id"]), **m} for m in out.get("models", [])]
        if not out["models"] and self.resource.spec.models is None:
            del out["models"]
        service = out.get("localService")
        if isinstance(service, dict) and isinstance(service.get("cwd"), str):
            service["cwd"] = absolute_path(service["cwd"], self.base_dir)
        return out

    def _model(
        self, model: BaseModel, path: str, *, secret_input: bool, skip: frozenset[str] = frozenset()
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, info in type(model).model_fields.items():
            value = getattr(model, name)
            if name in skip or name not in model.model_fields_set:
                continue
            if value is None:
                # ``null`` means something only where OpenClaw allows it (e.g. a thinking level not offered).
                if getattr(model, "NULLABLE", False):
                    out[info.alias or name] = None
                continue
            key = info.alias or name
            inner = secret_input and key not in _PLAIN_STRING_SUBTREES
            here = f"{path}.{key}"
            if admits_reference(info.annotation) and isinstance(value, dict):
                rendered: Any = {k: self._secret(v, f"{here}.{k}", inner) for k, v in value.items()}
                rendered = {k: v for k, v in rendered.items() if v is not None}
            elif admits_reference(info.annotation):
                rendered = self._secret(value, here, inner)
            else:
                rendered = self._plain(value, here, inner)
            if rendered is not None:
                out[key] = rendered
        return out

    def _secret(self, value: Any, path: str, secret_input: bool) -> Any:
        rendered = self.secrets.render(
            value, base_dir=self.base_dir, secret_input=secret_input, resource=self.resource.key, path=path
        )
        # Secret-capable fields are strings in OpenClaw's schema.
        return literal_text(rendered) if isinstance(rendered, int | float | bool) else rendered

    def _plain(self, value: Any, path: str, secret_input: bool) -> Any:
        if isinstance(value, BaseModel):
            return self._model(value, path, secret_input=secret_input)
        if isinstance(value, Enum):
            return value.value
        if isinstance(value, list):
            return [self._plain(v, f"{path}[{i}]", secret_input) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: self._plain(v, f"{path}.{k}", secret_input) for k, v in value.items()}
        return value
