"""Answering elicitation without a person: a form's defaults, or decline (SEP-1034).

``accept_defaults`` is a plain function of the request's parameters; it is called here as the
SDK calls it (the request context is not used). End to end it runs in the conformance suite's
``elicitation-sep1034-client-defaults`` and ``sep-2322-client-request-state`` client scenarios.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest

from clawplane.runtimes.client.elicitation import accept_defaults, form_defaults

pytestmark = pytest.mark.anyio

DEFAULTS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "status": {"type": "string", "enum": ["active", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "note": {"type": "string"},
    },
}


def test_form_defaults_take_every_default_and_leave_optional_fields_out() -> None:
    assert form_defaults(DEFAULTS) == {"name": "John Doe", "age": 30, "status": "active", "verified": True}
    assert form_defaults({**DEFAULTS, "required": ["name", "age"]}) == form_defaults(DEFAULTS)


def test_a_required_field_without_default_means_no_answer() -> None:
    assert form_defaults({**DEFAULTS, "required": ["name", "note"]}) is None
    assert form_defaults({"type": "object"}) == {}


async def test_accept_defaults_accepts_forms_and_declines_the_rest() -> None:
    form = types.ElicitRequestFormParams(message="ok?", requested_schema=DEFAULTS)
    needs_input = types.ElicitRequestFormParams(
        message="ok?", requested_schema={**DEFAULTS, "required": ["note"]}
    )
    url = types.ElicitRequestURLParams(message="sign in", url="https://example.invalid/", elicitation_id="e1")

    accepted = await accept_defaults(None, form)  # type: ignore[arg-type]
    assert (accepted.action, accepted.content) == ("accept", form_defaults(DEFAULTS))
    assert (await accept_defaults(None, needs_input)).action == "decline"  # type: ignore[arg-type]
    assert (await accept_defaults(None, url)).action == "decline"  # type: ignore[arg-type]
