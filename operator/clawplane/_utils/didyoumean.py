"""The "did you mean" of every hint: the closest of some names to a mistyped one."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def did_you_mean(word: str, choices: Sequence[str]) -> str | None:
    """The closest choice to ``word``, if one is close enough."""
    choices = list(choices)
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return lowered[word.lower()]
    squashed = {c.lower().replace("_", "").replace("-", ""): c for c in choices}
    key = word.lower().replace("_", "").replace("-", "")
    if key in squashed:
        return squashed[key]
    hits = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if hits:
        return hits[0]
    # A longer spelling of a short key ("enviroment" for "env") is a common slip.
    prefixes = [c for c in choices if len(c) >= 3 and word.lower().startswith(c.lower())]
    return max(prefixes, key=len) if prefixes else None
