"""The shipped bundled-plugin catalog equals what the pinned OpenClaw lists (so it goes stale loudly).

Regenerate with ``python -m tests.oracles.plugin_catalog`` after bumping OpenClaw in
tests/oracles/install.sh.
"""

from __future__ import annotations

from tests.oracles import locate
from tests.oracles.plugin_catalog import CATALOG, COMMAND, REGENERATE, catalog_from, render
from tests.oracles.runners import OpenClawOracle

from clawplane.validation.plugins import bundled_plugins


def test_shipped_catalog_is_what_openclaw_lists(openclaw: OpenClawOracle) -> None:
    openclaw.write_config({})
    listing = openclaw.json(*COMMAND)
    fresh = catalog_from(listing, locate.pins()["OPENCLAW_VERSION"])
    assert CATALOG.read_text(encoding="utf-8") == render(fresh), f"stale plugin catalog: run {REGENERATE}"
    version = openclaw.run("--version", check=True).stdout
    assert f"OpenClaw {fresh['openclaw']} " in version
    catalog = bundled_plugins()
    assert catalog.ids == frozenset(fresh["plugins"]) and catalog.openclaw_version == fresh["openclaw"]


def test_openclaw_ignores_the_allow_entries_doctor_reports(openclaw: OpenClawOracle) -> None:
    """What doctor calls unknown is exactly what OpenClaw warns about (exact, case-sensitive ids)."""
    allow = ["browser", "anthropik", "Browser", " canvas ", "minimax-portal-auth"]
    openclaw.write_config({"plugins": {"allow": allow}})
    result = openclaw.json("config", "validate", "--json")
    assert result["valid"] is True
    warned = {w["message"] for w in result["warnings"] if w["path"] == "plugins.allow"}
    unknown = [a for a in allow if a not in bundled_plugins().ids]
    assert unknown == allow[1:]
    assert len(warned) == len(unknown)
    assert all(
        any(repr_ in m for m in warned)
        for repr_ in ("anthropik", '"Browser"', " canvas ", "minimax-portal-auth")
    )
