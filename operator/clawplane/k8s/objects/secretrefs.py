"""Secrets referenced by custom resources: read on demand, hashed for config hashes, never stored.

A resource's Secret digest covers every ``valueFrom.secretKeyRef`` anywhere in its spec,
so rotating a Secret changes the config hash of exactly the resources that use it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterator
from typing import Any

from clawplane.k8s.api.kubeapi import SECRETS, KubeApi
from clawplane.naming import REDACTED, is_sensitive_key

_SALT = b"clawplane/v1/k8s-secret-digest"


def secret_refs(node: Any) -> Iterator[tuple[str, str]]:
    """Every (secret name, key) referenced under ``node`` as ``valueFrom.secretKeyRef``."""
    if isinstance(node, dict):
        ref = (
            (node.get("valueFrom") or {}).get("secretKeyRef")
            if isinstance(node.get("valueFrom"), dict)
            else None
        )
        if isinstance(ref, dict) and isinstance(ref.get("name"), str) and isinstance(ref.get("key"), str):
            yield ref["name"], ref["key"]
        for value in node.values():
            yield from secret_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from secret_refs(value)


class SecretReader:
    """Reads Secrets of one namespace, each at most once per reconcile pass."""

    def __init__(self, api: KubeApi, namespace: str) -> None:
        self.api = api
        self.namespace = namespace
        self._cache: dict[str, dict[str, Any] | None] = {}
        self.values_read: set[str] = set()
        """Every decoded value handed out this pass (what a redactor must hide)."""

    async def _secret(self, name: str) -> dict[str, Any] | None:
        if name not in self._cache:
            self._cache[name] = await self.api.get(SECRETS, self.namespace, name)
        return self._cache[name]

    async def value(self, name: str, key: str) -> str:
        """The decoded value; LookupError (naming the Secret, never a value) when it is missing."""
        secret = await self._secret(name)
        if secret is None:
            raise LookupError(
                f"Secret {self.namespace}/{name} does not exist; create it or fix secretKeyRef.name"
            )
        data = secret.get("data") or {}
        if key in data:
            try:
                text = base64.b64decode(data[key], validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                raise LookupError(
                    f"Secret {self.namespace}/{name} key {key!r} is not valid UTF-8 text"
                ) from None
            self.values_read.add(text)
            return text
        raise LookupError(
            f"Secret {self.namespace}/{name} has no key {key!r}; add it or fix secretKeyRef.key"
        )

    async def digest(self, spec: Any) -> tuple[str | None, list[str]]:
        """A salted digest of every Secret value ``spec`` references, and the problems found."""
        parts: list[list[str]] = []
        problems: list[str] = []
        for name, key in sorted(set(secret_refs(spec))):
            try:
                text = await self.value(name, key)
                marker = "ok"
            except LookupError as exc:
                text, marker = str(exc), "missing"
                problems.append(str(exc))
            parts.append([name, key, marker, hashlib.sha256(_SALT + text.encode()).hexdigest()])
        if not parts:
            return None, problems
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16], problems


class Redaction:
    """Hides, in text about children, the Secret values read this pass and sensitive literal values."""

    MIN_CHARS = 4
    """Shorter values occur by accident too often to be replaced everywhere."""

    def __init__(self, secrets: SecretReader, crs: list[dict[str, Any]]) -> None:
        self.secrets = secrets
        self.literals = {
            str(value)
            for cr in crs
            for section in ("env", "headers")
            for key, value in ((cr.get("spec") or {}).get(section) or {}).items()
            if isinstance(value, str | int | float) and is_sensitive_key(key)
        }

    def __call__(self, text: str) -> str:
        """``text`` with every known secret replaced by ``<redacted>``."""
        values = sorted((self.secrets.values_read | self.literals), key=len, reverse=True)
        for value in values:
            if len(value) >= self.MIN_CHARS:
                text = text.replace(value, REDACTED)
        return text
