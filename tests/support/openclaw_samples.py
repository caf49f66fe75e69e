"""Values drawn from OpenClaw's own config schema, valid and invalid, at any leaf key, with their config.

Used by the property tests (clawplane's ``validate`` takes exactly what OpenClaw's schema takes)
and by the coverage count. A *leaf* is a key whose value is not an object of named fields:
a scalar, a list, or a map of free keys; objects of named fields are walked into, as are the
entries of maps and lists whose items are such objects (``*`` and ``[]`` in a path).

The reference for "OpenClaw's schema takes it" is the ``jsonschema`` library (an implementation
independent of clawplane's), told the two things zod does differently from JSON Schema: a key
with a default is not required, and lengths count UTF-16 units (samples avoid astral characters).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from jsonschema import Draft7Validator, validators

from clawplane.schema.openclaw import branches, config_schema

Node = dict[str, Any]
Path = tuple[str, ...]


def _required(validator: Any, required: Any, instance: Any, schema: Node) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    props = schema.get("properties") or {}
    for name in required:
        if name not in instance and not (isinstance(props.get(name), dict) and "default" in props[name]):
            from jsonschema.exceptions import ValidationError

            yield ValidationError(f"{name!r} is a required property")


_Reference = validators.extend(Draft7Validator, {"required": _required})


@cache
def reference() -> Any:
    """jsonschema's draft-07 validator of OpenClaw's schema, with zod's defaults."""
    return _Reference(config_schema())


def openclaw_takes(config: dict[str, Any]) -> bool:
    """Whether OpenClaw's schema takes this whole config (by the independent reference)."""
    return bool(reference().is_valid(config))


def _objects(node: Node) -> list[Node]:
    return [b for b in branches(node) if isinstance(b.get("properties"), dict) and b["properties"]]


def _record(node: Node) -> Node | None:
    for b in branches(node):
        extra = b.get("additionalProperties")
        if isinstance(extra, dict) and not b.get("properties"):
            return extra
    return None


def _array_items(node: Node) -> Node | None:
    for b in branches(node):
        if isinstance(b.get("items"), dict):
            return b["items"]
    return None


def leaf_paths(node: Node | None = None, path: Path = (), depth: int = 0) -> list[Path]:
    """Every leaf key path of OpenClaw's config (``*`` for a map entry, ``[]`` for a list item)."""
    node = config_schema() if node is None else node
    out: list[Path] = []
    if depth > 30:
        return [path]
    objects = _objects(node)
    record = _record(node)
    array = _array_items(node)
    walked = False
    for branch in objects:
        for key, sub in branch["properties"].items():
            out.extend(leaf_paths(sub, (*path, key), depth + 1))
            walked = True
    if record is not None and _objects(record):
        out.extend(leaf_paths(record, (*path, "*"), depth + 1))
        walked = True
    if array is not None and _objects(array):
        out.extend(leaf_paths(array, (*path, "[]"), depth + 1))
        walked = True
    if not walked:
        out.append(path)
    return list(dict.fromkeys(out))


_STRINGS = [
    "main", "a", "x1", "default", "ops", "https://example.com/x", "123", "C123", "abc-def", "A1",
    "#ff8800", "2026-01-01T00:00:00Z", "ada@example.com", "+15551234567", "10m", "1h", "value",
    "openai/gpt-5", "ABC_DEF", "/tmp/x", "*", "work_1", "en", "UTC", "ghp_" + "0123456789abcdef" * 2,
    "openai:main", "https://team.cloudflareaccess.com",
]  # fmt: skip
_KEYS = ["main", "a", "x1", "ops", "work", "default", "123", "C123", "abc-def", "*", "openai",
         "123e4567-e89b-12d3-a456-426614174000"]  # fmt: skip


def _pattern_ok(node: Node, text: str) -> bool:
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            if not re.search(pattern, text):
                return False
        except re.error:
            return False
    low, high = node.get("minLength"), node.get("maxLength")
    return not (isinstance(low, int) and len(text) < low) and not (isinstance(high, int) and len(text) > high)


def _string(node: Node, rng: random.Random) -> str | None:
    if node.get("format") == "uri":
        return "https://example.com/x"
    pool = _STRINGS[:]
    rng.shuffle(pool)
    for text in pool:
        if _pattern_ok(node, text):
            return text
    low = node.get("minLength")
    text = "a" * (low if isinstance(low, int) else 1)
    return text if _pattern_ok(node, text) else None


class NoSample(Exception):
    """The schema asks for something this sampler cannot make (a pattern no candidate fits)."""


def valid_value(node: Node, rng: random.Random, depth: int = 0) -> Any:
    """A value ``node`` takes."""
    if depth > 12:
        raise NoSample("too deep")
    options = list(branches(node))  # a copy: branches() answers from a shared memo
    rng.shuffle(options)
    for option in options:
        try:
            value = _valid_one(option, rng, depth)
        except NoSample:
            continue
        return value
    raise NoSample("no branch")


