"""An OpenClaw object → the spec of the resource that stands for it, key by key, losslessly.

Walked beside two guides: clawplane's model of the part (which keys are typed, which of
them take a ``valueFrom``, which are clawplane's own) and OpenClaw's schema of the object
(which keys exist, which are SecretInput fields). Every key lands under ``spec`` by its
OpenClaw name; values are rewritten only where clawplane writes them differently:

- ``${NAME}`` alone becomes ``{valueFrom: {env: NAME}}``, which renders back as ``${NAME}``
  (or, on a SecretInput field, as the equivalent env SecretRef);
- an env SecretRef, or a file SecretRef through a single-value file provider, becomes
  ``valueFrom``; other SecretRefs (exec, store, json-mode file) stay as written, which an
  OpenClaw key may hold;
- literal strings are unescaped (``$${X}`` → ``${X}``): rendering escapes every literal again.

What clawplane cannot write under ``spec`` without changing it is carried verbatim as raw
OpenClaw config (the Gateway's ``spec.config``, merged under the rendered file as is), at its
path in the rendered openclaw.json: a string that mixes text with ``${VAR}`` (rendered from a
spec it would be escaped and lose its substitution), a key this OpenClaw's schema does not
know (also listed for ``spec.configUnchecked``), and a key whose name clawplane uses for one
of its own fields. Inside a list the whole list is carried, since raw config merges whole
lists. clawplane's typed fields are read by clawplane itself (an agent's workspace and
skills, tool policies, skill paths), so a raw copy there would make clawplane and OpenClaw
disagree: a ``${VAR}`` string in one, or a SecretRef clawplane has no ``valueFrom`` for in a
field typed as a secret, is reported as not imported instead.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.values import (
    VALUE_FROM_HINT,
    describe_ref,
    import_secret,
    import_string,
    is_secret_ref,
    looks_secret,
    secret_ref_value,
    unescape,
)
from clawplane.models import OpenPart, OpenValue, ValueFrom
from clawplane.naming import has_substitution, whole_reference
from clawplane.schema.openclaw import ANY, Node, admits_secret_ref, admits_string, child, declared_keys
from clawplane.schema.openclaw import is_record as is_record_node
from clawplane.schema.openclaw import items as item_node


@dataclass(frozen=True)
class Home:
    """Where a resource's spec sits: in the imported file, and in the openclaw.json clawplane renders."""

    source: ConfigPath
    """The object's path in the imported file (for file:line)."""
    target: ConfigPath | None
    """Its path in the rendered file (raw config goes there); None when raw config cannot hold it."""


@dataclass(frozen=True)
class Carry:
    """Marks a value to be carried verbatim as raw config with its nearest enclosing key."""

    unchecked: bool
    """OpenClaw's schema does not know a key inside it (list the carried path as unchecked)."""


LOST: Any = object()
"""A value that could not be imported (already reported)."""
_EMPTIED: Any = object()
"""A mapping of which nothing is left under ``spec`` (carried raw, or lost): left out, not written empty."""

_OPEN = "open"


