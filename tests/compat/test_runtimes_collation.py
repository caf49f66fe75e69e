"""``clawplane.jscompat.locale_sort_key`` against Node's ``localeCompare`` (ICU root).

OpenClaw sorts catalog entries with ``localeCompare`` before naming them, so the order
decides which colliding tool gets a ``-2`` suffix.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from tests.oracles import locate

from clawplane.jscompat import locale_sort_key

NAMES = [
    "b", "A", "a", "_x", "-y", "1", "aa", "a-b", "a_b", "aB", "ab", "Ab", "a.b", "a b", "é", "e", "f",
    "Z", "z", "read_file", "Read_File", "read-file", "tool-9lives", "x__y", "x-y", "x_y", "x-y-2",
    "a😀b", "a--b", "ÄÖÜ", "Ünïcode", "~", "!", "#", "$", "%", "&", "(", ")", "*", "+", ",", ".", "/",
    ":", ";", "<", "=", ">", "?", "@", "[", "\\", "]", "^", "`", "{", "|", "}", "'", '"', "0", "9", "a1",
    "a10", "a2", "ab1", "a-1", "a_1", "", " ", "\t", "resources_list", "resources_read", "prompts_get",
    "prompts_list", "Résumé", "resume", "RESUME", "résumé", "naïve", "naive", "ß", "ss", "tool", "Tool",
    "tool-2", "tool_2", "tool.2", "my-server", "My-Server-2", "mcp-9-lives", "get-sum", "getTinyImage",
]  # fmt: skip


def node() -> str:
    found = shutil.which("node") or (str(locate.node24_bin()) if locate.node24_bin() else None)
    if found is None:
        pytest.skip("ORACLE UNAVAILABLE: node: no Node.js on PATH and no Node 24 oracle installed")
    return found


def test_locale_key_orders_like_node_locale_compare() -> None:
    script = (
        "const a = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "console.log(JSON.stringify(a.sort((x, y) => x.localeCompare(y))));"
    )
    proc = subprocess.run(
        [node(), "-e", script],
        input=json.dumps(NAMES),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert sorted(NAMES, key=locale_sort_key) == json.loads(proc.stdout)
