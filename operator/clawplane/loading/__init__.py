"""Loading: files and directories → documents with positions, and diagnostics."""

from clawplane.loading.positions import PathT, Positions, format_path
from clawplane.loading.sources import ReadResult, SourceDocument, read_file, read_sources, read_text

__all__ = [
    "PathT",
    "Positions",
    "ReadResult",
    "SourceDocument",
    "format_path",
    "read_file",
    "read_sources",
    "read_text",
]
