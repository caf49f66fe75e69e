"""``clawplane doctor``: legacy keys, stale references and risky settings, with safe fixes.

Works on the raw round-trip YAML rather than on validated models, so it can look at
(and repair) documents that do not validate yet. Every finding says where it is and,
when it can be fixed mechanically, what the fix does. Fixes are text splices at the
positions ruamel.yaml recorded (see ``editing.fixes``), applied only to offending
nodes; a second run over fixed files finds nothing to fix.

``plugins.allow`` entries are checked against the plugins OpenClaw bundles (shipped data,
``validation.plugins``); with ``plugins.load.paths`` set, unknown ids may be real, so they
are only noted. A leading UTF-8 byte order mark is reported and the fix drops exactly it.

Legacy timeout keys (``connectTimeout``, ``connect_timeout``, ``connectionTimeout``,
``timeout``) are in seconds, like OpenClaw's ``mcp configure --timeout`` flags; the fix
multiplies them by 1000 into the ``...Ms`` keys.
"""

from __future__ import annotations

import difflib
import os
import shutil
from pathlib import Path
from typing import Any

from clawplane._utils.atomicfile import atomic_write_bytes
from clawplane.diagnostics import Diagnostics
from clawplane.editing.findings import Doc, DoctorReport, Finding, is_map, is_seq, load_resources
from clawplane.editing.fixes import Splice, apply_splices, load_documents, scalar_like
from clawplane.loading import discover_files
from clawplane.models import LEGACY_TYPE_ALIASES
from clawplane.naming import assign_server_names, is_sensitive_key
from clawplane.validation.legacy import (
    LEGACY_CODEX_KEYS,
    LEGACY_SERVER_KEYS,
    SECONDS_KEYS,
    inferred_transport,
    unknown_type_message,
)
from clawplane.validation.plugins import bundled_plugins


def _flow(node: Any) -> bool:
    return bool(node.fa.flow_style())


def _load_paths(plugins: Any) -> bool:
    """Whether a ``plugins`` block loads plugins from paths (``load.paths`` not empty)."""
    load: Any = plugins.get("load") if is_map(plugins) else None
    paths: Any = load.get("paths") if is_map(load) else None
    return is_seq(paths) and len(paths) > 0


