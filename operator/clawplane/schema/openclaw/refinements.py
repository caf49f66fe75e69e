"""OpenClaw's checks that its JSON schema cannot say (zod ``superRefine`` rules), each written out here.

``openclaw config schema`` prints the shape of the config; some of OpenClaw's zod rules look
across fields or into a string's syntax and do not survive into JSON Schema. The ones below
were found by running values drawn from the schema through the real ``openclaw config
validate`` (tests/compat/test_openclaw_schema_differential.py, which keeps checking that
clawplane and OpenClaw agree); each rule cites the message OpenClaw prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from clawplane.models import byte_size, duration_ms
from clawplane.schema.openclaw.check import Issue

PathT = tuple[str | int, ...]
Rule = Callable[[Mapping[str, Any]], Iterator[Issue]]

UNKNOWN_CHANNELS = {"qa-channel": "OpenClaw 2026.9.6 ships no plugin for it and refuses it at load"}
"""Channel ids in OpenClaw's schema that its loader refuses (``unknown channel id``)."""

_EXACT_MODEL = re.compile(r"^[^/*\s]+/[^*\s]+$")


def refine(config: Mapping[str, Any], *, whole: bool = False, secret_refs: bool = True) -> list[Issue]:
    """Every refinement OpenClaw would report for ``config``.

    ``whole``: ``config`` is all of openclaw.json, so rules that look across sections (an agent id
    named in ``agents.defaults`` must be in ``agents.entries``) can tell that something is missing;
    a resource's part, or the Gateway's raw ``spec.config``, is completed by other resources.
    ``secret_refs=False``: the caller knows ``config`` holds no SecretRef object (skips a full walk).
    """
    found: list[Issue] = []
    for rule, sections in RULES:
        if rule is _file_secret_refs and not secret_refs:
            continue
        if sections is None or any(section in config for section in sections):
            found.extend(rule(config))
    if whole:
        for rule in WHOLE_RULES:
            found.extend(rule(config))
    return found


def is_duration(text: str, *, default_unit: str = "ms") -> bool:
    """Whether OpenClaw's ``parseDurationMs`` reads ``text`` (``500ms``, ``30s``, ``5m``, ``1h30m``, …)."""
    try:
        duration_ms(text, default_unit=default_unit)
    except ValueError:
        return False
    return True


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _agents(config: Mapping[str, Any]) -> Iterator[tuple[PathT, Mapping[str, Any]]]:
    """``agents.defaults`` and every ``agents.entries.<id>``, with their paths."""
    agents = _dict(config.get("agents"))
    if "defaults" in agents:
        yield ("agents", "defaults"), _dict(agents.get("defaults"))
    for key, entry in _dict(agents.get("entries")).items():
        yield ("agents", "entries", key), _dict(entry)


def _unknown_channels(config: Mapping[str, Any]) -> Iterator[Issue]:
    for channel, why in UNKNOWN_CHANNELS.items():
        if channel in _dict(config.get("channels")):
            yield Issue(
                ("channels", channel),
                "invalid",
                f"unknown channel id: {channel} ({why})",
                "remove it, or use another channel type",
                True,
            )


def _exact_model_keys(config: Mapping[str, Any]) -> Iterator[Issue]:
    needs = {
        "codeMode": (
            "Code Mode requires an exact provider/model entry; wildcard and bare model keys are not supported"
        ),
        "pickerRuntimes": "Picker runtimes require an exact provider/model entry",
    }
    for path, agent in _agents(config):
        for key, entry in _dict(agent.get("models")).items():
            for field, message in needs.items():
                if field in _dict(entry) and not _EXACT_MODEL.match(str(key)):
                    yield Issue(
                        (*path, "models", key, field),
                        "invalid",
                        message,
                        "key the entry by provider/model, e.g. openai/gpt-5",
                    )


def _model_refs(config: Mapping[str, Any]) -> Iterator[Issue]:
    for path, agent in _agents(config):
        value = agent.get("decisionModel")
        if isinstance(value, str) and value.strip() and "/" not in value:
            yield Issue(
                (*path, "decisionModel"),
                "format",
                "expected provider/model, or an empty string to disable decision models",
                "write it as <provider>/<model>",
            )


def _durations(config: Mapping[str, Any]) -> Iterator[Issue]:
    for path, agent in _agents(config):
        every = _dict(agent.get("heartbeat")).get("every")
        if isinstance(every, str) and not is_duration(every, default_unit="m"):
            yield Issue(
                (*path, "heartbeat", "every"),
                "format",
                "invalid duration (use ms, s, m, h)",
                "e.g. 30m, 2h or 1h30m",
            )


def _sandbox_origin(config: Mapping[str, Any]) -> Iterator[Issue]:
    origin = _dict(_dict(config.get("mcp")).get("apps")).get("sandboxOrigin")
    if not isinstance(origin, str):
        return
    try:
        parts = urlsplit(origin)
        plain = (
            parts.scheme in ("http", "https")
            and bool(parts.hostname)
            and parts.path in ("", "/")
            and not parts.query
            and not parts.fragment
            and parts.username is None
            and parts.password is None
        )
    except ValueError:
        plain = False
    if not plain:
        yield Issue(
            ("mcp", "apps", "sandboxOrigin"),
            "format",
            "sandboxOrigin must be an HTTP(S) origin without a path, query, or credentials",
            "e.g. https://apps.example.com",
        )


