"""The dashboard's pictures of traffic: SVG drawn on the server from the last hour's minutes.

Pure functions from ``list[Minute]`` (oldest first, one per minute, as ``CallSeries.hour`` gives
them) to SVG text: no script, no stylesheet (the pages' CSP allows neither inline), colours as
presentation attributes. Every chart has a ``<title>`` and an ``aria-label``, and the pages put
``summary``'s sentence beside it. Names from the folder are escaped; an hour without calls
draws an empty frame that says so, never a division by zero.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from html import escape

from clawplane.telemetry import Minute

__all__ = ["activity_chart", "hour_span", "latency_chart", "nice_ticks", "sparkline", "summary"]

WIDTH, HEIGHT = 640, 180
_LEFT, _RIGHT, _TOP, _BOTTOM = 52, 12, 12, 28
CALLS, ERRORS, P50, P95, INK, GRID = "#2f6fb0", "#c0392b", "#2f6fb0", "#d35400", "#444", "#ddd"
_SPARK_W, _SPARK_H = 120, 24


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.1f} ms"


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least ``top`` (1, 2 or 5 times a power of ten apart)."""
    if not math.isfinite(top) or top <= 0:
        return [0.0, 1.0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    ticks = [0.0]
    while ticks[-1] < top:
        ticks.append(round(ticks[-1] + step, 12))
    return ticks


def _weighted(values: list[tuple[float, int]], q: float) -> float | None:
    """The ``q`` quantile of ``values`` (value, weight)."""
    total = sum(w for _, w in values)
    if total == 0:
        return None
    seen = 0
    for value, weight in sorted(values):
        seen += weight
        if seen >= q * total:
            return value
    return sorted(values)[-1][0]


def summary(minutes: Sequence[Minute], since: float | None = None, now: float | None = None) -> str:
    """The chart's words: calls, errors and latency of the hour (or that there were none, since when)."""
    calls = sum(m.calls for m in minutes)
    errors = sum(m.errors for m in minutes)
    span = hour_span(since, now)
    if calls == 0:
        return f"No calls {span}."
    p50 = _weighted([(m.p50, m.calls) for m in minutes if m.p50 is not None], 0.5)
    p95 = max((m.p95 for m in minutes if m.p95 is not None), default=None)
    said = f"{calls} call{'' if calls == 1 else 's'}, {errors} error{'' if errors == 1 else 's'} {span}"
    if p50 is not None and p95 is not None:
        said += f"; p50 {_ms(p50)} (typical minute), p95 {_ms(p95)} (slowest minute)"
    return said + "."


def hour_span(since: float | None, now: float | None) -> str:
    """'in the last hour', or since when the counting process started, if within the hour."""
    now = time.time() if now is None else now
    if since is not None and now - since < 3600:
        return f"since {time.strftime('%H:%M:%S UTC', time.gmtime(since))} (the supervisor started then)"
    return "in the last hour"


def _frame(label: str, body: list[str], width: int = WIDTH, height: int = HEIGHT) -> str:
    title = escape(label, quote=True)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{title}" class="chart">'
        f"<title>{title}</title>{''.join(body)}</svg>"
    )


def _axes(ticks: list[float], unit: str) -> list[str]:
    """The y grid with its labels, and the x axis marked in minutes ago."""
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM
    top = ticks[-1]
    out = []
    for tick in ticks:
        y = _TOP + plot_h - plot_h * tick / top
        out.append(
            f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="{GRID}"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="{INK}">'
            f"{tick:g}</text>"
        )
    out.append(
        f'<text x="12" y="{_TOP + plot_h / 2:.1f}" font-size="11" fill="{INK}" text-anchor="middle" '
        f'transform="rotate(-90 12 {_TOP + plot_h / 2:.1f})">{unit}</text>'
    )
    base = _TOP + plot_h
    out.append(f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{base}" y2="{base}" stroke="{INK}"/>')
    for ago in (60, 45, 30, 15, 0):
        x = _LEFT + plot_w * (60 - ago) / 60
        text = "now" if ago == 0 else f"−{ago} min"
        anchor = "end" if ago == 0 else "start" if ago == 60 else "middle"
        out.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{base}" y2="{base + 4}" stroke="{INK}"/>'
            f'<text x="{x:.1f}" y="{base + 16}" text-anchor="{anchor}" font-size="11" '
            f'fill="{INK}">{text}</text>'
        )
    return out


def _empty(text: str) -> str:
    plot_h = HEIGHT - _TOP - _BOTTOM
    return (
        f'<text x="{_LEFT + (WIDTH - _LEFT - _RIGHT) / 2:.1f}" y="{_TOP + plot_h / 2:.1f}" '
        f'text-anchor="middle" font-size="13" fill="{INK}" class="empty">{escape(text)}</text>'
    )


