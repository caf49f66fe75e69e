"""Letting a freshly generated corpus age past a cache's racy window before measuring.

clawplane's caches (the validation cache, the skills FsCache) distrust a file changed within
their racy window and read it again, so a bench that measures right after writing its corpus
would time that re-reading, which a running engine over an older folder never does.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def wait_out_racy_window(root: Path, window_s: float) -> None:
    """Sleep until every file under ``root`` changed more than ``window_s`` ago (a measuring wait)."""
    newest = max(os.lstat(p).st_ctime for p in root.rglob("*"))
    remaining = newest + window_s + 0.1 - time.time()
    if remaining > 0:
        print(f"(waiting {remaining:.1f}s for the corpus to leave the racy window)")
        time.sleep(remaining)
