"""The shipped built-in provider catalog equals what the pinned OpenClaw knows (so it goes stale loudly).

Regenerate with ``python -m tests.oracles.provider_catalog`` after bumping OpenClaw in
tests/oracles/install.sh. Beyond equality with the generator, the overlay ids are checked
against OpenClaw's own config validation: every one of them may omit ``baseUrl`` and
``models``, and an id outside the list may not.
"""

from __future__ import annotations

from tests.oracles import locate
from tests.oracles.provider_catalog import CATALOG, REGENERATE, catalog_from, overlay_ids, render
from tests.oracles.runners import OpenClawOracle

from clawplane.validation.modelcatalog import builtin_providers


def test_shipped_catalog_is_what_openclaw_knows(openclaw: OpenClawOracle) -> None:
    package = locate.openclaw_package_dir()
    assert package is not None
    openclaw.write_config({})
    fresh = catalog_from(
        openclaw.json("plugins", "list", "--json"), overlay_ids(package), locate.pins()["OPENCLAW_VERSION"]
    )
    assert CATALOG.read_text(encoding="utf-8") == render(fresh), f"stale provider catalog: run {REGENERATE}"
    catalog = builtin_providers()
    assert catalog.overlay_ids == frozenset(fresh["overlayIds"])
    assert catalog.plugin_providers == fresh["pluginProviders"]
    assert {"anthropic", "openai", "ollama", "claude-cli"} <= catalog.ids


def test_openclaw_lets_exactly_the_overlay_ids_omit_base_url_and_models(openclaw: OpenClawOracle) -> None:
    overlays = sorted(builtin_providers().overlay_ids)
    openclaw.write_config({"models": {"providers": {pid: {} for pid in overlays}}})
    accepted = openclaw.json("config", "validate", "--json")
    assert accepted["valid"] is True, accepted
    outsiders = ["acme-llm", "apple-fm"]  # apple-fm: a bundled plugin provider, but no overlay
    assert not set(outsiders) & set(overlays)
    openclaw.write_config({"models": {"providers": {pid: {} for pid in outsiders}}})
    refused = openclaw.json("config", "validate", "--json")
    assert refused["valid"] is False
    paths = sorted(issue["path"] for issue in refused["issues"])
    assert paths == [f"models.providers.{pid}.{key}" for pid in outsiders for key in ("baseUrl", "models")]
