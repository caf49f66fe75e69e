"""The folder check's memo: an edited resource's paths are checked as written now, and a
Gateway's ``allowedPaths`` still cover what they list, whichever file changed."""

from __future__ import annotations

from pathlib import Path

from clawplane.validation import ValidationCache, validate_paths
from clawplane.validation.paths import check_paths

HEAD = '{"apiVersion":"clawplane.dev/v1alpha1",'


def server(cwd: str) -> str:
    return HEAD + f'"kind":"McpServer","metadata":{{"name":"walker"}},"spec":{{"command":"true","cwd":"{cwd}"}}}}'


def gateway(allowed: list[str]) -> str:
    paths = ",".join(f'"{p}"' for p in allowed)
    return HEAD + f'"kind":"Gateway","metadata":{{"name":"default"}},"spec":{{"allowedPaths":[{paths}]}}}}'


def outside_codes(folder: Path, cache: ValidationCache) -> list[str]:
    found = validate_paths([folder], cache=cache)
    codes = [d.code for d in found.diagnostics if d.code == "path.outside-folder"]
    assert codes == [d.code for d in check_paths(found.resources, [folder])]  # as without the memo
    return codes


def test_edits_to_paths_and_allowed_paths_are_seen(tmp_path: Path) -> None:
    folder, outside = tmp_path / "folder", tmp_path / "outside"
    folder.mkdir()
    outside.mkdir()
    cache = ValidationCache(racy_window_ns=0)
    (folder / "server.yaml").write_text(server("."))
    (folder / "gateway.yaml").write_text(gateway([]))
    assert outside_codes(folder, cache) == []
    assert cache.paths  # kept for the next pass
    (folder / "server.yaml").write_text(server("../outside"))
    assert outside_codes(folder, cache) == ["path.outside-folder"]
    (folder / "gateway.yaml").write_text(gateway([str(outside)]))
    assert outside_codes(folder, cache) == []
    (folder / "gateway.yaml").write_text(gateway([]) + "\n")
    assert outside_codes(folder, cache) == ["path.outside-folder"]
    (folder / "server.yaml").write_text(server("./"))
    assert outside_codes(folder, cache) == []
