"""Checks of ModelProvider declarations and of the Gateway's typed model and session settings.

- provider ids are what OpenClaw normalizes them to (lower case) and unique after that;
- a provider that is not one of OpenClaw's built-in overlays must declare ``baseUrl`` and
  ``models`` (OpenClaw's ``ModelProvidersSchema`` refuses it otherwise);
- literal credentials get a warning pointing at ``valueFrom``;
- ``Gateway.spec.config`` may not set what a typed field covers (``models``, ``session``);
- ``session.mainKey`` is accepted but ignored by OpenClaw.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from clawplane.diagnostics import Diagnostic, Severity
from clawplane.models import PROVIDER_ID_PATTERN, Gateway, ModelProvider, ValueFrom, secret_fields
from clawplane.naming import is_sensitive_key
from clawplane.validation.modelcatalog import builtin_providers
from clawplane.validation.result import LoadedResource

E, W = Severity.ERROR, Severity.WARNING
_PROVIDER_ID_RE = re.compile(PROVIDER_ID_PATTERN)
VALUE_FROM_HINT = "use valueFrom: {env: NAME} (or file:, or secretKeyRef: in Kubernetes) instead of a literal"
# spec.config keys that typed fields render, and where to set them instead.
_TYPED_CONFIG: dict[str, str] = {
    "session": "set it in the Gateway's spec.session",
    "models": "declare providers as ModelProvider resources and set spec.models (mode, catalogRefresh)",
}


def check_providers(resources: list[LoadedResource]) -> Iterator[Diagnostic]:
    """Every ModelProvider problem, plus the Gateway's typed-key conflicts."""
    seen: dict[str, LoadedResource] = {}
    overlays = builtin_providers()
    for item in resources:
        res = item.resource
        if isinstance(res, Gateway):
            yield from _gateway(item, res)
            continue
        if not isinstance(res, ModelProvider):
            continue
        name = res.name
        if not _PROVIDER_ID_RE.match(name):
            yield item.diagnostic(
                E,
                "provider.invalid-id",
                f"{name!r} is not a provider id OpenClaw keeps as written (it lower-cases ids)",
                ("metadata", "name"),
                hint=f"use {name.lower()!r}" if _PROVIDER_ID_RE.match(name.lower()) else PROVIDER_ID_PATTERN,
            )
        first = seen.setdefault(name.lower(), item)
        if first is not item:
            yield item.diagnostic(
                E,
                "provider.duplicate-id",
                f"provider ids are case-insensitive: {name!r} and {first.resource.name!r} collide",
                ("metadata", "name"),
                hint="rename or merge one of them",
            )
        if not overlays.is_overlay(name):
            for field, key in (("base_url", "baseUrl"), ("models", "models")):
                if getattr(res.spec, field) is None:
                    yield item.diagnostic(
                        E,
                        f"provider.custom-needs-{'base-url' if key == 'baseUrl' else 'models'}",
                        f"{name!r} is not one of OpenClaw's built-in providers, so it must declare {key}",
                        ("spec",),
                        hint=f"add spec.{key}, or name the resource after a built-in provider to overlay it",
                    )
        yield from _literal_credentials(item, res)


def _literal_credentials(item: LoadedResource, res: ModelProvider) -> Iterator[Diagnostic]:
    for path, key, value in secret_fields(res.spec):
        if isinstance(value, ValueFrom):
            continue
        # Credentials are secret whatever their name; headers only when the name says so.
        credential = path[0] == "apiKey" or path[-1] in ("token", "value", "key", "passphrase")
        if credential or is_sensitive_key(key):
            text = str(value)
            if text.strip() and not text.startswith("$"):
                where = ".".join(map(str, path))
                yield item.diagnostic(
                    W,
                    "secret.literal",
                    f"{where} holds a literal secret",
                    ("spec", *path),
                    hint=VALUE_FROM_HINT,
                )


def _gateway(item: LoadedResource, res: Gateway) -> Iterator[Diagnostic]:
    raw: dict[str, Any] = res.spec.config
    for key, hint in _TYPED_CONFIG.items():
        if key in raw:
            yield item.diagnostic(
                E,
                "gateway.config-typed-key",
                f"spec.config.{key} is covered by typed fields and is refused here",
                ("spec", "config", key),
                key=True,
                hint=hint,
            )
    if res.spec.session is not None and res.spec.session.main_key is not None:
        yield item.diagnostic(
            W,
            "session.main-key-ignored",
            "session.mainKey is accepted but ignored by OpenClaw (the main session is always 'main')",
            ("spec", "session", "mainKey"),
            key=True,
            hint="remove it",
        )
