"""What the dashboard, the MCP server and the Kubernetes dashboard ask about a folder.

``folder`` answers (``FolderQueries``: status, plan, validation, skills, approvals), the costly
questions in a child process (``offload`` starts ``queryworker`` and bounds it) over
``analysis``, which plans and validates the folder and cuts answers to size.
"""

from clawplane.reconcile.queries.analysis import MAX_DOCUMENTS
from clawplane.reconcile.queries.folder import (
    SKILL_VIEWS,
    Answer,
    BusyError,
    FolderQueries,
    QueryError,
    Responder,
    plan_document,
    scrubbed,
)

__all__ = [
    "MAX_DOCUMENTS",
    "SKILL_VIEWS",
    "Answer",
    "BusyError",
    "FolderQueries",
    "QueryError",
    "Responder",
    "plan_document",
    "scrubbed",
]
