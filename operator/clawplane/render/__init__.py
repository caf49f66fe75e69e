"""Rendering: typed resources → the configs agent runtimes read (openclaw.json, Codex config.toml).

Renderers are pure: they return the content plus diagnostics for whatever the target
cannot express. ``write_if_changed`` puts content on disk atomically, and the importer
goes the other way (an existing openclaw.json → resource YAML).
"""

from clawplane.render.codex import RenderedText, render_codex_config
from clawplane.render.files import write_if_changed
from clawplane.render.importer import ImportResult, import_openclaw_config, load_openclaw_file
from clawplane.render.openclaw import RenderedConfig, render_openclaw_config

__all__ = [
    "ImportResult",
    "RenderedConfig",
    "RenderedText",
    "import_openclaw_config",
    "load_openclaw_file",
    "render_codex_config",
    "render_openclaw_config",
    "write_if_changed",
]
