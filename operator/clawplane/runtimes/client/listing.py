"""Bounded pagination for tools/list, resources/list and prompts/list.

Follows OpenClaw's ``collectMcpPaginatedItems``: one deadline for the whole listing, at most
``pages`` pages, ``items`` items and ``bytes`` UTF-8 bytes of page JSON, and a cursor the
server already returned is an error rather than a loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio

from clawplane.runtimes.errors import ListingError

__all__ = ["ListLimits", "Page", "collect_pages"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ListLimits:
    """Bounds of one listing: a deadline in seconds and page/item/byte caps."""

    timeout: float
    pages: int = 128
    items: int = 16_384
    bytes: int = 10 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One page as returned by the server, with the size of its JSON."""

    items: list[T]
    next_cursor: str | None
    size: int


async def collect_pages(
    load_page: Callable[[str | None], Awaitable[Page[T]]],
    limits: ListLimits,
    *,
    label: str,
    item_label: str,
) -> list[T]:
    """Every item of a paginated listing, within ``limits``.

    Raises:
        ListingError: The listing took too long, exceeded a bound or repeated a cursor.
    """
    items: list[T] = []
    seen: set[str] = set()
    used_bytes = 0
    cursor: str | None = None
    try:
        with anyio.fail_after(limits.timeout):
            for _ in range(limits.pages):
                page = await load_page(cursor)
                used_bytes += page.size
                if used_bytes > limits.bytes:
                    raise ListingError(f"{label} exceeded {limits.bytes} bytes")
                if len(items) + len(page.items) > limits.items:
                    raise ListingError(f"{label} exceeded {limits.items} {item_label}")
                items.extend(page.items)
                if page.next_cursor is None:
                    return items
                if page.next_cursor in seen:
                    raise ListingError(f"{label} returned a repeated pagination cursor")
                seen.add(page.next_cursor)
                cursor = page.next_cursor
    except TimeoutError:
        raise ListingError(f"{label} timed out after {round(limits.timeout * 1000)}ms") from None
    raise ListingError(f"{label} exceeded {limits.pages} pages")