class _Checker:
    def __init__(self, docs: list[Doc], known_skills: set[str] | None = None) -> None:
        self.docs = docs
        self.known_skills = known_skills
        self.findings: list[Finding] = []
        self.servers = sorted({d.name for d in docs if d.kind == "McpServer"})
        self.agents = sorted({d.name for d in docs if d.kind == "Agent"})

    def add(
        self,
        doc: Doc,
        pos: tuple[int, int],
        severity: str,
        code: str,
        message: str,
        path: str,
        fix: str | None = None,
        splices: list[Splice] | None = None,
    ) -> None:
        self.findings.append(
            Finding(
                str(doc.file),
                pos[0] + 1,
                pos[1] + 1,
                severity,
                code,
                message,
                doc.key,
                path,
                fix if splices else None,
                splices=splices or [],
            )
        )

    # ---- edits -------------------------------------------------------------------------

    @staticmethod
    def rename(doc: Doc, node: Any, old: str, new: str, value: Any = None) -> list[Splice] | None:
        t = doc.text
        kl, kc = node.lc.key(old)
        start = t.offset(kl, kc)
        end = t.token_is(start, old)
        if end is None:
            return None
        quote = t.text[start] if t.text[start] in "\"'" else ""
        splices = [Splice(start, end, f"{quote}{new}{quote}")]
        if value is not None:
            vl, vc = node.lc.value(old)
            vstart = t.offset(vl, vc)
            vend = t.scalar_end(vstart, flow=_flow(node))
            if vend is None:
                return None
            splices.append(Splice(vstart, vend, scalar_like(t.text[vstart:vend], value)))
        return splices

    @staticmethod
    def delete(doc: Doc, node: Any, key: str) -> list[Splice] | None:
        """Remove a ``key: scalar`` line of a block mapping."""
        if _flow(node) or is_map(node[key]) or is_seq(node[key]):
            return None
        t = doc.text
        kl, kc = node.lc.key(key)
        vl, vc = node.lc.value(key)
        line_start = t.starts[kl]
        start = t.offset(kl, kc)
        if vl != kl or t.text[line_start:start].strip() or t.scalar_end(t.offset(vl, vc)) is None:
            return None
        end = t.line_end(start)
        return [Splice(line_start, min(end + 1, len(t.text)), "")]

    @staticmethod
    def replace_value(doc: Doc, node: Any, index: Any, value: Any) -> list[Splice] | None:
        t = doc.text
        line, col = node.lc.item(index) if is_seq(node) else node.lc.value(index)
        start = t.offset(line, col)
        end = t.scalar_end(start, flow=_flow(node))
        if end is None:
            return None
        return [Splice(start, end, scalar_like(t.text[start:end], value))]

    # ---- checks ------------------------------------------------------------------------

    def run(self) -> list[Finding]:
        for doc in self.docs:
            spec = doc.spec()
            if spec is None:
                continue
            if doc.kind == "McpServer":
                self.legacy(doc, spec)
                self.server_runtime(doc, spec)
                self.secrets(doc, spec, ("env", "headers"))
                codex = spec.get("codex")
                if is_map(codex) and is_seq(codex.get("agents")):
                    self.refs(doc, codex["agents"], "Agent", self.agents, "spec.codex.agents")
            elif doc.kind == "Agent":
                servers = spec.get("mcpServers")
                if is_seq(servers):
                    self.refs(doc, servers, "McpServer", self.servers, "spec.mcpServers")
                self.skills(doc, spec.get("skills"), "spec.skills")
            elif doc.kind == "Channel":
                if isinstance(spec.get("agent"), str):
                    self.ref(doc, spec, "agent", "Agent", self.agents, "spec.agent")
                self.secrets(doc, spec, ("credentials",))
            elif doc.kind == "Gateway":
                agents = spec.get("agents")
                if is_map(agents) and isinstance(agents.get("defaultAgent"), str):
                    self.ref(doc, agents, "defaultAgent", "Agent", self.agents, "spec.agents.defaultAgent")
                defaults: Any = agents.get("defaults") if is_map(agents) else None
                if is_map(defaults):
                    self.skills(doc, defaults.get("skills"), "spec.agents.defaults.skills")
                self.plugins(doc, spec)
        self.collisions()
        return self.findings

    def legacy(self, doc: Doc, spec: Any) -> None:
        present = set(spec.keys())
        if "disabled" in spec:
            value = spec["disabled"]
            pos = spec.lc.key("disabled")
            if not isinstance(value, bool):
                message = 'unsupported key "disabled" (not a boolean)'
                self.add(doc, pos, "error", "mcp.legacy-disabled", message, "spec.disabled")
            elif "enabled" in present:
                self.add(
                    doc, pos, "error", "mcp.legacy-disabled",
                    'unsupported key "disabled" next to "enabled"', "spec.disabled",
                    "remove disabled (enabled wins)", self.delete(doc, spec, "disabled"),
                )  # fmt: skip
            else:
                self.add(
                    doc, pos, "error", "mcp.legacy-disabled", 'unsupported key "disabled"', "spec.disabled",
                    f"disabled: {str(value).lower()} -> enabled: {str(not value).lower()}",
                    self.rename(doc, spec, "disabled", "enabled", not value),
                )  # fmt: skip
                present.add("enabled")
        for old, new in LEGACY_SERVER_KEYS.items():
            if old not in spec:
                continue
            value = spec[old]
            pos = spec.lc.key(old)
            message = f'legacy key "{old}" is not supported'
            if new in present:
                self.add(
                    doc, pos, "error", "mcp.legacy-key", message, f"spec.{old}",
                    f"remove {old} ({new} wins)", self.delete(doc, spec, old),
                )  # fmt: skip
                continue
            if old in SECONDS_KEYS:
                if isinstance(value, bool) or not isinstance(value, int | float):
                    self.add(doc, pos, "error", "mcp.legacy-key", message, f"spec.{old}")
                    continue
                ms = round(value * 1000)
                self.add(
                    doc, pos, "error", "mcp.legacy-key", message, f"spec.{old}",
                    f"{old}: {value} (seconds) -> {new}: {ms}", self.rename(doc, spec, old, new, ms),
                )  # fmt: skip
            else:
                self.add(
                    doc, pos, "error", "mcp.legacy-key", message, f"spec.{old}",
                    f"{old} -> {new}", self.rename(doc, spec, old, new),
                )  # fmt: skip
            present.add(new)
        codex = spec.get("codex")
        if is_map(codex):
            for old, new in LEGACY_CODEX_KEYS.items():
                if old not in codex:
                    continue
                pos = codex.lc.key(old)
                message = f'legacy key "codex.{old}" is not supported'
                if new in codex:
                    fix, splices = f"remove codex.{old} (codex.{new} wins)", self.delete(doc, codex, old)
                else:
                    fix, splices = f"codex.{old} -> codex.{new}", self.rename(doc, codex, old, new)
                self.add(doc, pos, "error", "mcp.legacy-key", message, f"spec.codex.{old}", fix, splices)
        legacy_type = spec.get("type")
        if isinstance(legacy_type, str):
            pos = spec.lc.key("type")
            mapped = LEGACY_TYPE_ALIASES.get(legacy_type.strip().lower())
            if mapped is None:
                self.unknown_type(doc, spec, legacy_type, present)
            elif "transport" in present:
                self.add(
                    doc, pos, "warning", "mcp.legacy-type", f'"type: {legacy_type}" is a legacy alias',
                    "spec.type", "remove type (transport wins)", self.delete(doc, spec, "type"),
                )  # fmt: skip
            else:
                self.add(
                    doc, pos, "warning", "mcp.legacy-type", f'"type: {legacy_type}" is a legacy alias',
                    "spec.type", f"type: {legacy_type} -> transport: {mapped.value}",
                    self.rename(doc, spec, "type", "transport", mapped.value),
                )  # fmt: skip

    def unknown_type(self, doc: Doc, spec: Any, legacy_type: str, present: set[str]) -> None:
        """A ``type`` OpenClaw ignores: drop it, or make the transport it infers explicit."""
        pos = spec.lc.key("type")
        message = unknown_type_message(legacy_type, spec)
        inferred = inferred_transport(spec)
        if "transport" in present:
            fix, splices = "remove type (transport wins)", self.delete(doc, spec, "type")
        elif inferred is not None:
            fix = f"type: {legacy_type} -> transport: {inferred}"
            splices = self.rename(doc, spec, "type", "transport", inferred)
        else:
            fix, splices = None, None
        self.add(doc, pos, "warning", "mcp.unknown-type", message, "spec.type", fix, splices)

    def server_runtime(self, doc: Doc, spec: Any) -> None:
        if spec.get("enabled") is False or spec.get("disabled") is True:
            return
        base = doc.file.resolve().parent
        command = spec.get("command")
        if isinstance(command, str) and command.strip():
            cmd = command.strip()
            found = (
                (base / cmd).is_file() and os.access(base / cmd, os.X_OK)
                if "/" in cmd and not os.path.isabs(cmd)
                else shutil.which(cmd) is not None
            )
            if not found:
                self.add(
                    doc, spec.lc.value("command"), "warning", "mcp.command-not-found",
                    f"stdio command not found or not executable: {cmd}", "spec.command",
                )  # fmt: skip
        for key in ("cwd", "workingDirectory", "working_directory"):
            cwd = spec.get(key)
            if isinstance(cwd, str) and cwd.strip() and not (base / cwd.strip()).is_dir():
                self.add(
                    doc, spec.lc.value(key), "warning", "mcp.cwd-missing",
                    f"working directory does not exist: {cwd}", f"spec.{key}",
                )  # fmt: skip

    def secrets(self, doc: Doc, spec: Any, maps: tuple[str, ...]) -> None:
        for name in maps:
            values = spec.get(name)
            if not is_map(values):
                continue
            for key, value in values.items():
                if is_map(value) or not isinstance(key, str) or not is_sensitive_key(key):
                    continue
                text = str(value)
                if text.strip() and not text.startswith("$"):
                    self.add(
                        doc, values.lc.value(key), "warning", "secret.literal",
                        f"{name}.{key} holds a literal secret value", f"spec.{name}.{key}",
                    )  # fmt: skip

    def refs(self, doc: Doc, seq: Any, kind: str, known: list[str], path: str) -> None:
        for i, value in enumerate(seq):
            if isinstance(value, str):
                self.ref(doc, seq, i, kind, known, f"{path}[{i}]")

    def ref(self, doc: Doc, node: Any, index: Any, kind: str, known: list[str], path: str) -> None:
        name = node[index]
        fold = kind == "Agent"  # agent ids compare case-insensitively
        if (name.lower() in {k.lower() for k in known}) if fold else name in known:
            return
        pos = node.lc.item(index) if is_seq(node) else node.lc.value(index)
        close = sorted(difflib.get_close_matches(name, known, n=2, cutoff=0.6))
        message = f"{kind} {name!r} is not declared"
        if len(close) == 1:
            self.add(
                doc, pos, "error", "ref.unresolved", message, path,
                f"{name} -> {close[0]}", self.replace_value(doc, node, index, close[0]),
            )  # fmt: skip
        else:
            hint = f" (candidates: {', '.join(close)})" if close else ""
            self.add(doc, pos, "error", "ref.unresolved", message + hint, path)

    def skills(self, doc: Doc, seq: Any, path: str) -> None:
        """Allowlist entries that name no discovered skill (matched by name, as OpenClaw does)."""
        if self.known_skills is None or not is_seq(seq):
            return
        known = sorted(self.known_skills)
        for i, value in enumerate(seq):
            if not isinstance(value, str) or value.strip() in self.known_skills:
                continue
            message = f"skill {value.strip()!r} is not found in any skill root or inline Skill"
            self.unknown_item(doc, seq, i, known, "warning", "skills.unknown", message, f"{path}[{i}]")

    def plugins(self, doc: Doc, spec: Any) -> None:
        """``plugins.allow`` entries that name no bundled plugin (exact ids, as OpenClaw matches them)."""
        config = spec.get("config")
        blocks = [(spec.get("plugins"), "spec.plugins")]
        if is_map(config):
            blocks.append((config.get("plugins"), "spec.config.plugins"))
        # Plugins loaded from paths bring ids no catalog knows: report softly, never rewrite.
        opaque = any(_load_paths(node) for node, _ in blocks)
        catalog = bundled_plugins()
        known = sorted(catalog.ids)
        for node, base in blocks:
            seq: Any = node.get("allow") if is_map(node) else None
            if not is_seq(seq):
                continue
            for i, value in enumerate(seq):
                if not isinstance(value, str) or value in catalog.ids:
                    continue
                message = (
                    f"plugin {value!r} is not bundled with OpenClaw {catalog.openclaw_version}; "
                    "OpenClaw ignores the entry (plugin not found)"
                )
                if opaque:
                    message += " unless plugins.load.paths provides it"
                self.unknown_item(
                    doc, seq, i, known, "info" if opaque else "warning", "plugins.unknown", message,
                    f"{base}.allow[{i}]", fixable=not opaque,
                )  # fmt: skip

    def unknown_item(
        self,
        doc: Doc,
        seq: Any,
        i: int,
        known: list[str],
        severity: str,
        code: str,
        message: str,
        path: str,
        *,
        fixable: bool = True,
    ) -> None:
        """Report ``seq[i]``; rewrite it only when exactly one known name is close."""
        value = seq[i]
        close = sorted(difflib.get_close_matches(value.strip(), known, n=2, cutoff=0.6))
        if fixable and len(close) == 1:
            self.add(
                doc, seq.lc.item(i), severity, code, message, path,
                f"{value} -> {close[0]}", self.replace_value(doc, seq, i, close[0]),
            )  # fmt: skip
            return
        hint = f" (candidates: {', '.join(close)})" if close else ""
        self.add(doc, seq.lc.item(i), severity, code, message + hint, path)

    def collisions(self) -> None:
        servers = [d for d in self.docs if d.kind == "McpServer"]
        safe = assign_server_names([d.name for d in servers])
        for doc, final in zip(servers, safe, strict=True):
            base = assign_server_names([doc.name])[0]
            if final.lower() != doc.name.lower() and base.lower() != final.lower():
                meta = doc.data["metadata"]
                self.add(
                    doc, meta.lc.value("name"), "warning", "mcp.name-collision",
                    f"MCP server {doc.name!r} sanitizes to {base!r}, which another server already uses; "
                    f"its tools will be prefixed {final!r}", "metadata.name",
                )  # fmt: skip