class KeyImporter:
    """Imports the keys of one resource's OpenClaw object (see the module docstring)."""

    def __init__(
        self,
        report: ImportReport,
        providers: Mapping[str, Any],
        home: Home,
        moved: Mapping[ConfigPath, ConfigPath] | None = None,
    ) -> None:
        self.report = report
        self.providers = providers
        self.home = home
        self.moved = moved or {}
        """Paths of the walked value → where they are written in the source, where they differ
        (a list the importer rebuilt: the Gateway's bindings without the channel-wide ones)."""

    def spec(self, value: Mapping[str, Any], node: Node | None, model: type[BaseModel]) -> dict[str, Any]:
        """The spec (or spec part) ``model`` holds for the OpenClaw object ``value``."""
        found = self.part(value, (), node if node is not None else ANY, model)
        return found if isinstance(found, dict) else {}  # every key carried raw

    def part(self, value: Mapping[str, Any], rel: ConfigPath, node: Node, model: type[BaseModel]) -> Any:
        """A typed part: its typed fields by annotation, OpenClaw's other keys as open values."""
        fields = {info.alias or name: info.annotation for name, info in model.model_fields.items()}
        own: frozenset[str] = getattr(model, "OWN", frozenset())
        open_part = issubclass(model, OpenPart)
        declared = declared_keys(node)
        record = is_record_node(node)
        out: dict[str, Any] = {}
        carried: list[Carry] = []
        for key, item in value.items():
            here = (*rel, key)
            sub = child(node, key)
            # A key OpenClaw only lets through (a catch-all object) is no key of this object.
            known = sub is not None and (key in declared or record or not declared)
            if key in own and not (key in fields and known and _takes_openclaw_mapping(fields[key], item)):
                result: Any = self._foreign(here, known, "clawplane's field of this name is something else")
            elif key in fields and known:
                result = self.value(item, here, sub or ANY, fields[key])
            elif not known:
                result = self._unknown(here)
            elif open_part:
                result = self.value(item, here, sub or ANY, _OPEN)
            else:
                result = self._foreign(here, known, f"clawplane's {model.__name__} has no field for it")
            self._keep(out, key, item, result, here, carried)
        return _merge(carried) if carried else _emptied(out, value)

    def value(self, item: Any, rel: ConfigPath, node: Node, annotation: Any) -> Any:
        """One value, by the kind of field that holds it."""
        kinds = _kinds(annotation)
        secret = not isinstance(item, list) and (not isinstance(item, Mapping) or is_secret_ref(item))
        if "ref" in kinds and secret:
            credential = admits_secret_ref(node) or looks_secret(_last_key(rel))
            found = import_secret(item, _last_key(rel), self._source(rel), self.report, self.providers,
                                  credential=credential)  # fmt: skip
            return LOST if found is None else found
        if isinstance(item, Mapping):
            model = kinds.get("model")
            if model is not None:
                return self.part(item, rel, node, model)
            if "map" in kinds:
                return self._mapping(item, rel, node, kinds["map"])
            if _OPEN in kinds:
                return self.open(item, rel, node)
            return self._mapping(item, rel, node, None)
        if isinstance(item, list):
            inner = kinds.get("list", _OPEN if _OPEN in kinds else None)
            return self._list(item, rel, node, inner)
        if _OPEN in kinds:
            return self.open(item, rel, node)
        if isinstance(item, str):
            text = import_string(item, self._source(rel), self.report)
            return LOST if text is None else text
        return item

    def open(self, item: Any, rel: ConfigPath, node: Node) -> Any:
        """An OpenClaw key's value (clawplane types nothing in it)."""
        if isinstance(item, str):
            return self._open_string(item, rel, node)
        if isinstance(item, Mapping):
            if is_secret_ref(item) and admits_secret_ref(node):
                found = secret_ref_value(item, self._source(rel), self.report, self.providers)
                if found is not None:
                    return found
                self.report.info(
                    "import.secret-ref-kept",
                    self._source(rel),
                    f"SecretRef {describe_ref(item)} kept as written "
                    "(OpenClaw resolves it; clawplane never reads it)",
                )
                return dict(item)
            return self._mapping(item, rel, node, _OPEN)
        if isinstance(item, list):
            return self._list(item, rel, node, _OPEN)
        return item

    def _open_string(self, text: str, rel: ConfigPath, node: Node) -> Any:
        name = whole_reference(text)
        if name is not None and (admits_secret_ref(node) or admits_string(node)):
            return {"valueFrom": {"env": name}}
        if has_substitution(text):
            if self.home.target is None:
                self.report.unmapped(
                    self._source(rel),
                    "uses ${VAR} substitution, which clawplane does not apply to this field",
                    "write the value itself",
                )
                return LOST
            self.report.info(
                "import.substitution-kept",
                self._source(rel),
                "uses ${VAR} substitution: kept as written in the Gateway's spec.config, which is "
                "rendered verbatim (under spec it would be escaped as a literal)",
            )
            return Carry(unchecked=False)
        literal = unescape(text)
        if literal.strip() and (admits_secret_ref(node) or looks_secret(_last_key(rel))):
            self.report.warn("import.literal-secret", self._source(rel), "literal secret kept as written",
                             VALUE_FROM_HINT)  # fmt: skip
        return literal

    def _mapping(self, value: Mapping[str, Any], rel: ConfigPath, node: Node, inner: Any) -> Any:
        out: dict[str, Any] = {}
        carried: list[Carry] = []
        for key, item in value.items():
            here = (*rel, str(key))
            sub = child(node, str(key))
            if sub is None:
                result: Any = self._unknown(here)
            elif inner is None:
                result = self._plain(item, here, sub)
            else:
                result = self.value(item, here, sub, inner)
            self._keep(out, str(key), item, result, here, carried)
        return _merge(carried) if carried else _emptied(out, value)

    def _plain(self, item: Any, rel: ConfigPath, node: Node) -> Any:
        if isinstance(item, Mapping):
            return self._mapping(item, rel, node, None)
        if isinstance(item, list):
            return self._list(item, rel, node, None)
        if isinstance(item, str):
            text = import_string(item, self._source(rel), self.report)
            return LOST if text is None else text
        return item

    def _list(self, value: list[Any], rel: ConfigPath, node: Node, inner: Any) -> Any:
        inner_node = item_node(node) or ANY
        out: list[Any] = []
        carried: list[Carry] = []
        for i, item in enumerate(value):
            here = (*rel, i)
            if inner is None:
                result = self._plain(item, here, inner_node)
            else:
                result = self.value(item, here, inner_node, inner)
            if isinstance(result, Carry):
                carried.append(result)
            elif result is not LOST:
                out.append({} if result is _EMPTIED else result)
        return _merge(carried) if carried else out

    def _keep(
        self, out: dict[str, Any], key: str, item: Any, result: Any, here: ConfigPath, carried: list[Carry]
    ) -> None:
        if isinstance(result, Carry):
            if any(isinstance(p, int) for p in here[:-1]):
                carried.append(result)  # carried whole with the list above
            else:
                self._carry(here, item, result)
        elif result is not LOST and result is not _EMPTIED:
            out[key] = result

    def _carry(self, rel: ConfigPath, item: Any, carry: Carry) -> None:
        target = self.home.target
        if target is None:
            self.report.unmapped(self._source(rel), "raw OpenClaw config cannot hold it here")
            return
        path = (*target, *rel)
        if carry.unchecked and any("." in str(p) for p in path):
            self.report.unmapped(
                self._source(rel),
                "a key OpenClaw does not know, under a name with a dot (spec.configUnchecked cannot list it)",
            )
            return
        self.report.keep_raw(path, item, at=self._source(rel))
        if carry.unchecked:
            self.report.uncheck(path)

    def _unknown(self, rel: ConfigPath) -> Carry:
        self.report.warn(
            "import.unchecked-key",
            self._source(rel),
            "OpenClaw's schema has no such key: kept in the Gateway's spec.config and listed in "
            "spec.configUnchecked, so it reaches OpenClaw unchecked",
            "remove it if it is a mistake; keep it if your OpenClaw is newer and knows it",
        )
        return Carry(unchecked=True)

    def _foreign(self, rel: ConfigPath, known: bool, why: str) -> Carry:
        if not known:
            return self._unknown(rel)
        self.report.info(
            "import.raw-config",
            self._source(rel),
            f"{why}; kept as raw OpenClaw config in the Gateway's spec.config",
        )
        return Carry(unchecked=False)

    def _source(self, rel: ConfigPath) -> ConfigPath:
        for cut in range(len(rel), 0, -1):
            moved = self.moved.get(rel[:cut])
            if moved is not None:
                return (*self.home.source, *moved, *rel[cut:])
        return (*self.home.source, *rel)


