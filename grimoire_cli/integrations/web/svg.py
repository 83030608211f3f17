"""Charts as SVG text, drawn on the server: the browser needs no chart
library and no JavaScript. Colours come from CSS classes (the stylesheet's
light and dark themes); the strict Content-Security-Policy forbids inline
styles. Every text that came from a grimoire is escaped here, since the
templates put these strings in as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

WIDTH = 640  # a full-width chart's viewBox width, drawn at most that many px wide
CARD = 360  # a chart's in a card of the pages' grids (~330 px): its 12 px text stays ~11 px, not 6
ROW = 22  # a bar's row height
CHAR = 7.5  # a character's width at 12 px, to make room for labels (see text_width)
LINE = 16  # a label's line height at 12 px (its drawn box is ~15): end labels of lines are at least this far apart
LABEL = 170  # the most room for the labels left of the bars (at most 45% of a card)
PAIR_CSS = ("bar", "bar bar-alt")  # paired_bars' first and second series
EDGE = 90  # a timeline's ends: half its widest label, "2026-11-22 superseded" centred under the first dot


def _svg(height: int, title: str, body: list[str], width: int = WIDTH) -> str:
    # The width attribute is its natural size (a unit a pixel); the stylesheet shrinks it only to fit its box.
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" role="img" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>{"".join(body)}</svg>'
    )


def _text(x: float, y: float, text: str, css: str = "label", anchor: str = "start") -> str:
    return f'<text class="{css}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{escape(text)}</text>'


def bars(
    rows: Sequence[tuple[str, float]], title: str, *, unit: str = "", most: float | None = None, width: int = WIDTH
) -> str:
    """Horizontal bars, one per (label, value), the value written after its
    bar; `most` is the value of a full bar (default: the largest)."""
    if not rows:
        return _svg(ROW, title, [_text(0, 15, "nothing yet")], width)
    top = most if most else max(value for _, value in rows) or 1
    label_w = _label_room([label for label, _ in rows], width)
    span = width - label_w - 6 - max(text_width(f"{value:g}{unit}") for _, value in rows) - 10
    body = []
    for row, (label, value) in enumerate(rows):
        y = row * ROW
        length = max(0.0, span * value / top)
        body.append(_text(label_w, y + 15, _fitted(label, label_w), anchor="end"))
        body.append(f'<rect class="bar" x="{label_w + 6}" y="{y + 4}" width="{length:.1f}" height="{ROW - 8}" rx="2"/>')
        body.append(_text(label_w + 6 + length + 6, y + 15, f"{value:g}{unit}", "value"))
    return _svg(len(rows) * ROW, title, body, width)


def _label_room(labels: Sequence[str], width: int) -> float:
    """The width of the labels' column: the widest label's, within LABEL and 45% of the chart."""
    return min(max(text_width(label) for label in labels), LABEL, 0.45 * width)


def _fitted(label: str, room: float) -> str:
    """`label` whole if it fits `room`, else cut with an ellipsis (its full text is in the page's JSON)."""
    most = int(room // CHAR)
    return label if len(label) <= most else label[: most - 1] + "…"


def paired_bars(
    rows: Sequence[tuple[str, float | None, float | None]],
    title: str,
    names: tuple[str, str],
    *,
    width: int = WIDTH,
) -> str:
    """Two bars per label (p50 and p95 of a tool's durations): the first
    drawn over the second, both to one scale; a missing value draws no bar."""
    if not rows:
        return _svg(ROW, title, [_text(0, 15, "nothing yet")], width)
    top = max((value or 0) for _, *values in rows for value in values) or 1
    said = [" / ".join("-" if v is None else f"{v:g}" for v in (first, second)) + " ms" for _, first, second in rows]
    label_w = _label_room([label for label, *_ in rows], width)
    span = width - label_w - 6 - max(text_width(text) for text in said) - 10
    body = []
    for row, (label, first, second) in enumerate(rows):
        y = row * ROW
        body.append(_text(label_w, y + 15, _fitted(label, label_w), anchor="end"))
        for css, value in ((PAIR_CSS[1], second), (PAIR_CSS[0], first)):
            if value is not None:
                length = span * value / top
                body.append(
                    f'<rect class="{css}" x="{label_w + 6}" y="{y + 4}" width="{length:.1f}" height="{ROW - 8}"/>'
                )
        body.append(_text(width - 4, y + 15, said[row], "value", anchor="end"))
    body.extend(_swatches(((PAIR_CSS[0], names[0]), (PAIR_CSS[1], names[1])), len(rows) * ROW + 4, label_w + 6))
    return _svg(len(rows) * ROW + 20, title, body, width)


def _swatches(named: Sequence[tuple[str, str]], y: float, x: float) -> list[str]:
    """A legend: each name after a square of its bars' own CSS class, so it
    holds in either theme (a word like "dark" flips with the palette)."""
    body = []
    for css, name in named:
        body.append(f'<rect class="{css} swatch" x="{x:.1f}" y="{y:.1f}" width="12" height="12"/>')
        body.append(_text(x + 16, y + 11, name, "value"))
        x += 16 + 8 * len(name) + 16
    return body


def curves(
    series: Mapping[str, Sequence[float | None]],
    title: str,
    *,
    x_label: str,
    y_label: str,
    x_ends: tuple[str, str] | None = None,
    most: float | None = None,
    width: int = WIDTH,
) -> str:
    """Lines over a shared x axis (0..len-1), one per series, labelled at
    their end; a None is a gap in its line. `x_ends` names the axis's two
    ends (default: 0 and the last index); `most` is the top of the y axis."""
    height, bottom = 220, 30
    longest = max((len(values) for values in series.values()), default=0)
    known = [y for values in series.values() for y in values if y is not None]
    if longest < 2 or not known:
        return _svg(ROW, title, [_text(0, 15, "nothing yet")], width)
    top = most or max(known) or 1
    # Room for the widest end label and y value, so each is drawn whole (a label cut to 14 characters still overran).
    left = 8 + text_width(f"{top:g} {y_label}")
    right = 12 + max(text_width(name) for name in series)
    plot_w, plot_h = width - left - right, height - bottom - 10
    first, last = x_ends or ("0", str(longest - 1))

    def at(y: float) -> float:
        return 10 + plot_h * (1 - y / top)

    def point(x: int, y: float) -> str:
        return f"{left + plot_w * x / (longest - 1):.1f},{at(y):.1f}"

    body = [
        f'<line class="axis" x1="{left}" y1="{10 + plot_h}" x2="{left + plot_w}" y2="{10 + plot_h}"/>',
        f'<line class="axis" x1="{left}" y1="10" x2="{left}" y2="{10 + plot_h}"/>',
        _text(left - 4, 16, f"{top:g} {y_label}", "value", anchor="end"),
        _text(left - 4, 10 + plot_h, "0", "value", anchor="end"),
        # The axis's ends named under it, the last at the chart's edge: in a card both would not fit the plot's width.
        _text(width - 4, height - 6, f"{x_label}: {last}", "value", anchor="end"),
        _text(left, height - 6, f"{x_label}: {first}", "value"),
    ]
    ends = {}
    for number, (name, values) in enumerate(series.items()):
        css = f"line line-{number % 4}"
        for run in _runs(values):
            if len(run) == 1:
                x, y = run[0]
                centre = point(x, y).split(",")
                body.append(f'<circle class="{css}" cx="{centre[0]}" cy="{centre[1]}" r="2.5"/>')
            else:
                body.append(f'<polyline class="{css}" fill="none" points="{" ".join(point(x, y) for x, y in run)}"/>')
        end = next((y for y in reversed(values) if y is not None), None)
        if end is not None:
            ends[number, name] = at(end)
    for (number, name), y in _spread(ends, 10, 10 + plot_h).items():
        body.append(_text(left + plot_w + 6, y + 4, name, f"value line-label-{number % 4}"))
    return _svg(height, title, body, width)


def text_width(text: str) -> float:
    """A generous estimate of `text`'s width at the charts' 12 px (system-ui
    averages ~6.5 px a character; 7.5 leaves room for wide letters)."""
    return CHAR * len(text)


def _spread(wanted: Mapping[tuple[int, str], float], low: float, high: float) -> dict[tuple[int, str], float]:
    """Each label's y as near its line's end as it can be, a text line apart
    from the next (lines that end close together had their labels overlap),
    and kept between `low` and `high` while they fit."""
    order = sorted(wanted, key=lambda key: wanted[key])
    placed: dict[tuple[int, str], float] = {}
    for key in order:  # down from the top: each at least a line below the one above
        placed[key] = max(wanted[key], low, *(placed[k] + LINE for k in placed))
    for number in reversed(range(len(order))):  # then up from the bottom, should the last have passed it
        key = order[number]
        placed[key] = min(placed[key], high, *(placed[k] - LINE for k in order[number + 1 :]))
    return placed


def _runs(values: Sequence[float | None]) -> list[list[tuple[int, float]]]:
    """The stretches of a series between its gaps, as (x, y) points."""
    runs: list[list[tuple[int, float]]] = [[]]
    for x, y in enumerate(values):
        if y is None:
            runs.append([])
        else:
            runs[-1].append((x, y))
    return [run for run in runs if run]


def timeline(chain: Sequence[dict], current: str, title: str) -> str:
    """A supersede chain oldest to newest as dots on a line, each a link to
    its entry, the one shown ringed; labelled with its id and date."""
    if not chain:
        return _svg(ROW, title, [_text(0, 15, "nothing yet")])
    step = (WIDTH - 2 * EDGE) / max(1, len(chain) - 1)
    body = [f'<line class="axis" x1="{EDGE}" y1="30" x2="{EDGE + step * (len(chain) - 1):.1f}" y2="30"/>']
    for number, view in enumerate(chain):
        x = EDGE + step * number
        css = "dot dot-current" if view.get("id") == current else "dot"
        when = str((view.get("source") or {}).get("timestamp", ""))[:10]
        body.append(
            f'<a href="/entry/{escape(str(view.get("id", "")))}"><circle class="{css}" cx="{x:.1f}" cy="30" r="8"/>'
            f"{_text(x, 58, str(view.get('id', '')), 'value', anchor='middle')}"
            f"{_text(x, 74, when + ' ' + str(view.get('state', '')), 'value', anchor='middle')}</a>"
        )
    return _svg(84, title, body)
