"""State: the embedded SQLite database of what clawplane observed and applied."""

from clawplane.state import store, tokens
from clawplane.state.db import SCHEMA_VERSION, StateDB, StateError, open_state_dir, prepare_state_dir, utcnow
from clawplane.state.lock import FolderLock
from clawplane.state.records import (
    AuditRecord,
    ObservedState,
    ProcessRecord,
    ResourceRecord,
    RuntimeRecord,
    ToolRecord,
)

__all__ = [
    "SCHEMA_VERSION",
    "AuditRecord",
    "FolderLock",
    "ObservedState",
    "ProcessRecord",
    "ResourceRecord",
    "RuntimeRecord",
    "StateDB",
    "StateError",
    "ToolRecord",
    "open_state_dir",
    "prepare_state_dir",
    "store",
    "tokens",
    "utcnow",
]
