"""The Gateway's session policy (OpenClaw's top-level ``session``) and model catalog settings (``models``).

Fields, constraints and defaults follow OpenClaw 2026.9.6's ``SessionSchema`` (src/config/
zod-schema.session-config.ts) and ``ModelsConfigSchema``. Defaults are documented, not
written: only the fields a resource sets are rendered, so OpenClaw applies its own
defaults to the rest. Durations and byte sizes are checked the way OpenClaw parses them.
"""

from __future__ import annotations

import enum
import math
import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, StrictFloat, StrictInt, StrictStr, WithJsonSchema, field_validator

from clawplane.models.base import Model
from clawplane.models.openparts import OpenPart

_SAFE_INTEGER = 9007199254740991
_DURATION_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_SINGLE = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$")
_SEGMENT = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_BYTE_UNITS = {"b": 1, "kb": 1024, "k": 1024, "mb": 1024**2, "m": 1024**2, "gb": 1024**3, "g": 1024**3}
_BYTE_UNITS |= {"tb": 1024**4, "t": 1024**4}
_BYTES = re.compile(r"^(\d+(?:\.\d+)?)([a-z]+)?$")


def _text(value: str | float) -> str:
    # OpenClaw stringifies numbers before parsing (30 → "30", then the default unit applies).
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        value = int(value)
    return str(value).strip().lower()


def duration_ms(value: str | float, *, default_unit: str) -> int:
    """Milliseconds as OpenClaw's ``parseDurationMs`` reads ``value``; ValueError when it cannot."""
    text = _text(value)
    single = _SINGLE.match(text)
    if single:
        total = float(single.group(1)) * _DURATION_UNITS[single.group(2) or default_unit]
    else:
        total, consumed = 0.0, 0
        for match in _SEGMENT.finditer(text):
            if match.start() != consumed:
                raise ValueError("invalid duration (use ms, s, m, h, d)")
            total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
            consumed = match.end()
        if consumed == 0 or consumed != len(text):
            raise ValueError("invalid duration (use ms, s, m, h, d)")
    rounded = math.floor(total + 0.5)
    if rounded > _SAFE_INTEGER:
        raise ValueError("invalid duration (use ms, s, m, h, d)")
    return rounded


def byte_size(value: str | float) -> int:
    """Bytes as OpenClaw's ``parseByteSize`` reads ``value`` (default unit b); ValueError when it cannot."""
    match = _BYTES.match(_text(value))
    if not match or (match.group(2) or "b") not in _BYTE_UNITS:
        raise ValueError("invalid size (use b, kb, mb, gb, tb)")
    size = math.floor(float(match.group(1)) * _BYTE_UNITS[match.group(2) or "b"] + 0.5)
    if size > _SAFE_INTEGER:
        raise ValueError("invalid size (use b, kb, mb, gb, tb)")
    return size


def _positive_duration(value: str | float) -> str | float:
    if duration_ms(value, default_unit="d") <= 0:
        raise ValueError("duration must be positive (use ms, s, m, h, d), e.g. 30d")
    return value


def _size(value: str | float) -> str | float:
    byte_size(value)
    return value


PositiveDuration = Annotated[StrictStr | StrictInt | StrictFloat, AfterValidator(_positive_duration)]
"""A duration such as ``30d``, ``12h`` or ``1h30m``; a bare number counts days."""
ByteSize = Annotated[StrictStr | StrictInt | StrictFloat, AfterValidator(_size)]
"""A size such as ``500mb`` or ``10gb``; a bare number counts bytes."""
PositiveInt = Annotated[int, Field(gt=0, le=_SAFE_INTEGER)]
NonNegativeNumber = Annotated[int | float, Field(ge=0), WithJsonSchema({"type": "number", "minimum": 0})]


class ResetMode(enum.StrEnum):
    """When sessions reset on their own."""

    NONE = "none"
    DAILY = "daily"
    IDLE = "idle"


