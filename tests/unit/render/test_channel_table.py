"""The channel field table matches OpenClaw's config schema (the shared copy of `openclaw config schema`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.unit.render.channel_table import derive

from clawplane.models import CHANNEL_TYPES
from clawplane.render.channelfields import CHANNEL_FIELDS, channel_fields

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = ROOT.parent / "shared" / "openclaw-config.schema.json"


def test_table_covers_every_channel_type() -> None:
    assert set(CHANNEL_FIELDS) == set(CHANNEL_TYPES)
    assert not channel_fields("no-such-channel").policy


@pytest.mark.skipif(not SCHEMA.is_file(), reason=f"OPENCLAW SCHEMA UNAVAILABLE: {SCHEMA} is missing")
def test_table_matches_schema() -> None:
    derived = derive(SCHEMA)
    table = {
        name: tuple(tuple(sorted(part)) for part in (f.policy, f.group_keys, f.credentials, f.secret_inputs))
        for name, f in CHANNEL_FIELDS.items()
    }
    assert table == {name: tuple(tuple(sorted(p)) for p in parts) for name, parts in derived.items()}
