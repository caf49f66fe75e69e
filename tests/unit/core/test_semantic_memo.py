"""The semantic checks' memo: a pass that reuses it finds exactly what a pass without it finds.

Files are validated one by one, and an unchanged file keeps its resource objects between
passes, as the validation cache hands them back.
"""

from __future__ import annotations

import pytest

from clawplane.diagnostics import Diagnostic, Diagnostics
from clawplane.loading.sources import read_text
from clawplane.validation import LoadedResource, semantic, validate_texts
from clawplane.validation.rawrefs import raw_resource
from clawplane.validation.semantic import SemanticMemo, check_all

HEAD = "apiVersion: clawplane.dev/v1alpha1\n"
SERVERS = "---\n".join(
    HEAD + f"kind: McpServer\nmetadata:\n  name: s{i}\nspec:\n  command: node\n  env:\n    LOG_LEVEL: info\n"
    for i in range(3)
)
AGENTS = HEAD + "kind: Agent\nmetadata:\n  name: a0\nspec:\n  mcpServers: [s0, s1]\n"


def loaded(name: str, text: str) -> list[LoadedResource]:
    return validate_texts([(name, text)]).resources


def both(items: list[LoadedResource], memo: SemanticMemo) -> list[Diagnostic]:
    """Checks with the memo, asserted equal to checks without one."""
    found = check_all(items, memo=memo)
    assert found == check_all(items)
    return found


def codes(found: list[Diagnostic]) -> list[str]:
    return [d.code for d in found]


@pytest.fixture
def set_wide_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = semantic._set_wide

    def counted(*args: object, **kwargs: object) -> list[Diagnostic]:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(semantic, "_set_wide", counted)
    return calls


def test_an_edit_no_set_wide_check_reads_reuses_their_findings(set_wide_calls: list[int]) -> None:
    memo = SemanticMemo()
    agents = loaded("agents.yaml", AGENTS)
    assert both(loaded("servers.yaml", SERVERS) + agents, memo) == []
    edited = loaded("servers.yaml", SERVERS.replace("LOG_LEVEL: info", "LD_PRELOAD: x", 1))
    calls = len(set_wide_calls)
    found = check_all(edited + agents, memo=memo)
    assert len(set_wide_calls) == calls  # reused
    assert codes(found) == ["mcp.env-blocked"]  # the edited server's own check ran again
    assert found == check_all(edited + agents)


def test_a_renamed_server_breaks_the_reference_to_it() -> None:
    memo = SemanticMemo()
    agents = loaded("agents.yaml", AGENTS)
    assert both(loaded("servers.yaml", SERVERS) + agents, memo) == []
    renamed = loaded("servers.yaml", SERVERS.replace("name: s1", "name: s9"))
    assert codes(both(renamed + agents, memo)) == ["ref.unresolved"]
    assert both(loaded("servers.yaml", SERVERS) + agents, memo) == []


def test_a_changed_reference_or_codex_projection_is_checked_again() -> None:
    memo = SemanticMemo()
    servers = loaded("servers.yaml", SERVERS)
    assert both(servers + loaded("agents.yaml", AGENTS), memo) == []
    assert codes(both(servers + loaded("agents.yaml", AGENTS.replace("s1]", "s7]")), memo)) == ["ref.unresolved"]
    codex = SERVERS.replace("  command: node\n", "  command: node\n  codex:\n    agents: [a0]\n", 1)
    servers = loaded("servers.yaml", codex)
    assert both(servers + loaded("agents.yaml", AGENTS), memo) == []
    agents = loaded("agents.yaml", AGENTS.replace("[s0, s1]", "[s1]"))
    assert codes(both(servers + agents, memo)) == ["codex.agent-without-server"]
    servers = loaded("servers.yaml", codex.replace("agents: [a0]", "agents: [zz]"))
    assert codes(both(servers + agents, memo)) == ["ref.unresolved"]


def test_findings_move_with_a_resource_whose_facts_did_not_change(set_wide_calls: list[int]) -> None:
    memo = SemanticMemo()
    agents = loaded("agents.yaml", AGENTS)
    twice = loaded("more.yaml", HEAD + "kind: Agent\nmetadata:\n  name: a0\n")
    first = both(loaded("servers.yaml", SERVERS) + agents + twice, memo)
    assert codes(first) == ["resource.duplicate"]
    moved = loaded("more.yaml", "# a comment above\n" + HEAD + "kind: Agent\nmetadata:\n  name: a0\n")
    servers = loaded("servers.yaml", SERVERS)
    calls = len(set_wide_calls)
    again = check_all(servers + agents + moved, memo=memo)
    assert len(set_wide_calls) == calls + 1  # found something last time: not reused for new objects
    assert again == check_all(servers + agents + moved)
    assert again[0].location.line == first[0].location.line + 1


def test_an_invalid_resource_is_checked_and_not_reused(set_wide_calls: list[int]) -> None:
    memo = SemanticMemo()
    items = loaded("servers.yaml", SERVERS)
    bad = HEAD + "kind: Agent\nmetadata:\n  name: b\nspec:\n  mcpServers: [s0, nope]\n  model: 3\n"
    raws = [r for doc in read_text("bad.yaml", bad, Diagnostics()) if (r := raw_resource(doc)) is not None]
    assert both(items, memo) == []
    found = check_all(items, memo=memo, invalid=raws)
    assert codes(found) == ["ref.unresolved"] and found == check_all(items, invalid=raws)
    calls = len(set_wide_calls)
    assert both(items, memo) == []
    assert len(set_wide_calls) == calls + 2  # the memo's pass, then the one without it
