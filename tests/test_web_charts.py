"""The finish of `mem serve`'s charts and pages (issue 39, the reviewer's
screenshots): legends true in both themes, labels drawn whole, tables that
fit a phone. Checked on the SVG and HTML the server sends."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from grimoire_cli.integrations.web import svg

NS = "{http://www.w3.org/2000/svg}"


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
    top = max(bars)
    of_series = {"p50": bars[top / 4], "p95": bars[top]}  # p50 is 10 of 40
    for name, css in of_series.items():
        label = next(n for n, e in enumerate(children) if e.tag == f"{NS}text" and e.text == name)
        swatch = children[label - 1]
        assert swatch.tag == f"{NS}rect" and swatch.get("class") == f"{css} swatch", (name, swatch.attrib)
    assert of_series["p50"] != of_series["p95"]