class SessionReset(Model):
    """A reset policy; ``/new`` and ``/reset`` work in every mode."""

    mode: ResetMode = ResetMode.NONE
    """``none`` (default), ``daily`` at ``atHour``, or ``idle`` after ``idleMinutes``."""
    at_hour: Annotated[int, Field(ge=0, le=23)] | None = None
    """Local hour (0-23) of the daily reset."""
    idle_minutes: PositiveInt | None = None
    """Minutes of inactivity before an idle reset (also a guard in daily mode)."""


class ResetByType(Model):
    """Reset policies per chat type; each supersedes ``reset`` for its type."""

    direct: SessionReset | None = None
    """Direct chats."""
    group: SessionReset | None = None
    """Group chats."""
    thread: SessionReset | None = None
    """Thread-scoped sessions."""


class SendAction(enum.StrEnum):
    """A send-policy decision."""

    ALLOW = "allow"
    DENY = "deny"


class SendPolicyMatch(Model):
    """What a send-policy rule applies to (all given conditions must match)."""

    channel: str | None = None
    """Channel id, e.g. ``discord``."""
    chat_type: Literal["direct", "group", "channel"] | None = None
    """Chat type."""
    key_prefix: str | None = None
    """Prefix of the normalized session key."""
    raw_key_prefix: str | None = None
    """Prefix of the raw session key."""


class SendPolicyRule(Model):
    """One allow/deny rule."""

    action: SendAction
    """``allow`` or ``deny``."""
    match: SendPolicyMatch | None = None
    """Conditions; absent = every destination."""


class SendPolicy(Model):
    """Where session tools may deliver messages: ordered rules, then the default."""

    default: SendAction = SendAction.ALLOW
    """Action when no rule matches (default ``allow``)."""
    rules: list[SendPolicyRule] | None = None
    """Rules, most specific first."""


class ThreadBindings(Model):
    """Defaults for thread-bound sessions across channels."""

    enabled: bool | None = None
    """Master switch for thread-bound session spawning, routing and delivery."""
    idle_hours: NonNegativeNumber = 24
    """Hours of inactivity before a thread-bound session expires; 0 = never."""
    max_age_hours: NonNegativeNumber = 0
    """Hard maximum age in hours; 0 = no cap."""
    spawn_sessions: bool = True
    """Allow creating thread-bound work sessions (when thread bindings are enabled)."""
    default_spawn_context: Literal["isolated", "fork"] = "fork"
    """Context of thread-bound spawns: ``fork`` the requester's transcript or start ``isolated``."""


class SessionSharing(Model):
    """Collaboration modes owners and administrators may select."""

    read_only: bool = True
    """Allow read-only sessions for non-participants."""
    suggest: bool = True
    """Allow suggest visibility."""
    drafts: bool = True
    """Allow draft visibility."""


class ColdStorage(Model):
    """Archiving inactive transcripts into compressed JSONL."""

    enabled: bool = False
    """Turn background archival on."""
    after_days: PositiveInt = 30
    """Archive after this many inactive days."""


class SessionMaintenance(Model):
    """Pruning, caps, archive retention and disk budget of the session store."""

    mode: Literal["enforce", "warn"] | None = None
    """``warn`` only reports what the policies would do; ``enforce`` applies them."""
    cold_storage: ColdStorage | None = None
    """Transcript archival."""
    prune_after: PositiveDuration = "30d"
    """Archive durable conversations and remove disposable entries older than this."""
    archive_dashboard_after: PositiveDuration | Literal[False, 0] | None = None
    """Archive inactive dashboard sessions after this; ``false`` or ``0`` = never."""
    max_entries: PositiveInt = 5000
    """Most unarchived session entries."""
    preserve_recent: PositiveDuration | Literal[False] | None = None
    """Protect sessions active within this duration from eviction; ``false`` = oldest first."""
    reset_archive_retention: PositiveDuration | Literal[False] | None = None
    """Delete reset/deleted transcript archives older than this; ``false`` = never by age."""
    max_disk_bytes: ByteSize | Literal[False] = "10gb"
    """Per-agent disk budget, e.g. ``500mb``; ``false`` or ``0`` = no budget."""
    high_water_bytes: ByteSize | None = None
    """Target size after cleanup (default 80% of maxDiskBytes)."""

    @field_validator("archive_dashboard_after", "preserve_recent", "reset_archive_retention", mode="before")
    @classmethod
    def _no_true(cls, value: object) -> object:
        if value is True:
            raise ValueError("only false turns this off; give a duration such as 7d to turn it on")
        return value