def activity_chart(minutes: Sequence[Minute], name: str, *, empty: str = "no calls in the last hour") -> str:
    """Calls per minute as bars, each minute's errors stacked on top in red (``data-calls`` and
    ``data-errors`` carry the numbers a bar stands for)."""
    top = max((m.calls for m in minutes), default=0)
    ticks = nice_ticks(top)
    scale = (HEIGHT - _TOP - _BOTTOM) / ticks[-1]
    slot = (WIDTH - _LEFT - _RIGHT) / max(1, len(minutes))
    base = HEIGHT - _BOTTOM
    body = _axes(ticks, "calls")
    for i, m in enumerate(minutes):
        if m.calls == 0:
            continue
        x = _LEFT + i * slot + slot * 0.1
        ok = (m.calls - m.errors) * scale
        bad = m.errors * scale
        # A minute with a call stays visible next to a huge outlier: at least one pixel high.
        ok_h = max(ok, 1.0) if m.calls > m.errors else 0.0
        bad_h = max(bad, 1.0) if m.errors else 0.0
        body.append(
            f'<g class="bar" data-calls="{m.calls}" data-errors="{m.errors}">'
            f"<title>{m.calls} calls, {m.errors} errors at {_clock(m.start)}</title>"
        )
        if ok_h:
            body.append(
                f'<rect x="{x:.2f}" y="{base - ok_h:.2f}" width="{slot * 0.8:.2f}" height="{ok_h:.2f}" '
                f'fill="{CALLS}" class="ok"/>'
            )
        if bad_h:
            body.append(
                f'<rect x="{x:.2f}" y="{base - ok_h - bad_h:.2f}" width="{slot * 0.8:.2f}" '
                f'height="{bad_h:.2f}" fill="{ERRORS}" class="errors"/>'
            )
        body.append("</g>")
    if top == 0:
        body.append(_empty(empty))
    return _frame(f"{name}: calls (blue) and errors (red) per minute, last hour", body)


def latency_chart(minutes: Sequence[Minute], name: str, *, empty: str = "no calls in the last hour") -> str:
    """p50 (blue, solid) and p95 (orange, dashed) of each minute with calls, in milliseconds."""
    top = max((m.p95 or 0.0 for m in minutes), default=0.0) * 1000
    ticks = nice_ticks(top)
    scale = (HEIGHT - _TOP - _BOTTOM) / ticks[-1]
    slot = (WIDTH - _LEFT - _RIGHT) / max(1, len(minutes))
    base = HEIGHT - _BOTTOM
    body = _axes(ticks, "ms")
    for key, colour, dash in (("p50", P50, ""), ("p95", P95, ' stroke-dasharray="5 3"')):
        points = []
        path, pen = [], "M"
        for i, m in enumerate(minutes):
            value = getattr(m, key)
            if value is None:
                pen = "M"  # a minute without calls breaks the line: nothing was measured
                continue
            x, y = _LEFT + (i + 0.5) * slot, base - value * 1000 * scale
            path.append(f"{pen}{x:.2f} {y:.2f}")
            points.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="2" fill="{colour}"/>')
            pen = "L"
        if path:
            body.append(
                f'<path class="{key}" d="{" ".join(path)}" fill="none" stroke="{colour}" '
                f'stroke-width="2"{dash}/>'
            )
            body.extend(points)
    if top == 0:
        body.append(_empty(empty))
    return _frame(f"{name}: latency per minute, p50 (blue) and p95 (orange, dashed), last hour", body)


def sparkline(minutes: Sequence[Minute], name: str) -> str:
    """A small line of calls per minute over the hour (flat at the bottom when there were none)."""
    top = max((m.calls for m in minutes), default=0)
    step = _SPARK_W / max(1, len(minutes) - 1)
    points = " ".join(
        f"{i * step:.1f},{_SPARK_H - 2 - (m.calls / top * (_SPARK_H - 4) if top else 0):.1f}"
        for i, m in enumerate(minutes)
    )
    calls = sum(m.calls for m in minutes)
    label = f"{name}: {calls} call{'' if calls == 1 else 's'} in the last hour"
    body = (
        [f'<polyline points="{points}" fill="none" stroke="{CALLS}" stroke-width="1.5"/>'] if points else []
    )
    return _frame(label, body, _SPARK_W, _SPARK_H).replace('class="chart"', 'class="sparkline"', 1)


def _clock(at: float) -> str:
    return time.strftime("%H:%M UTC", time.gmtime(at))
