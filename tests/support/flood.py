"""Many McpServer documents for questions that must cost a reader, not the supervisor (floods, soaks)."""

from __future__ import annotations

DOCUMENT = """apiVersion: clawplane.dev/v1alpha1
kind: McpServer
metadata:
  name: flood-{i}
spec:
  command: python3
  args: [servers/none.py]
  enabled: false
"""


def flood_documents(count: int) -> list[dict[str, str]]:
    """The ``documents`` argument of a plan or validate question: ``count`` disabled servers in one file."""
    return [{"file": "flood.yaml", "text": "---\n".join(DOCUMENT.format(i=i) for i in range(count))}]
