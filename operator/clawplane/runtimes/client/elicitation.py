"""Answering a server's request for input (``elicitation/create``) without a person.

``accept_defaults`` accepts a form with the defaults its schema gives (SEP-1034) and declines
when a required field has no default, or when the server asks the user to visit a URL: with
nobody to ask, only values the server itself proposed are sent back.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.client.session import ClientRequestContext

__all__ = ["accept_defaults", "form_defaults"]


def form_defaults(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The defaults of a form's properties, or None when a required one has no default."""
    properties = schema.get("properties") or {}
    content = {
        name: spec["default"]
        for name, spec in properties.items()
        if isinstance(spec, dict) and "default" in spec
    }
    required = schema.get("required") or []
    if any(name not in content for name in required):
        return None
    return content


async def accept_defaults(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """Accept a form elicitation with its schema's defaults; decline anything else."""
    if isinstance(params, types.ElicitRequestFormParams):
        content = form_defaults(params.requested_schema)
        if content is not None:
            return types.ElicitResult(action="accept", content=content)
    return types.ElicitResult(action="decline")
