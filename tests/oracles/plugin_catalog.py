"""The bundled-plugin catalog clawplane ships, regenerated from the real OpenClaw.

``python -m tests.oracles.plugin_catalog`` rewrites
``operator/clawplane/validation/data/openclaw-plugins.json`` from ``openclaw plugins list
--json`` (isolated HOME and state dir, empty config, so nothing real is read or touched);
tests/compat/test_plugin_catalog.py fails when the shipped file differs from it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.oracles import locate

CATALOG = Path(__file__).resolve().parents[2] / "operator/clawplane/validation/data/openclaw-plugins.json"
COMMAND = ("plugins", "list", "--json")
REGENERATE = "python -m tests.oracles.plugin_catalog"


def catalog_from(listing: dict[str, Any], version: str) -> dict[str, Any]:
    """The catalog document for one ``plugins list --json`` output (bundled plugins only)."""
    ids = sorted({p["id"] for p in listing["plugins"] if p.get("origin") == "bundled"})
    return {
        "openclaw": version,
        "generatedBy": f"openclaw {' '.join(COMMAND)} (isolated HOME, empty config), origin=bundled ids",
        "regenerate": REGENERATE,
        "plugins": ids,
    }


def render(catalog: dict[str, Any]) -> str:
    """The file text: two-space JSON with a final newline."""
    return json.dumps(catalog, indent=2, ensure_ascii=False) + "\n"


def listing_of(cmd: list[str]) -> dict[str, Any]:
    """``openclaw plugins list --json`` run isolated from this machine's OpenClaw state."""
    with tempfile.TemporaryDirectory(prefix="clawplane-plugins-") as tmp:
        root = Path(tmp)
        config = root / "openclaw.json"
        config.write_text("{}", encoding="utf-8")
        env = locate.openclaw_env(root / "home", config, state_dir=root / "state")
        proc = subprocess.run([*cmd, *COMMAND], env=env, cwd=root, capture_output=True, text=True, check=True)
    listing: dict[str, Any] = json.loads(proc.stdout)
    return listing


def main() -> int:
    """Regenerate the shipped catalog with the installed oracle."""
    cmd = locate.openclaw_cmd()
    if cmd is None:
        print(f"ORACLE UNAVAILABLE: openclaw: {locate.unavailable_reason('openclaw')}", file=sys.stderr)
        return 1
    catalog = catalog_from(listing_of(cmd), locate.pins()["OPENCLAW_VERSION"])
    CATALOG.parent.mkdir(parents=True, exist_ok=True)
    CATALOG.write_text(render(catalog), encoding="utf-8")
    print(f"wrote {len(catalog['plugins'])} plugin ids to {CATALOG}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