class SessionScope(enum.StrEnum):
    """Base session grouping."""

    PER_SENDER = "per-sender"
    GLOBAL = "global"


class DmScope(enum.StrEnum):
    """How direct-message sessions are split."""

    MAIN = "main"
    PER_PEER = "per-peer"
    PER_CHANNEL_PEER = "per-channel-peer"
    PER_ACCOUNT_CHANNEL_PEER = "per-account-channel-peer"


class GroupScope(enum.StrEnum):
    """Where group and room conversations live."""

    MAIN = "main"
    PER_GROUP = "per-group"


class SessionConfig(OpenPart):
    """Session routing, reset, delivery and maintenance (OpenClaw ``session``)."""

    scope: SessionScope = SessionScope.PER_SENDER
    """``per-sender`` (default) isolates by sender; ``global`` shares one session per channel context."""
    dm_scope: DmScope = DmScope.MAIN
    """``main`` (default: all DMs share one session), ``per-peer``, ``per-channel-peer`` or ``per-account-channel-peer``."""
    group_scope: GroupScope = GroupScope.PER_GROUP
    """``per-group`` (default) keeps rooms apart; ``main`` routes them into the main session."""
    notify_on_create: bool = True
    """Notify the owning agent's Home session when a session is created."""
    identity_links: dict[str, list[str]] | None = None
    """Canonical identity → provider-prefixed peer ids (e.g. ``telegram:123``) that share one DM session."""
    reset_triggers: list[str] | None = None
    """Inbound phrases that reset the session."""
    reset: SessionReset | None = None
    """Default reset policy (no automatic reset unless set)."""
    reset_by_type: ResetByType | None = None
    """Reset policies per chat type."""
    reset_by_channel: dict[str, SessionReset] | None = None
    """Reset policies per channel id; win over the others."""
    store: str | None = None
    """Session store file; relative paths are relative to the resource file."""
    main_key: str | None = None
    """Accepted but ignored by OpenClaw (the main session suffix is always ``main``)."""
    send_policy: SendPolicy | None = None
    """Where session tools may deliver messages."""
    thread_bindings: ThreadBindings | None = None
    """Thread-bound session defaults."""
    sharing: SessionSharing | None = None
    """Collaboration modes."""
    maintenance: SessionMaintenance | None = None
    """Session-store maintenance."""


class CatalogRefresh(Model):
    """Background updates of OpenClaw's bundled model catalog."""

    enabled: bool = True
    """Fetch hosted catalog updates; ``false`` stops all remote catalog traffic."""
    url: str | None = None
    """A self-hosted HTTPS mirror (HTTP only on localhost)."""

    @field_validator("url")
    @classmethod
    def _https_or_localhost(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            parts = urlsplit(value)
            host = parts.hostname
        except ValueError:
            host, parts = None, None
        if parts is not None and (
            parts.scheme == "https" or (parts.scheme == "http" and host in ("localhost", "127.0.0.1", "::1"))
        ):
            return value
        raise ValueError("models.catalogRefresh.url must use https, or http on localhost")


class ModelsConfig(OpenPart):
    """How declared ModelProviders combine with OpenClaw's bundled catalogs."""

    mode: Literal["merge", "replace"] = "merge"
    """``merge`` (default) keeps the bundled providers and overlays the declared ones; ``replace`` uses only the declared ones."""
    catalog_refresh: CatalogRefresh | None = None
    """Hosted model catalog updates."""
