"""MCP Registry server.json → McpServer resources, over files written from the registry's schema.

Every fixture is first validated against the schema (tests/fixtures/mcp-registry/server.schema.json,
the registry's published constraints restated offline), so the importer is tested on what the
registry accepts; a file the schema rejects must really be rejected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from clawplane.interop.sources import detect_format, import_file
from clawplane.validation import validate_paths

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mcp-registry"
SCHEMA = json.loads((FIXTURES / "server.schema.json").read_text())
VALID = ["npm-stdio.json", "oci.json", "pypi-runtime-args.json", "remote-headers-variables.json"]


def _validator() -> jsonschema.Draft202012Validator:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    return jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _specs(name: str, tmp_path: Path) -> tuple[dict[str, dict[str, Any]], Any]:
    source = tmp_path / "server.json"
    source.write_text((FIXTURES / name).read_text())
    result = import_file(source)
    assert result.format == "mcp-registry"
    return {d["metadata"]["name"]: d["spec"] for d in result.documents.get("McpServer", [])}, result


@pytest.mark.parametrize("name", VALID)
def test_fixtures_are_valid_server_json(name: str) -> None:
    _validator().validate(json.loads((FIXTURES / name).read_text()))


def test_the_schema_rejects_what_the_registry_rejects() -> None:
    errors = list(_validator().iter_errors(json.loads((FIXTURES / "invalid-latest.json").read_text())))
    assert errors and "latest" in str(errors[0].instance)


def test_npm_stdio_required_variables_become_references(tmp_path: Path) -> None:
    specs, result = _specs("npm-stdio.json", tmp_path)
    assert specs == {"weather": {
        "transport": "stdio", "command": "npx",
        "args": ["-y", "@example/weather-mcp@1.4.2", "--units", "metric"],
        "env": {"OPENWEATHER_API_KEY": {"valueFrom": {"env": "OPENWEATHER_API_KEY"}},
                "WEATHER_CACHE_DIR": {"valueFrom": {"env": "WEATHER_CACHE_DIR"}}},
    }}
    assert "io.github.example/weather" in " ".join(d.message for d in result.diagnostics)  # renamed, said so
    assert result.complete


def test_pypi_with_runtime_arguments_and_a_filled_in_variable(tmp_path: Path) -> None:
    specs, result = _specs("pypi-runtime-args.json", tmp_path)
    assert specs["sqlite-explorer"] == {
        "transport": "stdio", "command": "uvx",
        "args": ["--python", "3.12", "--with", "sqlite-utils==3.38", "mcp-sqlite-explorer@0.9.0",
                 "data.db", "--read-only"],
    }
    assert result.complete


def test_oci_runs_the_pinned_image_and_passes_its_variables(tmp_path: Path) -> None:
    specs, _ = _specs("oci.json", tmp_path)
    assert specs["postgres"] == {
        "transport": "stdio", "command": "docker",
        "args": ["run", "-i", "--rm", "-e", "DATABASE_URL", "-e", "PG_STATEMENT_TIMEOUT", "example/mcp-postgres:2.0.1"],
        "env": {"DATABASE_URL": {"valueFrom": {"env": "DATABASE_URL"}}, "PG_STATEMENT_TIMEOUT": "30s"},
    }


def test_remote_with_headers_and_variables(tmp_path: Path) -> None:
    specs, result = _specs("remote-headers-variables.json", tmp_path)
    assert specs == {"tickets": {
        "transport": "streamable-http", "url": "https://acme.tickets.example.com/mcp",
        "headers": {"Authorization": {"valueFrom": {"env": "TICKETS_AUTHORIZATION"}}, "X-Client": "clawplane"},
    }}
    warned = [d for d in result.diagnostics if d.code == "import.header-reference"]
    assert len(warned) == 1 and "Bearer {api_key}" in warned[0].message
    # The SSE remote needs a region nobody gave, the mcpb package cannot run here: both reported.
    assert sorted(d.path for d in result.lost) == ["packages[0]", "remotes[1]"]
    assert all(d.location is not None and d.location.line > 1 for d in result.lost)


def test_alternatives_are_imported_disabled(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "npm-stdio.json").read_text())
    doc["remotes"] = [{"type": "sse", "url": "https://weather.example.com/sse"}]
    _validator().validate(doc)
    source = tmp_path / "server.json"
    source.write_text(json.dumps(doc, indent=2))
    specs = {d["metadata"]["name"]: d["spec"] for d in import_file(source).documents["McpServer"]}
    assert specs["weather"]["command"] == "npx"
    assert specs["weather-remote"] == {"transport": "sse", "url": "https://weather.example.com/sse", "enabled": False}


@pytest.mark.parametrize("name", VALID)
def test_imported_resources_validate(name: str, tmp_path: Path) -> None:
    _, result = _specs(name, tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    for file_name, text in result.files(source=name).items():
        (out / file_name).write_text(text)
    assert not validate_paths([out]).diagnostics.has_errors


def test_server_json_is_recognised_by_content_too(tmp_path: Path) -> None:
    text = (FIXTURES / "oci.json").read_text()
    assert detect_format(tmp_path / "postgres.json", text) == "mcp-registry"
