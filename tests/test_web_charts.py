"""The finish of `mem serve`'s charts and pages (issue 39, the reviewer's
screenshots): legends true in both themes, labels drawn whole, tables that
fit a phone. Checked on the SVG and HTML the server sends."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html import unescape
from itertools import pairwise

from conftest import mem, started
from starlette.testclient import TestClient

from grimoire_cli import Grimoire
from grimoire_cli.integrations.web import svg
from grimoire_cli.integrations.web.app import build_app

NS = "{http://www.w3.org/2000/svg}"
HTML = {"accept": "text/html"}


def _client(repo) -> TestClient:
    return started(TestClient(build_app(lambda: Grimoire.open(repo)), base_url="http://127.0.0.1"))


def _observed(tools: list[str], days: int = 3) -> None:
    """Tasks running `tools` in order, two a day over `days` days, one of each day's failing."""
    records = [
        {
            "task_id": f"task-{day}-{n}",
            "goal": f"ship order {day}{n}",
            "outcome": "success" if n else "failure",
            "started_at": f"2026-11-{16 + day}T10:0{n}:00Z",
            "steps": [
                {"tool": tool, "status": "completed", "duration_ms": 100 * (k + 1)} for k, tool in enumerate(tools)
            ],
        }
        for day in range(days)
        for n in range(2)
    ]
    assert mem("observe", "-", input="".join(json.dumps(r) + "\n" for r in records)).code == 0


def _parsed(drawn: str) -> ET.Element:
    return ET.fromstring(drawn)


def test_the_duration_legend_names_each_series_by_its_bars_own_class():
    """The legend said "p50 (dark) / p95 (light)", false in the dark theme
    where p50's bar is the bright one: a swatch of the bars' class holds in both."""
    drawn = _parsed(svg.paired_bars([("kubectl", 10.0, 40.0)], "duration per tool", ("p50", "p95")))
    assert "dark" not in ET.tostring(drawn, encoding="unicode") and "light" not in ET.tostring(
        drawn, encoding="unicode"
    )
    children = list(drawn)
    bars = {
        float(e.get("width")): e.get("class")
        for e in children
        if e.tag == f"{NS}rect" and "swatch" not in e.get("class")
    }
    shorter, longer = sorted(bars)
    of_series = {"p50": bars[shorter], "p95": bars[longer]}  # p50 is 10 of 40
    for name, css in of_series.items():
        label = next(n for n, e in enumerate(children) if e.tag == f"{NS}text" and e.text == name)
        swatch = children[label - 1]
        assert swatch.tag == f"{NS}rect" and swatch.get("class") == f"{css} swatch", (name, swatch.attrib)
    assert of_series["p50"] != of_series["p95"]


def test_patterns_are_a_table_of_their_numbers_not_raw_json(repo):
    """Each pattern was its indented JSON: twenty of them ran to ~8,000 px
    and pushed Insights out of view. One row each; the JSON URL keeps them all."""
    _observed(["list_facilities", "get_rates", "create_shipment"])
    client = _client(repo)
    patterns = client.get("/learning.json").json()["patterns"]
    assert len(patterns) >= 4
    page = client.get("/learning", headers=HTML).text
    shown = page.split("<h2>Patterns</h2>")[1].split("<h2>Insights</h2>")[0]
    assert "<pre>" not in shown and '"success_rate"' not in shown
    heads = re.findall(r"<th>([^<]+)</th>", shown)
    assert heads == ["type", "pattern", "tasks", "success", "evidence"]
    rows = re.findall(r"<tr><td>([^<]+)</td><td><code>([^<]+)</code></td><td>(\d+)</td><td>(\d+)%</td>", shown)
    expected = [(p["type"], p["pattern"], str(p["usage"]), f"{100 * p['success_rate']:.0f}") for p in patterns]
    assert [(kind, unescape(text), usage, rate) for kind, text, usage, rate in rows] == expected


CHAR = 7.5  # px a character at the charts' 12 px, generous (the browser test measures the real glyphs)