def _valid_one(node: Node, rng: random.Random, depth: int) -> Any:
    if "const" in node:
        return node["const"]
    if isinstance(node.get("enum"), list):
        return rng.choice(node["enum"])
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind or [])
    if not kinds:
        kinds = ["object"] if "properties" in node else ["string"]
    kind = rng.choice(kinds)
    if kind == "string":
        text = _string(node, rng)
        if text is None:
            raise NoSample("pattern")
        return text
    if kind in ("number", "integer"):
        return _number(node, kind)
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "null":
        return None
    if kind == "array":
        items = node.get("items") if isinstance(node.get("items"), dict) else {}
        count = node.get("minItems") if isinstance(node.get("minItems"), int) else rng.choice([0, 1])
        if isinstance(node.get("items"), list):
            return [valid_value(s, rng, depth + 1) for s in node["items"]]
        out = [valid_value(items, rng, depth + 1) for _ in range(count)]
        if node.get("uniqueItems") and len({repr(v) for v in out}) != len(out):
            raise NoSample("unique")
        return out
    return _object(node, rng, depth)


def _number(node: Node, kind: str) -> int | float:
    low = node.get("minimum", node.get("exclusiveMinimum"))
    high = node.get("maximum")
    value: float = 1
    if isinstance(low, int | float):
        value = low + (1 if "exclusiveMinimum" in node or kind == "integer" else 0)
        if "minimum" in node:
            value = low
    if isinstance(high, int | float) and value > high:
        value = high
    if kind == "integer":
        return int(value) if float(value).is_integer() else int(value) + 1
    return value


