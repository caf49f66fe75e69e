"""Every YAML resource in the README and the docs passes `clawplane validate`.

Each block that declares a clawplane resource is written alone into a folder of its own and
validated by the CLI as a user would. A block is a resource when a document in it names a
clawplane kind. Blocks show parts of examples/quickstart, so a reference to a resource that
the quickstart declares may be left unresolved; every other diagnostic error fails. A deliberately partial one is preceded by `<!-- not-a-resource -->`; such
exemptions are counted, so they stay few.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from tests.support.docblocks import Block, blocks

from clawplane.models import KINDS

ROOT = Path(__file__).resolve().parents[3]
MAX_EXEMPT = 3


def _documents(block: Block) -> list[Any]:
    try:
        return [d for d in YAML(typ="safe", pure=True).load_all(io.StringIO(block.text)) if d is not None]
    except Exception:  # a block that is not YAML at all is no resource
        return []


def _is_resource(block: Block) -> bool:
    return any(isinstance(d, dict) and d.get("kind") in KINDS for d in _documents(block))


def quickstart_names() -> set[str]:
    """``Kind 'name'`` of every resource examples/quickstart declares, as diagnostics name them."""
    names = set()
    for path in (ROOT / "examples" / "quickstart").glob("*.yaml"):
        for doc in YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") in KINDS:
                names.add(f"{doc['kind']} '{doc['metadata']['name']}'")
    return names


def _expected(diagnostic: dict[str, Any], known: set[str]) -> bool:
    """An unresolved reference to a resource of the quickstart, which the block is part of."""
    message = diagnostic["message"]
    return diagnostic["code"] == "ref.unresolved" and any(message.startswith(f"{n} ") for n in known)


def resource_blocks() -> list[Block]:
    """The YAML blocks that declare clawplane resources, exempt ones left out."""
    return [b for b in blocks() if b.language == "yaml" and not b.exempt and _is_resource(b)]


def test_there_are_resources_to_check_and_few_exemptions() -> None:
    assert len(resource_blocks()) >= 6
    exempt = [b.where for b in blocks() if b.exempt]
    assert len(exempt) <= MAX_EXEMPT, f"more blocks marked not-a-resource than {MAX_EXEMPT}: {exempt}"


@pytest.mark.parametrize("block", resource_blocks(), ids=lambda b: b.where)
def test_the_resource_is_valid(block: Block, tmp_path: Path) -> None:
    (tmp_path / "resources.yaml").write_text(block.text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "clawplane", "validate", "--format", "json", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    report = json.loads(done.stdout)
    known = quickstart_names()
    errors = [d for d in report["diagnostics"] if d["severity"] == "error" and not _expected(d, known)]
    assert done.returncode in (0, 1) and errors == [], f"{block.where}:\n{json.dumps(errors, indent=1)}"
