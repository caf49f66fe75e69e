"""State: the embedded SQLite database of what clawplane observed and applied."""

from clawplane.state import store, tokens
from clawplane.state.db import SCHEMA_VERSION, StateDB, StateError, utcnow
from clawplane.state.lock import FolderLock
from clawplane.state.records import AuditRecord, ObservedState, ResourceRecord, RuntimeRecord, ToolRecord

__all__ = [
    "SCHEMA_VERSION",
    "AuditRecord",
    "FolderLock",
    "ObservedState",
    "ResourceRecord",
    "RuntimeRecord",
    "StateDB",
    "StateError",
    "ToolRecord",
    "store",
    "tokens",
    "utcnow",
]
