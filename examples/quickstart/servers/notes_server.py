"""A tiny MCP server for the quickstart: keeps notes in memory (stdio transport)."""

from __future__ import annotations

import os

from mcp.server import MCPServer

server = MCPServer("notes", instructions="Keep short notes for the team.")
_notes: dict[str, str] = {}


@server.tool()
def add_note(title: str, text: str) -> str:
    """Save a note under a title."""
    _notes[title] = text
    return f"saved {title!r}"


@server.tool()
def list_notes() -> list[str]:
    """List the titles of all notes."""
    return sorted(_notes)


@server.tool()
def read_note(title: str) -> str:
    """Read one note."""
    return _notes.get(title, f"no note named {title!r}")


@server.tool()
def greet(name: str) -> str:
    """Greet someone with the configured greeting."""
    return f"{os.environ.get('NOTES_GREETING', 'hello')}, {name}!"


@server.tool()
def debug_dump() -> dict[str, str]:
    """Dump every note (hidden from agents by the tool filter)."""
    return dict(_notes)


if __name__ == "__main__":
    server.run()
