"""Interop: other tools' configs → clawplane resources (the inverse of ``render``).

One module per source format: ``openclaw`` (openclaw.json: every key by name under the spec of
the resource that stands for its object through ``openclaw.keys``, with its sections, servers,
models, values and the implicit skill tiers of ``openclaw.env``/``openclaw.roots``). ``result`` holds
what every importer returns and the checks each imported resource passes; ``report`` the
diagnostics (each with its file:line from ``positions``); ``yamlwrite`` the YAML that
clawplane's loader and YAML 1.1 readers read back unchanged.
"""

from clawplane.interop.openclaw import (
    OpenClawEnv,
    import_openclaw_config,
    load_openclaw_file,
    load_openclaw_text,
)
from clawplane.interop.result import ImportResult

__all__ = [
    "ImportResult",
    "OpenClawEnv",
    "import_openclaw_config",
    "load_openclaw_file",
    "load_openclaw_text",
]
