"""The built-in model-provider catalog clawplane ships, regenerated from the real OpenClaw.

``python -m tests.oracles.provider_catalog`` rewrites
``operator/clawplane/validation/data/openclaw-providers.json`` from two sources of the
installed OpenClaw:

- ``overlayIds``: the provider ids OpenClaw's config contract knows as built-in (its
  ``models.providers`` check lets these omit ``baseUrl`` and ``models``). The set lives in
  the dist chunk holding ``//#region src/config/model-provider-overlay-ids.ts``; chunk
  names carry build hashes, so the chunk is found by that marker.
- ``pluginProviders``: model provider and CLI backend ids of the bundled plugins, from
  ``openclaw plugins list --json`` (isolated HOME and state dir, empty config).

tests/compat/test_provider_catalog.py fails when the shipped file differs from it, and
checks the overlay ids against ``openclaw config validate`` itself.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from tests.oracles import locate
from tests.oracles.plugin_catalog import COMMAND, listing_of, render

CATALOG = Path(__file__).resolve().parents[2] / "operator/clawplane/validation/data/openclaw-providers.json"
REGION = "//#region src/config/model-provider-overlay-ids.ts"
REGENERATE = "python -m tests.oracles.provider_catalog"
_SET = re.compile(r"new Set\(\[(.*?)\]\)", re.DOTALL)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def overlay_ids(package: Path) -> list[str]:
    """The ids in OpenClaw's ``BUILT_IN_MODEL_PROVIDER_OVERLAY_IDS``, read from its dist chunk."""
    for chunk in sorted((package / "dist").glob("*.mjs")):
        text = chunk.read_text(encoding="utf-8", errors="replace")
        start = text.find(REGION)
        if start == -1:
            continue
        found = _SET.search(text, start)
        if found is None:
            break
        return sorted({json.loads(f'"{s}"') for s in _STRING.findall(found.group(1))})
    raise LookupError(f"no dist chunk of {package} holds {REGION!r} with a Set literal")


def catalog_from(listing: dict[str, Any], overlays: list[str], version: str) -> dict[str, Any]:
    """The catalog document for one ``plugins list --json`` output and the overlay ids."""
    providers: dict[str, str] = {}
    for plugin in listing["plugins"]:
        if plugin.get("origin") != "bundled":
            continue
        for provider in [*plugin.get("providerIds", []), *plugin.get("cliBackendIds", [])]:
            providers.setdefault(str(provider), str(plugin["id"]))
    return {
        "openclaw": version,
        "generatedBy": (
            f"{REGION.removeprefix('//#region ')} (BUILT_IN_MODEL_PROVIDER_OVERLAY_IDS) and "
            f"openclaw {' '.join(COMMAND)} (isolated HOME, empty config): providerIds and "
            "cliBackendIds of bundled plugins"
        ),
        "regenerate": REGENERATE,
        "overlayIds": overlays,
        "pluginProviders": dict(sorted(providers.items())),
    }


def main() -> int:
    """Regenerate the shipped catalog with the installed oracle."""
    cmd, package = locate.openclaw_cmd(), locate.openclaw_package_dir()
    if cmd is None or package is None:
        print(f"ORACLE UNAVAILABLE: openclaw: {locate.unavailable_reason('openclaw')}", file=sys.stderr)
        return 1
    catalog = catalog_from(listing_of(cmd), overlay_ids(package), locate.pins()["OPENCLAW_VERSION"])
    CATALOG.parent.mkdir(parents=True, exist_ok=True)
    CATALOG.write_text(render(catalog), encoding="utf-8")
    print(f"wrote {len(catalog['overlayIds'])} overlay ids, {len(catalog['pluginProviders'])} plugin providers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