def _object(node: Node, rng: random.Random, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    props = node.get("properties") or {}
    for name in node.get("required") or []:
        sub = props.get(name)
        if isinstance(sub, dict) and "default" not in sub:
            out[name] = valid_value(sub, rng, depth + 1)
    low = node.get("minProperties")
    record = node.get("additionalProperties")
    if isinstance(low, int) and len(out) < low and isinstance(record, dict):
        for key in _KEYS[:low]:
            out[key] = valid_value(record, rng, depth + 1)
    return out


def invalid_value(node: Node, rng: random.Random) -> Any:
    """A value ``node`` refuses (checked against the reference by the caller)."""
    kinds = set()
    for b in branches(node):
        kind = b.get("type")
        kinds.update([kind] if isinstance(kind, str) else list(kind or []))
        if "const" in b or "enum" in b:
            kinds.add("enum")
    choices: list[Any] = []
    if "object" not in kinds:
        choices.append({"bogus": {"nested": 1}})
    if "enum" in kinds:
        choices.append("not-a-valid-choice")
    if "boolean" not in kinds and "string" not in kinds:
        choices.append("yes")
    if kinds & {"number", "integer"}:
        low = next((b.get("minimum", b.get("exclusiveMinimum")) for b in branches(node)
                    if isinstance(b.get("minimum", b.get("exclusiveMinimum")), int | float)), None)
        if low is not None:
            choices.append(low - 1)
    if "object" in kinds and any(b.get("additionalProperties") is False for b in branches(node)):
        choices.append({"notAnOpenClawKey": 1})
    if "array" in kinds:
        choices.append([{"bogus": 1}] if "string" in str(_array_items(node)) else "not-a-list")
    if not choices:
        choices.append({"bogus": 1})
    return rng.choice(choices)


@dataclass
class Sample:
    """A value at a leaf path, the whole config holding it, and where the value sits."""

    path: tuple[str | int, ...]
    """The leaf's path with concrete keys (map entries named, list items numbered)."""
    value: Any
    config: dict[str, Any]
    valid: bool
    """The reference's verdict on the whole config."""


def node_for(path: Path) -> Node:
    """The schema node at a leaf path (``*`` = any map entry, ``[]`` = any list item)."""
    node = config_schema()
    for part in path:
        node = _step(node, part)
    return node


def _step(node: Node, part: str) -> Node:
    if part == "*":
        record = _record(node)
        if record is None:
            raise NoSample("no record")
        return record
    if part == "[]":
        items = _array_items(node)
        if items is None:
            raise NoSample("no items")
        return items
    for branch in _objects(node):
        if part in branch["properties"]:
            return dict(branch["properties"][part])
    raise NoSample(f"no key {part}")


def _object_branch(node: Node, key: str) -> Node:
    for branch in _objects(node):
        if key in branch["properties"]:
            return branch
    return {}


def sample(path: Path, rng: random.Random, *, valid: bool) -> Sample:
    """A config with a drawn value at ``path`` and whatever its ancestors require around it."""
    leaf = node_for(path)
    value = valid_value(leaf, rng) if valid else invalid_value(leaf, rng)
    concrete: list[str | int] = []
    node = config_schema()
    root: dict[str, Any] = {}
    holder: dict[str, Any] = root
    parent: tuple[dict[str, Any], str] | None = None
    for i, part in enumerate(path):
        last = i == len(path) - 1
        if part == "[]":
            # The object made for the previous key becomes the one item of a list there.
            items = _array_items(node)
            if items is None or parent is None:
                raise NoSample("items")
            parent[0][parent[1]] = [holder]
            concrete.append(0)
            node = items
            continue
        if part == "*":
            record = _record(node)
            names = node.get("propertyNames") or next(
                (b.get("propertyNames") for b in branches(node) if b.get("propertyNames")), {}
            )
            key = next((k for k in _KEYS if _pattern_ok(names or {}, k)), None)
            if key is None or record is None:
                raise NoSample("record key")
            concrete.append(key)
            node = record
        else:
            branch = _object_branch(node, part)
            base = valid_value(branch, rng) if branch else {}
            for k, v in base.items():
                holder.setdefault(k, v)
            node = dict(branch["properties"][part]) if branch else {}
            concrete.append(part)
            key = part
        if last:
            holder[key] = copy.deepcopy(value)
        else:
            nxt = holder.get(key)
            if not isinstance(nxt, dict):
                nxt = {}
            holder[key] = nxt
            parent = (holder, key)
            holder = nxt
    return Sample(tuple(concrete), value, root, openclaw_takes(root))


def draw(rng: random.Random, paths: list[Path], *, valid: bool, tries: int = 50) -> Sample:
    """One sample at a random leaf whose verdict by the reference is ``valid``."""
    for _ in range(tries):
        path = rng.choice(paths)
        try:
            found = sample(path, rng, valid=valid)
        except NoSample:
            continue
        if found.valid is valid:
            return found
    raise NoSample("no sample after many tries")


OTHER_KINDS = {("mcp", "servers"): "McpServer", ("agents", "entries"): "Agent"}
GATEWAY_CHANNEL_KEYS = ("defaults", "modelByChannel")


@dataclass
class Placed:
    """A sample written as clawplane resources, and where its value sits in them."""

    documents: list[dict[str, Any]]
    kind: str
    name: str
    spec_path: tuple[str | int, ...]
    """The value's path under the owning resource's ``spec``."""


def typed_home(found: Sample, *, providers: bool = False) -> Placed | None:
    """The sample declared by OpenClaw's names in the resource that stands for its object.

    None for a sample under ``models``, unless ``providers``: then ``models.providers.<id>`` become
    ModelProviders (typed wholly by clawplane's own model, which the property tests leave to tests
    of their own).
    """
    config = copy.deepcopy(found.config)
    path = found.path
    docs: list[dict[str, Any]] = []
    owner: tuple[str, str, tuple[str | int, ...]] | None = None
    kinds = {**OTHER_KINDS, ("models", "providers"): "ModelProvider"} if providers else OTHER_KINDS
    for (section, key), kind in kinds.items():
        entries = config.get(section, {}).get(key) if isinstance(config.get(section), dict) else None
        if isinstance(entries, dict):
            for name, spec in entries.items():
                spec = dict(spec)
                if kind == "McpServer" and "command" not in spec and "url" not in spec:
                    spec["url"] = "https://mcp.example.com/mcp"  # clawplane needs one of them to run it
                docs.append(_doc(kind, name, spec))
                if path[:3] == (section, key, name):
                    owner = (kind, name, path[3:])
            del config[section][key]
            if not config[section]:
                del config[section]
    channels = config.get("channels")
    if isinstance(channels, dict):
        for kind_name in list(channels):
            if kind_name in GATEWAY_CHANNEL_KEYS:
                continue
            spec = {"type": kind_name, **channels.pop(kind_name)}
            docs.append(_doc("Channel", f"ch-{kind_name}", spec))
            if path[:2] == ("channels", kind_name):
                owner = ("Channel", f"ch-{kind_name}", path[2:])
        if not channels:
            del config["channels"]
    if "models" in config and path[:1] == ("models",) and not providers:
        return None  # ModelProviders are typed wholly by clawplane's own model (tests of their own)
    if config:
        docs.append(_doc("Gateway", "default", config))
    if owner is None:
        owner = ("Gateway", "default", path)
    return Placed(docs, owner[0], owner[1], owner[2])


def in_raw_config(found: Sample) -> Placed:
    """The sample as a Gateway's raw ``spec.config``."""
    return Placed([_doc("Gateway", "default", {"config": found.config})], "Gateway", "default", ("config", *found.path))


def _doc(kind: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "clawplane.dev/v1alpha1", "kind": kind, "metadata": {"name": name}, "spec": spec}
