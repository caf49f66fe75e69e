"""Rendering: typed resources → the configs agent runtimes read (openclaw.json, Codex config.toml).

Renderers are pure: they return the content plus diagnostics for whatever the target
cannot express. ``write_if_changed`` puts content on disk atomically. The importers, which
go the other way (an existing config → resource YAML), live in ``clawplane.interop``.
"""

from clawplane.render.codex import RenderedText, projected_into, render_codex_config
from clawplane.render.files import write_if_changed
from clawplane.render.openclaw import (
    AgentEntries,
    RenderedChecks,
    RenderedConfig,
    ServerEntries,
    render_openclaw_config,
)

__all__ = [
    "AgentEntries",
    "RenderedChecks",
    "RenderedConfig",
    "RenderedText",
    "ServerEntries",
    "projected_into",
    "render_codex_config",
    "render_openclaw_config",
    "write_if_changed",
]