def _texts(drawn: str) -> list[tuple[float, float, str, str]]:
    """Each text of a chart: x, y, anchor and content."""
    root = _parsed(drawn)
    return [(float(t.get("x")), float(t.get("y")), t.get("text-anchor"), t.text or "") for t in root.iter(f"{NS}text")]


def _overrun(drawn: str) -> list[str]:
    """The texts that reach past the viewBox's sides by the estimate of CHAR a character."""
    width = float(_parsed(drawn).get("viewBox").split()[2])
    out = []
    for x, _, anchor, text in _texts(drawn):
        start = x - CHAR * len(text) if anchor == "end" else x
        if start < 0 or start + CHAR * len(text) > width:
            out.append(text)
    return out


LONG_TOOLS = {  # lines ending close together, names longer than the 14 characters once shown
    "create_shipment": [90, 95, 96],
    "cancel_shipment_and_tell_the_customer": [80, 85, 95],
    "list_facilities": [70, 90, 94],
    "send_email": [99, 60, 93.5],
}


def test_every_end_label_of_a_line_chart_is_whole_inside_the_chart_and_a_line_apart():
    drawn = svg.curves(LONG_TOOLS, "success rate per day", x_label="day", y_label="%", most=100)
    assert _overrun(drawn) == []
    labels = [(y, text) for _, y, _, text in _texts(drawn) if text in LONG_TOOLS]
    assert sorted(text for _, text in labels) == sorted(LONG_TOOLS)  # every name whole
    ys = sorted(y for y, _ in labels)
    assert all(lower - upper >= 16 for upper, lower in pairwise(ys)), ys
    assert all(10 <= y - 4 <= 190 for y in ys), ys  # within the plot's height


def test_labels_of_lines_ending_at_the_bottom_are_pushed_up_not_out():
    drawn = svg.curves({f"tool_{n}": [5, 0] for n in range(4)}, "t", x_label="day", y_label="ms")
    ys = sorted(y for _, y, _, text in _texts(drawn) if text.startswith("tool_"))
    assert len(ys) == 4 and ys[-1] - 4 <= 190 and all(b - a >= 16 for a, b in pairwise(ys)), ys


def test_a_large_y_value_is_drawn_whole():
    assert _overrun(svg.curves({"a": [123456.7, 1]}, "t", x_label="day", y_label="ms")) == []


def test_the_sentence_over_the_day_lines_names_the_tools_drawn(repo):
    """It said "the 4 most used tools" with a fifth listed: it names what is drawn, of how many."""
    tools = ["list_facilities", "get_rates", "create_shipment", "send_email", "cancel_shipment"]
    _observed(tools)
    page = _client(repo).get("/learning", headers=HTML).text
    chart = page.split("Success rate per day")[1].split("</section>")[0]
    assert chart.count("<polyline") == 4
    drawn = re.findall(r'line-label-\d"[^>]*>([a-z_]+)</text>', chart)
    said = re.search(r"Per day \(UTC\), the 4 most used of 5 tools: ([a-z_, ]+)\.", page)
    assert said and sorted(said[1].split(", ")) == sorted(drawn), (said, drawn)
    assert len(set(drawn)) == 4 and set(drawn) < set(tools)


def test_charts_in_cards_are_drawn_for_a_card_at_their_natural_size(repo):
    """A 640-wide chart in a ~330 px card drew its 12 px text at ~6 px: a
    card's chart is as wide as a card, and says so (its width attribute), so
    the stylesheet only shrinks it to fit."""
    _observed(["list_facilities", "create_shipment"])
    client = _client(repo)
    for url in ("/", "/learning"):
        page = client.get(url, headers=HTML).text
        cards = re.findall(r'<section><h2>[^<]*</h2><svg class="chart" viewBox="0 0 (\d+) \d+" width="(\d+)"', page)
        assert len(cards) == 5 and all(box == width == str(svg.CARD) for box, width in cards), (url, cards)
    assert int(svg.CARD) <= 400
