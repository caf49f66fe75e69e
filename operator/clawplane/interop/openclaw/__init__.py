"""``openclaw.json`` into clawplane resources (the inverse of ``render.openclaw``).

``config`` reads the file and hands each object to its importer: keys by name (``keys``),
sections (``sections``), MCP servers (``servers``), model providers and sessions (``models``),
the skill roots OpenClaw implies (``roots``) and the environment it reads (``env``).
"""

from clawplane.interop.openclaw.config import import_openclaw_config, load_openclaw_file, load_openclaw_text
from clawplane.interop.openclaw.env import OpenClawEnv

__all__ = ["OpenClawEnv", "import_openclaw_config", "load_openclaw_file", "load_openclaw_text"]
