"""State: the embedded SQLite database of what clawplane observed and applied."""

from clawplane.state import store, tokens
from clawplane.state.db import SCHEMA_VERSION, StateDB, StateError, open_state_dir, prepare_state_dir, utcnow
from clawplane.state.lock import FolderLock
from clawplane.state.oauth import Credential, CredentialStore
from clawplane.state.records import (
    AuditRecord,
    ObservedState,
    ProcessRecord,
    ResourceRecord,
    RuntimeRecord,
    ToolRecord,
)
from clawplane.state.tokens import (
    CLI,
    OPENCLAW,
    READER,
    agent_access,
    agent_consumer,
    codex_consumer,
    load_tokens,
)

__all__ = [
    "CLI",
    "OPENCLAW",
    "READER",
    "SCHEMA_VERSION",
    "AuditRecord",
    "Credential",
    "CredentialStore",
    "FolderLock",
    "ObservedState",
    "ProcessRecord",
    "ResourceRecord",
    "RuntimeRecord",
    "StateDB",
    "StateError",
    "ToolRecord",
    "agent_access",
    "agent_consumer",
    "codex_consumer",
    "load_tokens",
    "open_state_dir",
    "prepare_state_dir",
    "store",
    "tokens",
    "utcnow",
]
