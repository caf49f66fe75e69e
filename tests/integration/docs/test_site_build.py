"""The docs site builds with `mkdocs build --strict`: a broken link or anchor, or a page left out of
the nav in mkdocs.yml, fails the build (and so `make test`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("index.html", "architecture/index.html", "reference/cli/index.html"):
        assert (tmp_path / "site" / page).is_file(), page


@pytest.mark.parametrize(
    ("mutation", "complaint"),
    [
        ("[broken](no-such-page.md)", "no-such-page.md"),
        ("[broken](skills.md#no-such-anchor)", "no-such-anchor"),
    ],
)
def test_a_broken_link_fails_the_build(tmp_path: Path, mutation: str, complaint: str) -> None:
    docs = tmp_path / "docs"
    subprocess.run(["cp", "-r", str(ROOT / "docs"), str(docs)], check=True)
    (docs / "index.md").write_text((docs / "index.md").read_text(encoding="utf-8") + f"\n{mutation}\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text((ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("docs_dir: docs", f"docs_dir: {docs}"))
    done = _build(config, tmp_path / "site")
    assert done.returncode != 0 and complaint in done.stdout + done.stderr, done.stdout + done.stderr


def test_a_page_missing_from_the_nav_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    subprocess.run(["cp", "-r", str(ROOT / "docs"), str(docs)], check=True)
    (docs / "orphan.md").write_text("# Orphan\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text((ROOT / "mkdocs.yml").read_text(encoding="utf-8").replace("docs_dir: docs", f"docs_dir: {docs}"))
    done = _build(config, tmp_path / "site")
    assert done.returncode != 0 and "orphan.md" in done.stdout + done.stderr, done.stdout + done.stderr
