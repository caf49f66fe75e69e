"""Loading: files and directories → documents with positions, and diagnostics."""

from clawplane.loading.positions import PathT, Positions, format_path
from clawplane.loading.sources import (
    SKIPPED_DIRS,
    ReadResult,
    SourceDocument,
    discover_files,
    read_file,
    read_sources,
    read_text,
)
from clawplane.loading.walk import WalkCache
from clawplane.loading.yamlparse import YamlProblem, parse_documents

__all__ = [
    "SKIPPED_DIRS",
    "PathT",
    "Positions",
    "ReadResult",
    "SourceDocument",
    "WalkCache",
    "YamlProblem",
    "discover_files",
    "format_path",
    "parse_documents",
    "read_file",
    "read_sources",
    "read_text",
]
