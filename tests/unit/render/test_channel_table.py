"""The channel field table matches OpenClaw's config schema (the shared copy of `openclaw config schema`)."""

from __future__ import annotations

from tests.unit.render.channel_table import derive
from tests.unit.render.oracle_checks import require_schema

from clawplane.models import CHANNEL_TYPES
from clawplane.naming.channelfields import CHANNEL_FIELDS, channel_fields


def test_table_covers_every_channel_type() -> None:
    assert set(CHANNEL_FIELDS) == set(CHANNEL_TYPES)
    assert not channel_fields("no-such-channel").policy


def test_table_matches_schema() -> None:
    derived = derive(require_schema())
    table = {
        name: tuple(tuple(sorted(part)) for part in (f.policy, f.group_keys, f.credentials, f.secret_inputs))
        for name, f in CHANNEL_FIELDS.items()
    }
    assert table == {name: tuple(tuple(sorted(p)) for p in parts) for name, parts in derived.items()}
