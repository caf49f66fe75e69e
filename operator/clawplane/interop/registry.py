"""An MCP Registry ``server.json`` → McpServer resources.

A server.json (``modelcontextprotocol/registry``, ``docs/reference/server-json``) lists the ways to
run one server: ``packages[]`` (``registryType`` npm/pypi/oci/nuget, ``identifier``, ``version``,
``runtimeHint``, ``runtimeArguments``/``packageArguments``, ``environmentVariables``,
``transport``) and ``remotes[]`` (``type``, ``url`` with ``{variables}``, ``headers``). The first
usable way becomes the McpServer named after the server (the part after the ``/``); every other
way is imported too, disabled, as ``<name>-<registryType>`` or ``<name>-remote``.

- npm → ``npx -y <identifier>@<version>``, pypi → ``uvx <identifier>@<version>``, nuget →
  ``dnx <identifier>@<version>``, oci → ``docker run -i --rm -e VAR … <image>:<version>``; a
  ``runtimeHint`` names the command and ``runtimeArguments`` replace the defaults.
- Required or secret environment variables become ``valueFrom.env`` references to the variable of
  the same name, never literals; an optional one without a value is left to the server's default.
- ``{variables}`` in urls, headers and arguments take their ``value`` or ``default``; a required one
  without either cannot be filled in: that value is reported, and a header that needs a secret
  variable becomes one reference to a variable holding the whole header value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from clawplane.interop.jsonload import load_json5
from clawplane.interop.positions import json5_positions
from clawplane.interop.report import ConfigPath, ImportReport
from clawplane.interop.result import ImportResult, resource_docs, resource_name

_VAR = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_RUNTIMES = {"npm": "npx", "pypi": "uvx", "nuget": "dnx", "oci": "docker"}
_DEFAULT_RUNTIME_ARGS = {"npx": ["-y"], "docker": ["run", "-i", "--rm"]}


def import_server_json(text: str, source: str) -> ImportResult:
    """Import one server.json."""
    doc = load_json5(text, source)
    if not isinstance(doc, dict):
        raise ValueError(f"{source}: the top level must be an object")
    report = ImportReport(source, json5_positions(text))
    raw = doc.get("name")
    if not isinstance(raw, str) or not raw.strip():
        report.unmapped(("name",), "server.json has no name")
        return ImportResult({}, report.diagnostics, format="mcp-registry")
    base = raw.rsplit("/", 1)[-1]
    ways: list[tuple[str, ConfigPath, dict[str, Any] | None]] = []
    for i, package in enumerate(doc.get("packages") or []):
        path: ConfigPath = ("packages", i)
        kind = str(package.get("registryType", "package")) if isinstance(package, Mapping) else "package"
        spec = _package(package, path, report) if isinstance(package, Mapping) else None
        ways.append((kind, path, spec))
    for i, remote in enumerate(doc.get("remotes") or []):
        path = ("remotes", i)
        spec = _remote(remote, base, path, report) if isinstance(remote, Mapping) else None
        ways.append(("remote", path, spec))
    if not ways:
        report.unmapped((), "server.json has neither packages nor remotes")
    servers: dict[str, dict[str, Any]] = {}
    origins: dict[str, ConfigPath] = {}
    taken: set[str] = set()
    primary = True
    for kind, path, spec in ways:
        if spec is None:
            continue
        name = resource_name(base if primary else f"{base}-{kind}", taken, report, path)
        if name is None:
            continue
        if primary:
            report.info("import.registry-name", ("name",), f"{raw} imported as McpServer {name!r}")
        else:
            spec["enabled"] = False
            report.info(
                "import.alternative", path, f"another way to run {raw}; imported disabled as {name!r}"
            )
        servers[name] = spec
        origins[name] = path
        primary = False
    docs = resource_docs("McpServer", servers, report, lambda n: origins[n])
    return ImportResult({"McpServer": docs}, report.diagnostics, format="mcp-registry")


def _package(package: Mapping[str, Any], path: ConfigPath, report: ImportReport) -> dict[str, Any] | None:
    registry = package.get("registryType")
    identifier = package.get("identifier")
    version = package.get("version")
    declared_transport = package.get("transport")
    transport: Mapping[str, Any] = declared_transport if isinstance(declared_transport, Mapping) else {}
    if not isinstance(identifier, str) or registry not in _RUNTIMES:
        report.unmapped(
            path,
            f"registryType {registry!r} cannot be run from a command line here "
            f"(supported: {', '.join(sorted(_RUNTIMES))})",
        )
        return None
    if transport.get("type", "stdio") != "stdio":
        report.unmapped(
            (*path, "transport"),
            f"the package serves {transport.get('type')} on a local port "
            "it starts itself; clawplane runs stdio packages only",
        )
        return None
    declared = package.get("environmentVariables") or []
    env_vars = _environment(declared, (*path, "environmentVariables"), report)
    command = str(package.get("runtimeHint") or _RUNTIMES[registry])
    runtime_args = _arguments(package.get("runtimeArguments"), (*path, "runtimeArguments"), report)
    if runtime_args is None:
        runtime_args = list(_DEFAULT_RUNTIME_ARGS.get(command, []))
        if registry == "oci":
            runtime_args += [a for name in env_vars for a in ("-e", name)]
    pinned = (
        identifier
        if not isinstance(version, str)
        else (f"{identifier}:{version}" if registry == "oci" else f"{identifier}@{version}")
    )
    package_args = _arguments(package.get("packageArguments"), (*path, "packageArguments"), report) or []
    spec: dict[str, Any] = {
        "transport": "stdio",
        "command": command,
        "args": [*runtime_args, pinned, *package_args],
    }
    if env_vars:
        spec["env"] = env_vars
    return spec


def _environment(items: Sequence[Any], path: ConfigPath, report: ImportReport) -> dict[str, Any]:
    env: dict[str, Any] = {}
    for i, item in enumerate(items):
        here = (*path, i)
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            report.unmapped(here, "an environment variable needs a name")
            continue
        name = item["name"]
        secret, required = bool(item.get("isSecret")), bool(item.get("isRequired"))
        value = _filled(item.get("value"), item.get("variables") or {})
        if value is not None and not secret:
            env[name] = value
        elif secret or required:
            env[name] = {"valueFrom": {"env": name}}
            what = "secret" if secret else "required"
            report.info(
                "import.env-reference", here, f"{what} {name}: read from the environment variable {name}"
            )
        else:
            report.info(
                "import.env-optional", here, f"optional {name} not set (the server's default applies)"
            )
    return env


def _arguments(items: Any, path: ConfigPath, report: ImportReport) -> list[str] | None:
    if not isinstance(items, list):
        return None
    args: list[str] = []
    for i, item in enumerate(items):
        here = (*path, i)
        if not isinstance(item, Mapping):
            report.unmapped(here, "an argument must be an object")
            continue
        value = _filled(item.get("value"), item.get("variables") or {})
        if value is None and isinstance(item.get("default"), str):
            value = item["default"]
        if item.get("type") == "named" and isinstance(item.get("name"), str):
            args.append(item["name"])
            if value is not None:
                args.append(value)
        elif value is not None:
            args.append(value)
        else:
            report.unmapped(
                here,
                f"argument {item.get('valueHint') or item.get('name')!r} has no value to fill in",
                "add it to the imported args yourself",
            )
    return args


def _remote(
    remote: Mapping[str, Any], base: str, path: ConfigPath, report: ImportReport
) -> dict[str, Any] | None:
    found = remote.get("variables")
    variables: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    kind = remote.get("type")
    url = _filled(remote.get("url"), variables)
    if kind not in ("streamable-http", "sse") or url is None:
        report.unmapped(
            path,
            f"remote of type {kind!r} with url {remote.get('url')!r} cannot be filled in "
            "(a variable has no value or default)",
        )
        return None
    spec: dict[str, Any] = {"transport": kind, "url": url}
    headers: dict[str, Any] = {}
    for i, header in enumerate(remote.get("headers") or []):
        here = (*path, "headers", i)
        if not isinstance(header, Mapping) or not isinstance(header.get("name"), str):
            report.unmapped(here, "a header needs a name")
            continue
        name = header["name"]
        merged = {**variables, **(header.get("variables") or {})}
        value = _filled(header.get("value"), merged)
        secret = bool(header.get("isSecret")) or _uses_secret(header.get("value"), merged)
        if value is not None and not secret:
            headers[name] = value
        elif secret or header.get("isRequired"):
            var = re.sub(r"[^A-Za-z0-9]+", "_", f"{base}_{name}").upper().strip("_")
            headers[name] = {"valueFrom": {"env": var}}
            shape = f" (the whole value, {header['value']!r})" if isinstance(header.get("value"), str) else ""
            report.warn(
                "import.header-reference",
                here,
                f"header {name} is read from the environment variable {var}{shape}",
                f"export {var} before applying",
            )
    if headers:
        spec["headers"] = headers
    return spec


def _filled(template: Any, variables: Mapping[str, Any]) -> str | None:
    """``template`` with its ``{variables}`` replaced by their value or default; None when one has neither."""
    if not isinstance(template, str):
        return None
    missing = False

    def fill(m: re.Match[str]) -> str:
        nonlocal missing
        var = variables.get(m.group(1))
        found = var.get("value") or var.get("default") if isinstance(var, Mapping) else None
        if not isinstance(found, str) or (isinstance(var, Mapping) and var.get("isSecret")):
            missing = True
            return m.group(0)
        return found

    out = _VAR.sub(fill, template)
    return None if missing else out


def _uses_secret(template: Any, variables: Mapping[str, Any]) -> bool:
    if not isinstance(template, str):
        return False
    return any(
        isinstance(variables.get(v), Mapping) and variables[v].get("isSecret") for v in _VAR.findall(template)
    )
