"""Interop: other tools' configs → clawplane resources (the inverse of ``render``).

One module per source format: ``openclaw`` (openclaw.json, with its sections, servers and
values), and the import report every importer shares. ``yamlwrite`` turns the resulting
documents into YAML that clawplane's loader reads back unchanged.
"""

from clawplane.interop.openclaw import ImportResult, import_openclaw_config, load_openclaw_file

__all__ = ["ImportResult", "import_openclaw_config", "load_openclaw_file"]