def doctor_paths(
    paths: list[str | os.PathLike[str]], *, fix: bool = False, known_skills: set[str] | None = None
) -> DoctorReport:
    """Check every resource file under ``paths``; with ``fix``, rewrite fixable findings in place.

    ``known_skills`` (every skill name discovered for the folder) enables the allowlist check.
    """
    report = DoctorReport()
    diags = Diagnostics()
    files = discover_files(paths, diags)
    for d in diags:
        where = d.location
        report.findings.append(
            Finding(where.file if where else "", where.line if where else 0, where.column if where else 0,
                    d.severity.value, d.code, d.message)
        )  # fmt: skip
    texts: dict[Path, str] = {}
    docs: list[Doc] = []
    for path in files:
        loaded = load_resources(path, report)
        if loaded is not None:
            texts[path] = loaded[0]
            docs.extend(loaded[1])
    found = _Checker(docs, known_skills).run()
    report.findings.extend(found)
    if fix:
        fixable = [f for f in report.findings if f.splices]
        for path, original in texts.items():
            mine = [f for f in fixable if f.file == str(path)]
            if not mine:
                continue
            updated = apply_splices(original, [s for f in mine for s in f.splices])
            load_documents(updated)  # the result must still parse; raises otherwise
            if updated != original:
                mode = path.stat().st_mode & 0o777
                atomic_write_bytes(path, updated.encode("utf-8"), mode=mode)
                report.written.append(str(path))
            for f in mine:
                f.fixed = True
    report.findings.sort(key=lambda f: (f.file, f.line, f.column, f.code))
    return report


__all__ = ["DoctorReport", "Finding", "doctor_paths"]
