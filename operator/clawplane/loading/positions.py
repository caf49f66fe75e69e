"""Where each node of a YAML document came from, so diagnostics can point at it."""

from __future__ import annotations

from dataclasses import dataclass, field

PathT = tuple[str | int, ...]


@dataclass(slots=True)
class Positions:
    """1-based (line, column) of every key and value in one document, by field path."""

    values: dict[PathT, tuple[int, int]] = field(default_factory=dict)
    keys: dict[PathT, tuple[int, int]] = field(default_factory=dict)

    def of_value(self, path: PathT) -> tuple[int, int]:
        """Position of the value at ``path``, or of its nearest known ancestor."""
        return self._nearest(self.values, path)

    def of_key(self, path: PathT) -> tuple[int, int]:
        """Position of the key that names ``path`` (falls back to the value's position)."""
        if path in self.keys:
            return self.keys[path]
        return self.of_value(path)

    @staticmethod
    def _nearest(table: dict[PathT, tuple[int, int]], path: PathT) -> tuple[int, int]:
        for cut in range(len(path), -1, -1):
            hit = table.get(path[:cut])
            if hit is not None:
                return hit
        return (0, 0)

    def rebased(self, prefix: PathT) -> Positions:
        """The positions under ``prefix``, with ``prefix`` removed (for ``kind: List`` items)."""
        n = len(prefix)
        return Positions(
            values={p[n:]: v for p, v in self.values.items() if p[:n] == prefix},
            keys={p[n:]: v for p, v in self.keys.items() if p[:n] == prefix and len(p) > n},
        )

    def split_items(self, prefix: PathT) -> dict[int, Positions]:
        """``rebased((*prefix, i))`` for every item ``i`` of the sequence at ``prefix``, in one pass.

        Rebasing item by item costs O(items × positions), which is quadratic for a big List.
        """
        n = len(prefix)
        out: dict[int, Positions] = {}
        for is_key, table in enumerate((self.values, self.keys)):
            shortest = n + 1 + is_key
            part: Positions | None = None
            last: object = None
            for path, pos in table.items():
                if len(path) < shortest or path[:n] != prefix:
                    continue
                index = path[n]
                if not isinstance(index, int):
                    continue
                if part is None or index != last:  # one item's paths come together: one lookup each
                    part = out.get(index)
                    if part is None:
                        part = out[index] = Positions()
                    last = index
                (part.keys if is_key else part.values)[path[n + 1 :]] = pos
        return out


def format_path(path: PathT) -> str:
    """A field path as users write it: ``spec.env.FOO`` or ``spec.args[2]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = str(part)
    return out