def _secret_providers(config: Mapping[str, Any]) -> Iterator[Issue]:
    for name, provider in _dict(_dict(config.get("secrets")).get("providers")).items():
        base = ("secrets", "providers", name)
        command = _dict(provider).get("command")
        if isinstance(command, str) and not command.startswith("/"):
            yield Issue(
                (*base, "command"),
                "format",
                "secrets.providers.*.command must be an absolute path",
                "give the full path of the program",
            )
        dirs = _dict(provider).get("trustedDirs")
        for i, item in enumerate(dirs if isinstance(dirs, list) else []):
            if isinstance(item, str) and not item.startswith("/"):
                yield Issue((*base, "trustedDirs", i), "format", "trustedDirs entries must be absolute paths")


def _file_secret_refs(config: Mapping[str, Any]) -> Iterator[Issue]:
    stack: list[tuple[PathT, Any]] = [((), config)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, Mapping):
            if (
                node.get("source") == "file"
                and set(node) == {"source", "provider", "id"}
                and isinstance(node.get("id"), str)
                and node["id"] != "value"
                and not node["id"].startswith("/")
            ):
                yield Issue(
                    (*path, "id"),
                    "format",
                    'a file SecretRef id must be an absolute JSON pointer (e.g. "/providers/openai/apiKey"), '
                    'or "value" for a singleValue provider',
                )
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in enumerate(node))


def _gateway_roles(config: Mapping[str, Any]) -> Iterator[Issue]:
    roles = _dict(_dict(config.get("gateway")).get("roles"))
    if not roles:
        return
    definitions = _dict(roles.get("definitions"))
    if "definitions" in roles and not definitions:
        yield Issue(
            ("gateway", "roles", "definitions"),
            "range",
            "gateway.roles.definitions must contain at least one role definition",
        )
    default = roles.get("default")
    if isinstance(default, str) and definitions and default not in definitions:
        yield Issue(
            ("gateway", "roles", "default"),
            "invalid",
            "gateway.roles.default must name a configured role definition",
            "use one of " + ", ".join(map(repr, definitions)),
        )


def _system_agent(config: Mapping[str, Any]) -> Iterator[Issue]:
    agents = _dict(config.get("agents"))
    agent_id = _dict(_dict(agents.get("defaults")).get("systemAgent")).get("agentId")
    entries = _dict(agents.get("entries"))
    if isinstance(agent_id, str) and agent_id.strip().lower() not in {str(k).lower() for k in entries}:
        yield Issue(
            ("agents", "defaults", "systemAgent", "agentId"),
            "invalid",
            f"Unknown agent id {agent_id!r} (not in agents.entries)",
            "name a declared Agent, or set the Gateway's agents.defaultAgent instead",
        )


_DNS_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$", re.IGNORECASE)


def _portal_domain(config: Mapping[str, Any]) -> Iterator[Issue]:
    domain = _dict(_dict(_dict(config.get("gateway")).get("portals")).get("ingress")).get("domain")
    if not isinstance(domain, str):
        return
    labels = domain.split(".")
    numeric = all(label.isdigit() for label in labels)
    if len(domain) > 220 or "." not in domain or numeric or not all(_DNS_LABEL.match(x) for x in labels):
        yield Issue(
            ("gateway", "portals", "ingress", "domain"),
            "format",
            "Portal ingress domain must be a bare DNS domain",
            "e.g. portals.example.com (no scheme, port or path)",
        )


def _worktree_root(config: Mapping[str, Any]) -> Iterator[Issue]:
    root = config.get("worktreeRoot")
    if (
        isinstance(root, str)
        and root.strip()
        and not (root.strip() == "~" or root.strip().startswith(("~/", "/")))
    ):
        yield Issue(
            ("worktreeRoot",),
            "format",
            "worktreeRoot must be an absolute path or a path starting with ~",
        )


_MAINTENANCE_DURATIONS = ("pruneAfter", "archiveDashboardAfter", "preserveRecent", "resetArchiveRetention")
_MAINTENANCE_SIZES = ("maxDiskBytes", "highWaterBytes")


def _session_maintenance(config: Mapping[str, Any]) -> Iterator[Issue]:
    maintenance = _dict(_dict(config.get("session")).get("maintenance"))
    base = ("session", "maintenance")
    for key in _MAINTENANCE_DURATIONS:
        value = maintenance.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and value != 0:
            try:
                positive = duration_ms(value, default_unit="d") > 0
            except ValueError:
                positive = False
            if not positive:
                yield Issue(
                    (*base, key), "format", "invalid duration (use ms, s, m, h, d)", "e.g. 30d or 12h"
                )
    for key in _MAINTENANCE_SIZES:
        value = maintenance.get(key)
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            try:
                byte_size(value)
            except ValueError:
                yield Issue(
                    (*base, key), "format", "invalid size (use b, kb, mb, gb, tb)", "e.g. 500mb or 10gb"
                )


RULES: tuple[tuple[Rule, tuple[str, ...] | None], ...] = (
    (_unknown_channels, ("channels",)),
    (_exact_model_keys, ("agents",)),
    (_model_refs, ("agents",)),
    (_durations, ("agents",)),
    (_sandbox_origin, ("mcp",)),
    (_secret_providers, ("secrets",)),
    (_file_secret_refs, None),
    (_gateway_roles, ("gateway",)),
    (_portal_domain, ("gateway",)),
    (_worktree_root, ("worktreeRoot",)),
    (_session_maintenance, ("session",)),
)
"""Each rule with the top-level sections it reads (None: any): a config without them skips it."""
WHOLE_RULES: tuple[Rule, ...] = (_system_agent,)
"""Rules that need all of openclaw.json to tell (``refine(..., whole=True)``)."""

__all__ = ["RULES", "UNKNOWN_CHANNELS", "is_duration", "refine"]
