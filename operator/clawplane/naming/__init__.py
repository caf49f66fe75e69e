"""clawplane.naming: pure functions that reproduce OpenClaw 2026.9.6 naming rules.

Covers MCP server and tool name sanitization (``servers``, ``tools``), tool
filters (``toolfilter``), the env-var blocklist for stdio servers
(``envpolicy``), literal-secret detection (``sensitive``), ``${VAR}`` substitution
in config strings (``envsubst``), the fields each channel's config accepts
(``channelfields``: shared by the renderer and the importer), Codex's tool approval
modes (``toolapproval``) and OpenClaw's tool policy for MCP tools (``toolpolicy``); the UTF-16 and
JavaScript string rules they rest on are ``clawplane.jscompat``'s (``strings``, ``utf16``).
No I/O, and nothing imported beyond the standard library and those two modules.
"""

from clawplane.naming.channelfields import REJECTED_CHANNELS
from clawplane.naming.envpolicy import (
    BLOCKED_ENV_NAMES,
    BLOCKED_ENV_PREFIXES,
    MCP_EXPLICIT_CREDENTIAL_KEYS,
    is_blocked_env_name,
)
from clawplane.naming.envsubst import (
    ENV_NAME_RE,
    SECRET_REF_ENV_ID_RE,
    env_reference,
    escape_literal,
    has_substitution,
    substitute,
    whole_reference,
)
from clawplane.naming.sensitive import (
    REDACTED,
    SENSITIVE_HEADER_NAMES,
    is_sensitive_key,
    looks_like_literal_secret,
    redact_url_userinfo,
)
from clawplane.naming.servers import (
    ENDPOINT_SERVER_NAMES,
    OPENCLAW_REJECTED_SERVER_NAME,
    RESERVED_SERVER_NAMES,
    SERVER_NAME_FALLBACK,
    SERVER_NAME_MAX,
    TOOL_NAME_MAX_TOTAL,
    TOOL_NAME_SEPARATOR,
    assign_server_names,
    is_reserved_server_name,
    sanitize_fragment,
)
from clawplane.naming.toolapproval import APPROVAL_MODES, needs_approval, rule_for
from clawplane.naming.toolfilter import glob_matches, is_tool_allowed, normalize_filter_list
from clawplane.naming.toolpolicy import ToolPolicyLayer, layers_for, mcp_tool_allowed
from clawplane.naming.tools import (
    TOOL_NAME_FALLBACK,
    ToolName,
    assign_tool_names,
    max_tool_chars,
    name_tools,
)

__all__ = [
    "APPROVAL_MODES",
    "BLOCKED_ENV_NAMES",
    "BLOCKED_ENV_PREFIXES",
    "ENDPOINT_SERVER_NAMES",
    "ENV_NAME_RE",
    "MCP_EXPLICIT_CREDENTIAL_KEYS",
    "OPENCLAW_REJECTED_SERVER_NAME",
    "REDACTED",
    "REJECTED_CHANNELS",
    "RESERVED_SERVER_NAMES",
    "SECRET_REF_ENV_ID_RE",
    "SENSITIVE_HEADER_NAMES",
    "SERVER_NAME_FALLBACK",
    "SERVER_NAME_MAX",
    "TOOL_NAME_FALLBACK",
    "TOOL_NAME_MAX_TOTAL",
    "TOOL_NAME_SEPARATOR",
    "ToolName",
    "ToolPolicyLayer",
    "assign_server_names",
    "assign_tool_names",
    "env_reference",
    "escape_literal",
    "glob_matches",
    "has_substitution",
    "is_blocked_env_name",
    "is_reserved_server_name",
    "is_sensitive_key",
    "is_tool_allowed",
    "layers_for",
    "looks_like_literal_secret",
    "max_tool_chars",
    "mcp_tool_allowed",
    "name_tools",
    "needs_approval",
    "normalize_filter_list",
    "redact_url_userinfo",
    "rule_for",
    "sanitize_fragment",
    "substitute",
    "whole_reference",
]