def _takes_openclaw_mapping(annotation: Any, item: Any) -> bool:
    """Whether a clawplane field also takes OpenClaw's mapping by its name, written as given
    (a Channel's ``mentionPatterns``: a regex list is clawplane's, a mapping OpenClaw's)."""
    return isinstance(item, Mapping) and _kinds(annotation).get("map") is OpenValue


def _emptied(out: dict[str, Any], value: Mapping[str, Any]) -> Any:
    """``out``, or ``_EMPTIED`` when nothing of a non-empty mapping is left under ``spec``."""
    return _EMPTIED if value and not out else out


def _merge(carried: list[Carry]) -> Carry:
    return Carry(unchecked=any(c.unchecked for c in carried))


def _last_key(rel: ConfigPath) -> str:
    return next((str(p) for p in reversed(rel) if isinstance(p, str)), "")


def _kinds(annotation: Any) -> dict[str, Any]:
    """What a field's type admits: ``ref`` (a valueFrom), ``model``, ``map``/``list`` (with their
    inner type), ``open`` (any OpenClaw value), ``plain`` (scalars, enums, literals)."""
    if annotation == _OPEN:
        return {_OPEN: True}
    found: dict[str, Any] = {}
    stack = [annotation]
    while stack:
        current = stack.pop()
        if current is OpenValue:
            found[_OPEN] = True
            continue
        origin = get_origin(current)
        if origin is typing.Annotated:
            stack.append(get_args(current)[0])
        elif origin in (typing.Union, _UnionType):
            stack.extend(get_args(current))
        elif origin is dict:
            found.setdefault("map", get_args(current)[1])
        elif origin is list:
            found.setdefault("list", get_args(current)[0])
        elif current is ValueFrom:
            found["ref"] = True
        elif isinstance(current, type) and issubclass(current, BaseModel):
            found.setdefault("model", current)
        else:
            found["plain"] = True  # str, numbers, enums, literals, Any
    return found


_UnionType = type(int | str)
