"""Derives the per-channel field table of ``clawplane.naming.channelfields`` from OpenClaw's JSON schema.

Run ``python tests/unit/render/channel_table.py SCHEMA`` to print the table's source lines.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

POLICY_KEYS = ("enabled", "dmPolicy", "allowFrom", "groupPolicy", "groupAllowFrom", "groups")
GROUP_KEYS = ("requireMention", "allowFrom", "enabled", "groupPolicy")
_CREDENTIAL_RE = re.compile(r"(?i)(token|secret|password|passphrase|privatekey|key$|serviceaccount)")


def _is_secret_input(schema: Any) -> bool:
    # SecretInput = string | SecretRef object ({source, provider, id}).
    options = schema.get("anyOf", []) if isinstance(schema, dict) else []
    return any("oneOf" in o and '"source"' in json.dumps(o) for o in options if isinstance(o, dict))


def _is_plain_string(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "string" and "enum" not in schema


def derive(schema_path: Path) -> dict[str, tuple[tuple[str, ...], ...]]:
    """``{channel: (policy keys, group keys, credential keys, SecretInput keys)}``."""
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    channels = schema["properties"]["channels"]["properties"]
    table: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name, channel in sorted(channels.items()):
        if name in ("defaults", "modelByChannel"):
            continue
        # twitch is an anyOf (single account | accounts); its first branch lists the fields.
        shape = channel if "properties" in channel else next(iter(channel.get("anyOf", [])), {})
        props: dict[str, Any] = shape.get("properties", {})
        groups = props.get("groups", {}).get("additionalProperties")
        group_props = groups.get("properties", {}) if isinstance(groups, dict) else {}
        secret = tuple(sorted(k for k, v in props.items() if _is_secret_input(v)))
        plain = [k for k, v in props.items() if _is_plain_string(v) and _CREDENTIAL_RE.search(k)]
        table[name] = (
            tuple(k for k in POLICY_KEYS if k in props),
            tuple(k for k in GROUP_KEYS if k in group_props),
            tuple(sorted(set(secret) | set(plain))),
            secret,
        )
    return table


if __name__ == "__main__":
    import sys

    for name, parts in derive(Path(sys.argv[1])).items():
        print(f'    "{name}": ({", ".join(repr(" ".join(p)) for p in parts)}),')
