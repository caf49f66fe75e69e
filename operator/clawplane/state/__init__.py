"""State: the embedded SQLite database of what clawplane observed and applied."""

from clawplane.state import store, tokens
from clawplane.state.callaudit import AUDIT_BATCH, AUDIT_QUEUE_SIZE, CallAuditor
from clawplane.state.calltrail import CallFilter, find_calls, iter_calls, unrecorded
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
    "AUDIT_BATCH",
    "AUDIT_QUEUE_SIZE",
    "CLI",
    "OPENCLAW",
    "READER",
    "SCHEMA_VERSION",
    "AuditRecord",
    "CallAuditor",
    "CallFilter",
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
    "find_calls",
    "iter_calls",
    "load_tokens",
    "open_state_dir",
    "prepare_state_dir",
    "store",
    "tokens",
    "unrecorded",
    "utcnow",
]
