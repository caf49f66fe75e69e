"""Install specs of a skill manifest (``metadata.openclaw.install[]``), validated as OpenClaw does.

A spec names a ``kind`` (or ``type``): ``brew``, ``node``, ``go``, ``uv`` or
``download``. Unsafe values (leading ``-``, ``..``, backslashes, URLs where a
package name belongs, npm ranges) are dropped; a spec whose required field
(formula, package, module or http(s) URL) is then missing is dropped whole, and
so is a download with an invalid ``sha256``.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import asdict, dataclass
from typing import Any

from clawplane._utils.fastinit import fast_init
from clawplane.jscompat import JS_WHITESPACE, js_trim, normalize_string_list

__all__ = ["INSTALL_KINDS", "InstallSpec", "parse_install_spec", "valid_npm_spec"]

INSTALL_KINDS = ("brew", "node", "go", "uv", "download")

_BREW = re.compile(r"^[A-Za-z0-9][A-Za-z0-9@+._/-]*\Z")
_GO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~+\-/]*(?:@[A-Za-z0-9][A-Za-z0-9._~+\-/]*)?\Z")
_UV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-\[\]=<>!~+,]*\Z")
_SHA256 = re.compile(r"^[a-f0-9]{64}\Z")
_NPM_NAME = re.compile(r"^[a-z0-9][a-z0-9\-._~]*\Z")
_NPM_SCOPED = re.compile(r"^@[a-z0-9][a-z0-9\-._~]*/[a-z0-9][a-z0-9\-._~]*\Z")
_DIST_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_NUM = r"(?:0|[1-9]\d*)"
_PRE_ID = r"(?:0|[1-9]\d*|\d*[a-zA-Z-][a-zA-Z0-9-]*)"
_SEMVER = re.compile(
    rf"^v?{_NUM}\.{_NUM}\.{_NUM}(?:-{_PRE_ID}(?:\.{_PRE_ID})*)?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?\Z"
)
_WS = re.compile(f"[{re.escape(JS_WHITESPACE)}]")
_DEFAULT_PORTS = {"http": "80", "https": "443"}


@fast_init
@dataclass(frozen=True, slots=True)
class InstallSpec:
    """One validated way to install what a skill needs."""

    kind: str
    id: str | None = None
    label: str | None = None
    bins: tuple[str, ...] = ()
    os: tuple[str, ...] = ()
    formula: str | None = None
    package: str | None = None
    module: str | None = None
    url: str | None = None
    sha256: str | None = None
    archive: str | None = None
    extract: bool | None = None
    strip_components: float | None = None
    target_dir: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """OpenClaw's camelCase keys, absent fields omitted."""
        names = {"strip_components": "stripComponents", "target_dir": "targetDir"}
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if value is None or value == ():
                continue
            out[names.get(key, key)] = list(value) if isinstance(value, tuple) else value
        return out


def parse_install_spec(raw: Any) -> InstallSpec | None:
    """A validated spec, or ``None`` when OpenClaw would drop it."""
    if not isinstance(raw, dict):
        return None
    kind_raw = raw.get("kind")
    if not isinstance(kind_raw, str):
        kind_raw = raw.get("type")
    kind = js_trim(kind_raw).lower() if isinstance(kind_raw, str) else ""
    if kind not in INSTALL_KINDS:
        return None
    sha256: str | None = None
    if kind == "download" and "sha256" in raw:
        sha_raw = raw["sha256"]
        if not isinstance(sha_raw, str) or not _SHA256.match(js_trim(sha_raw).lower()):
            return None
        sha256 = js_trim(sha_raw).lower()
    # Every skill's specs are read on a cold scan: absent keys are skipped, not validated as None.
    formula = _safe_brew(raw["formula"]) if "formula" in raw else None
    if not formula and "cask" in raw:
        formula = _safe_brew(raw["cask"])
    package = None
    if kind == "node" and "package" in raw:
        package = _safe_npm(raw["package"])
    elif kind == "uv" and "package" in raw:
        package = _safe_package(raw["package"], _UV)
    module = _safe_package(raw["module"], _GO) if "module" in raw else None
    url = _safe_url(raw["url"]) if "url" in raw else None
    required = (
        formula if kind == "brew" else url if kind == "download" else module if kind == "go" else package
    )
    if not required:
        return None
    get = raw.get
    spec_id, label, archive, target_dir = get("id"), get("label"), get("archive"), get("targetDir")
    extract = get("extract")
    return InstallSpec(
        kind,
        spec_id if isinstance(spec_id, str) and spec_id else None,
        label if isinstance(label, str) and label else None,
        normalize_string_list(raw["bins"]) if "bins" in raw else (),
        normalize_string_list(raw["os"]) if "os" in raw else (),
        formula,
        package,
        module,
        url,
        sha256,
        archive if isinstance(archive, str) else None,
        extract if isinstance(extract, bool) else None,
        _number(get("stripComponents")),
        target_dir if isinstance(target_dir, str) else None,
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _trimmed(value: Any) -> str | None:
    return (js_trim(value) or None) if isinstance(value, str) else None


def _safe_brew(raw: Any) -> str | None:
    value = _trimmed(raw)
    if not value or value.startswith("-") or "\\" in value or ".." in value:
        return None
    return value if _BREW.match(value) else None


def _safe_package(raw: Any, pattern: re.Pattern[str]) -> str | None:
    value = _trimmed(raw)
    if not value or value.startswith("-") or "\\" in value or "://" in value:
        return None
    return value if pattern.match(value) else None


def _safe_npm(raw: Any) -> str | None:
    value = _trimmed(raw)
    if not value or value.startswith("-"):
        return None
    return value if valid_npm_spec(value) else None


def valid_npm_spec(spec: str) -> bool:
    """True for ``<name>`` or ``<name>@<exact version or dist-tag>`` from the npm registry."""
    spec = js_trim(spec)
    if not spec or _WS.search(spec) or any(bad in spec for bad in ("://", "#", ":")):
        return False
    at = spec.rfind("@")
    name, selector = (spec[:at], spec[at + 1 :]) if at > 0 else (spec, None)
    pattern = _NPM_SCOPED if name.startswith("@") else _NPM_NAME
    if not pattern.match(name):
        return False
    if selector is None:
        return True
    if not selector or "/" in selector or "\\" in selector:
        return False
    return bool(_SEMVER.match(selector) or _DIST_TAG.match(selector))


def _safe_url(raw: Any) -> str | None:
    """An http(s) URL in WHATWG serialized form (lower-case host, default port dropped)."""
    value = _trimmed(raw)
    if not value or _WS.search(value):
        return None
    try:
        parts = urllib.parse.urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    netloc = parts.hostname.lower()
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password else "")
        netloc = f"{userinfo}@{netloc}"
    if port is not None and str(port) != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    path = _remove_dot_segments(parts.path) or "/"
    query = f"?{parts.query}" if parts.query or value.endswith("?") else ""
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    return f"{scheme}://{netloc}{urllib.parse.quote(path, safe='/%:@!$&()*+,;=~')}{query}{fragment}"


def _remove_dot_segments(path: str) -> str:
    out: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if len(out) > 1:
                out.pop()
        elif segment != ".":
            out.append(segment)
    result = "/".join(out)
    if path.endswith(("/.", "/..")):
        result += "/"
    return result
