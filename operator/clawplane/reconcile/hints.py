"""What to do about a server that did not start: one hint, read from its error and stderr.

The hints cover the failures a newcomer meets first (an unset variable, a missing module or
command, a crash during start-up); anything else gets the generic next steps.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_UNSET_ENV = re.compile(r"environment variable (\w+) is not set")
_NO_MODULE = re.compile(r"No module named '([\w.]+)'")
_NO_COMMAND = re.compile(r"cannot start '([^']+)': (No such file or directory|Permission denied)")

NEXT_STEPS = "`clawplane status DIR` shows it; `clawplane down DIR` stops everything"


def failure_hint(error: str, stderr: Sequence[str] = ()) -> str:
    """A one-line fix for a server whose start failed with ``error`` after writing ``stderr``."""
    text = "\n".join([error, *stderr])
    if m := _UNSET_ENV.search(text):
        return (
            f"set {m.group(1)} in the environment you run clawplane from (export {m.group(1)}=...), "
            "then apply again"
        )
    if m := _NO_MODULE.search(text):
        return (
            f"the server's interpreter has no module {m.group(1)!r}: install it there, or set command: "
            "to an interpreter that has it (e.g. a virtualenv's python), then apply again"
        )
    if m := _NO_COMMAND.search(text):
        return f"install {m.group(1)!r} or fix command:/cwd: in the McpServer, then apply again"
    if "did not become ready" in error:
        return "raise connectionTimeoutMs if the server is slow to start, or check its stderr; " + NEXT_STEPS
    return f"fix what the server's stderr says, then apply again; {NEXT_STEPS}"
