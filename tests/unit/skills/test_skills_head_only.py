"""A SKILL.md's body is not decoded: only the lines up to the first ``---`` line after the opening.

The result must be what reading the whole file gives: the same frontmatter, the same
errors, and the same content hash, for files whose first ``---`` line does not close the
block, invalid UTF-8 in the head or the body, CRLF line ends and no frontmatter at all.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from clawplane.skills import FrontmatterError, parse_skill_frontmatter
from clawplane.skills.loader import _parse_content

PIECES = [b"---\n", b"---x\n", b"----\n", b"--- \n", b"name: n\n", b"description: d\n",
          b"metadata: {\"openclaw\": {\"emoji\": \"\xf0\x9f\xa6\x9e\"}}\n", b"# Body\n", b"text\n",
          b"\xff\xfe bad\n", b"\xe2\x82\n", b"caf\xc3\xa9\n", b"\r\n", b"\n", b"---\r\n",
          b"\xef\xbb\xbf---\n"]


def _whole(raw: bytes) -> tuple[object, str]:
    content = raw.decode("utf-8", errors="replace")
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
    try:
        return parse_skill_frontmatter(content), digest
    except FrontmatterError as exc:
        return str(exc), digest


@pytest.mark.parametrize("seed", range(4))
def test_reading_the_head_gives_what_the_whole_file_gives(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(3000):
        start = rng.choice([b"---\n", b"---\n", b"\xef\xbb\xbf---\n", b"", b"---\r\n"])
        raw = start + b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 10)))
        parsed = _parse_content(raw)
        expected, digest = _whole(raw)
        got = parsed.frontmatter if parsed.frontmatter is not None else parsed.error
        assert (got, parsed.content_hash) == (expected, digest), raw


def test_the_body_after_the_closing_line_is_not_decoded() -> None:
    from clawplane.skills.loader import _frontmatter_text

    head = b"---\nname: a\ndescription: d\n---\n"
    text, whole = _frontmatter_text(head + b"# Body\n" + b"x" * 100_000)
    assert (text, whole) == (head.decode(), False)
