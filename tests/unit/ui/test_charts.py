"""The dashboard's SVG charts: well-formed, scaled to the data, escaped, and honest when empty."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from clawplane.telemetry import Minute
from clawplane.ui import charts

SVG = "{http://www.w3.org/2000/svg}"
T0 = 1_800_000_000.0  # a minute boundary


def hour(calls: dict[int, tuple[int, int, float]] | None = None) -> list[Minute]:
    """Sixty minutes, oldest first; ``calls`` maps a minute's index to (calls, errors, seconds)."""
    found = calls or {}
    out = []
    for i in range(60):
        n, e, s = found.get(i, (0, 0, 0.0))
        out.append(Minute(T0 + 60 * i, n, e, s if n else None, s * 2 if n else None))
    return out


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    assert "NaN" not in svg and "inf" not in svg.lower()
    return root


def bars(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(SVG + "g") if g.get("class") == "bar"]


def height(bar: ET.Element, kind: str) -> float:
    rect = next((r for r in bar.iter(SVG + "rect") if r.get("class") == kind), None)
    return float(rect.get("height", "0")) if rect is not None else 0.0


def test_one_bar_per_minute_with_calls_scaled_to_the_busiest() -> None:
    root = parse(
        charts.activity_chart(hour({0: (10, 0, 0.01), 30: (5, 0, 0.02), 59: (20, 4, 0.03)}), "notes")
    )
    found = bars(root)
    assert [(b.get("data-calls"), b.get("data-errors")) for b in found] == [
        ("10", "0"),
        ("5", "0"),
        ("20", "4"),
    ]
    full = charts.HEIGHT - 12 - 28  # the plot's height: 20 calls is the top tick
    assert charts.nice_ticks(20) == [0, 5, 10, 15, 20]
    assert height(found[0], "ok") == pytest.approx(full / 2)
    assert height(found[1], "ok") == pytest.approx(full / 4)
    assert height(found[2], "ok") + height(found[2], "errors") == pytest.approx(full)
    assert height(found[2], "errors") == pytest.approx(full / 5)


def test_errors_are_drawn_in_their_own_colour() -> None:
    root = parse(charts.activity_chart(hour({3: (4, 4, 0.01)}), "notes"))
    (bar,) = bars(root)
    fills = {r.get("class"): r.get("fill") for r in bar.iter(SVG + "rect")}
    assert fills == {"errors": charts.ERRORS}  # every call failed: no ok part at all
    assert charts.ERRORS != charts.CALLS


def test_a_name_from_the_folder_is_escaped() -> None:
    name = '<script>alert("x")</script>&'
    for svg in (
        charts.activity_chart(hour({1: (1, 0, 0.01)}), name),
        charts.latency_chart(hour({1: (1, 0, 0.01)}), name),
        charts.sparkline(hour({1: (1, 0, 0.01)}), name),
    ):
        assert "<script" not in svg
        root = parse(svg)
        title = root.find(SVG + "title")
        assert title is not None and title.text is not None and title.text.startswith(name)
        assert (root.get("aria-label") or "").startswith(name)


def test_zero_data_draws_an_honest_empty_chart() -> None:
    for svg in (
        charts.activity_chart(hour(), "notes", empty="no calls in the last hour"),
        charts.latency_chart(hour(), "notes", empty="no calls in the last hour"),
    ):
        root = parse(svg)
        assert bars(root) == []
        texts = [t.text for t in root.iter(SVG + "text")]
        assert "no calls in the last hour" in texts
        numbers = [float(v) for v in re.findall(r'(?:x|y|height|width)="(-?[0-9.]+)"', svg)]
        assert numbers and all(math.isfinite(v) for v in numbers)
    spark = parse(charts.sparkline(hour(), "notes"))
    assert spark.get("aria-label") == "notes: 0 calls in the last hour"
    assert charts.summary(hour(), since=T0 - 7200, now=T0 + 3600) == "No calls in the last hour."
    assert charts.activity_chart([], "notes").count("<g") == 0  # no minutes at all: still a frame


def test_after_a_restart_the_words_say_when_the_hour_began() -> None:
    said = charts.summary(hour(), since=T0 + 600, now=T0 + 1200)
    assert said == "No calls since 08:10:00 UTC (the supervisor started then)."


def test_one_huge_outlier_keeps_the_small_minutes_visible() -> None:
    root = parse(charts.activity_chart(hour({0: (1, 0, 0.01), 1: (100_000, 0, 0.01)}), "notes"))
    small, huge = bars(root)
    assert huge.get("data-calls") == "100000"
    assert height(huge, "ok") == pytest.approx(charts.HEIGHT - 12 - 28)
    assert height(small, "ok") >= 1.0  # at least a pixel: the minute had a call
    ticks = [t.text for t in root.iter(SVG + "text") if t.text and t.text.replace(".", "").isdigit()]
    assert ticks[-1] == "100000"


def test_latency_lines_break_where_no_call_was_measured() -> None:
    root = parse(charts.latency_chart(hour({0: (1, 0, 0.010), 1: (1, 0, 0.020), 5: (2, 0, 0.5)}), "notes"))
    paths = {p.get("class"): p.get("d") or "" for p in root.iter(SVG + "path")}
    assert set(paths) == {"p50", "p95"}
    assert paths["p50"].count("M") == 2 and paths["p50"].count("L") == 1
    labels = [t.text for t in root.iter(SVG + "text")]
    assert "1000" in labels  # p95 of 1 s is on the scale (ticks in ms)
    assert "now" in labels and "−60 min" in labels


def test_the_summary_counts_the_hour() -> None:
    said = charts.summary(hour({0: (40, 3, 0.012), 1: (2, 0, 0.040)}), since=T0 - 7200, now=T0 + 3600)
    assert (
        said == "42 calls, 3 errors in the last hour; p50 12 ms (typical minute), p95 80 ms (slowest minute)."
    )


def test_ticks_are_round_and_cover_the_top() -> None:
    assert charts.nice_ticks(0) == [0.0, 1.0]
    assert charts.nice_ticks(7) == [0, 2, 4, 6, 8]
    assert charts.nice_ticks(1) == [0, 0.5, 1]
    assert charts.nice_ticks(float("nan")) == [0.0, 1.0]
