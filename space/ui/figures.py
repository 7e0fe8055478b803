"""Plotly figures: pure functions of published leaderboard rows and result dicts (aggregates only).

Nothing here sees per-item outcomes on the hidden test. System names are user text and plotly renders a
subset of HTML in labels and hovers, so every name passes through `html.escape` before it reaches a figure.

Every builder takes the page's `lang`: titles, axis titles, legends and hovers are in that one language. A
metric's name and its "↑"/"↓" come from `scoring/metrics_spec.py`; a metric the scorer names undefined (0/0,
published as 0: a row's `undefined.<metric>`) is drawn as no bar or point, "n/a" and the reason on hover.
"""

from __future__ import annotations

import html
import os
import re
import textwrap
import unicodedata
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scoring.metrics_spec import VARM_FIELDS, MetricSpec
from scoring.tracks import metric_spec

from .i18n import breakdown_name, subset_name, t
from .scorer_text import say
from .tables import better_side, undefined_reason

NA = "n/a"
MAX_SYSTEMS = 10  # the Analysis tab charts at most this many systems (each layout below is sized for it)
LABEL_CHARS = 16  # columns of a line of a system name on an axis or in a legend (two lines at most)
LEGEND_ENTRY_PX = 110  # a legend entry's text column: LABEL_CHARS columns of 12 px text
LEGEND_LINE_PX = 16  # one line of a legend entry (12 px text)
LEGEND_PLOT_PX = 380  # a chart with a systems legend, without the legend
SYSTEM_ROW_PX = (26, 34)  # a system's row on a system axis, for one- and two-line names
HEATMAP_ROW_PX = (22, 32)  # the same in each panel of the cue heatmap (11 px names)
_BREAKS = " -_/:：，,"  # a line of a system name may end after one of these
MODEBAR_PX = 30  # plotly's toolbar sits in this strip above the title (on a phone it is always shown)
# Only the tools a reader uses; the others are dead weight on a bar chart and widen the toolbar.
_MODEBAR_REMOVE = ["select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d"]


TITLE_LINE_PX = 22  # one line of a 15 px title
# Columns of a title line ("…" counts one, a Chinese character two): a figure is 324 px wide on a 390 px
# phone and a 15 px title gets about 300 px of it (measured in Chromium: 6-8 px a Latin letter, 15 a Chinese).
TITLE_COLUMNS = 38


def _finish(
    fig: go.Figure, title: str, *, height: int = 420, systems_legend: bool = False, **layout: object
) -> go.Figure:
    """The layout every chart shares, readable from a 390 px phone to a 1440 px desktop: the title at the top
    left below the toolbar's strip, the legend below everything in the figure's own coordinates, margins
    that grow to fit tick labels, axis titles and legend (plotly's automargin).

    Plotly does not wrap titles: a line longer than TITLE_COLUMNS is broken here (a title sticking out of a
    phone's figure is cut off); a note the chart set as subtitle (why cells
    are n/a) becomes smaller lines under it. The title's room is fixed here rather than left to automargin:
    plotly places a multi-line title by its first line, and automargin then cut that line off.

    `systems_legend`: the legend names systems (two lines of LABEL_CHARS at most), so entries of one fixed
    width line up in columns; other legends keep entries as wide as their text. `height` is the plot's: the
    figure grows by the legend's height on a phone, where plotly lays the entries out one a row (it fits them
    across the plot area, not the figure), so the plot keeps its room and the legend never reaches the half
    of the figure past which plotly scrolls it (the entries beyond are then hidden)."""
    note = fig.layout.title.subtitle.text
    if systems_legend:
        height += LEGEND_LINE_PX * sum(_lines(str(tr.name)) for tr in fig.data if tr.showlegend is not False)
    title = "<br>".join(_wrap(line, TITLE_COLUMNS) for line in title.split("<br>"))
    text = title + (f"<br><sub>{note}</sub>" if note else "")
    lines = text.count("<br>") + 1
    # Measured in Chromium: a one-line title's top sits 3 px above `pad.t`, a longer one's 15 px.
    pad_top = MODEBAR_PX + (3 if lines == 1 else 15)
    fig.update_layout(
        template="plotly_white",
        title={
            "text": text,
            "x": 0,
            "xref": "container",
            "xanchor": "left",
            "y": 1,
            "yref": "container",
            "yanchor": "top",
            "pad": {"l": 12, "t": pad_top},
            "automargin": False,
            "font": {"size": 15},
            "subtitle": {"text": ""},
        },
        margin={"l": 12, "r": 20, "t": MODEBAR_PX + lines * TITLE_LINE_PX + 14, "b": 12, "autoexpand": True},
        legend={
            "orientation": "h",
            "x": 0,
            "xanchor": "left",
            "xref": "container",
            "y": 0,
            "yanchor": "bottom",
            "yref": "container",
            "font": {"size": 12},
            "entrywidthmode": "pixels",
            "entrywidth": LEGEND_ENTRY_PX if systems_legend else 0,
            "maxheight": 1,  # the figure's heights leave it room (below): never a scrolled legend
        },
        modebar={"remove": _MODEBAR_REMOVE},
        hoverlabel={"namelength": -1},
        height=height,
        **layout,
    )
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def _num(value: object) -> float | None:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if v != v else v


def _pct(value: object) -> float | None:
    v = _num(value)
    return None if v is None else v * 100


def _axis(spec: MetricSpec, lang: str) -> str:
    """A metric axis title: its name, unit and direction ("JREM (%) ↑", "HER-C (%) ↓")."""
    return f"{spec.name(lang)} ({spec.unit}) {spec.arrow}".rstrip()


def _titled(name: str, arrow: str) -> str:
    """An axis title that is not one metric's ("Error rate (%) ↓")."""
    return f"{name} (%) {arrow}".rstrip()


def _metric(rows: Sequence[dict], key: str, lang: str = "en") -> tuple[list[float | None], list[str]]:
    """One metric of each row in percent (None where undefined or missing) and its hover text: the value,
    or "n/a" with the scorer's reason why it is not a measurement."""
    values, shown = [], []
    for r in rows:
        reason = undefined_reason(r, key, lang)
        v = None if reason else _pct(r.get(key))
        values.append(v)
        shown.append(f"{NA} ({html.escape(reason)})" if reason else NA if v is None else f"{v:.1f}%")
    return values, shown


def _field_names(lang: str) -> list[str]:
    return [en if lang == "en" else zh for _, en, zh in VARM_FIELDS]


def _columns(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


_TOKEN = re.compile(r"&#?\w+;|.", re.S)  # an HTML entity shows as one character: never split it


def _width(token: str) -> int:
    return 1 if len(token) > 1 else _columns(token)


def _fit(tokens: Sequence[str], n: int, breaks: str) -> tuple[int, int]:
    """How many of `tokens` fit in `n` columns, and how many up to the last of them that is in `breaks`
    (0: none is)."""
    used, fit, brk = 0, 0, 0
    for i, tok in enumerate(tokens):
        used += _width(tok)
        if used > n:
            break
        fit = i + 1
        if tok in breaks:
            brk = i + 1
    return fit, brk


def _wrap(line: str, n: int) -> str:
    """An escaped text line (no tags) broken with "<br>" into lines of at most `n` columns: at the last space
    in the second half of a line, else between any two characters (Chinese has no spaces)."""
    tokens, out = _TOKEN.findall(line), []
    while sum(map(_width, tokens)) > n:
        fit, space = _fit(tokens, n, " ")
        if space - 1 > fit // 2:
            out.append("".join(tokens[: space - 1]))
            tokens = tokens[space:]
        else:
            out.append("".join(tokens[:fit]))
            tokens = tokens[fit:]
    return "<br>".join([*out, "".join(tokens)])


def _cut(text: str, n: int) -> str:
    """`text` cut to `n` columns with "…" (a Chinese character takes two columns, as on screen)."""
    if _text_width(text) <= n:
        return text
    out, used = "", 1
    for ch in text:
        used += _columns(ch)
        if used > n:
            break
        out += ch
    return out + "…"


def _span(text: str, n: int, *, tail: bool = False, soft: bool = True) -> str:
    """The longest start (`tail`: end) of `text` within `n` columns. `soft`: one that stops inside a word is
    moved back to the last break of its latter half (a line ends after " ", "-", "/"..., the end part starts
    after one), so "char-ngram-random" splits as "char-ngram-" + "random", not "char-ngram-rando" + "m"."""
    chars = text[::-1] if tail else text
    fit, brk = _fit(chars, n, _BREAKS)
    if tail and brk:
        brk -= 1  # the end part starts after its break, which stays at the end of the line before
    size = brk if soft and fit < len(chars) and brk > fit // 2 else fit
    return text[len(text) - size :] if tail else text[:size]


def _text_width(text: str) -> int:
    return sum(map(_columns, text))


def _two_lines(name: str, mark: str, n: int = LABEL_CHARS) -> list[str]:
    """A system name (then its mark) in at most two lines of `n` columns: wrapped whole when it fits; else
    its start, "…" and its end, which is where names of one family differ ("…-random", "…第三版")."""
    text = name + mark
    for soft in (True, False):
        first = _span(text, n, soft=soft)
        rest = text[len(first) :].lstrip()
        if _text_width(rest) <= n:
            return [first.rstrip(), rest] if rest else [first]
    head = _span(name, n - 1).rstrip() + "…"
    return [head, _span(name, n - _text_width(mark), tail=True).lstrip() + mark]


def _tell_apart(
    lines: list[str], name: str, others: Sequence[str], mark: str, n: int = LABEL_CHARS
) -> list[str]:
    """Two lines for `name` that differ from those of `others` (names that got the same two lines): the
    second line shows where the names part ("…" then the text from there). Identical names cannot be told
    apart by their text: the caller adds the submission id."""
    start = min(len(os.path.commonprefix([name, other])) for other in others)
    if start >= len(name):
        return lines
    part = _cut(name[start:], n - _text_width(mark) - 1)
    return [lines[0], "…" + part + mark]


def system_labels(rows: Sequence[dict]) -> list[str]:
    """Escaped, unique system names in full, for hovers (a short id is added when two systems share a
    name)."""
    names = [str(r.get("model_name") or r.get("submission_id") or "?") for r in rows]
    return [
        html.escape(name + (f" ({str(r.get('submission_id', ''))[:6]})" if names.count(name) > 1 else ""))
        for name, r in zip(names, rows, strict=True)
    ]


def short_labels(rows: Sequence[dict]) -> list[str]:
    """Escaped system names for axes and legends: at most two lines of LABEL_CHARS columns ("<br>" between),
    the middle left out of a longer name; "◆" marks a baseline (and replaces its "baseline: " prefix, which
    would only eat the room). Two different names never read the same (the part where they differ is
    shown); two systems of one name get the start of their submission ids. Cut before escaping, so no
    entity is split."""
    names = [str(r.get("model_name") or r.get("submission_id") or "?") for r in rows]
    names = [
        name.removeprefix("baseline: ") if r.get("is_baseline") else name
        for name, r in zip(names, rows, strict=True)
    ]
    marks = [" ◆" if r.get("is_baseline") else "" for r in rows]
    lines = [_two_lines(name, mark) for name, mark in zip(names, marks, strict=True)]
    out = []
    for i, (name, mark, r) in enumerate(zip(names, marks, rows, strict=True)):
        alike = [names[j] for j, other in enumerate(lines) if j != i and other == lines[i]]
        own = _tell_apart(lines[i], name, alike, mark) if alike else lines[i]
        if name in alike:  # the same name: only the id tells them apart
            sid = f"({str(r.get('submission_id', ''))[:6]})"
            kept = _cut(own[1], LABEL_CHARS - len(sid) - 1) + " " if len(own) > 1 else ""
            own = [own[0], kept + sid]
        out.append("<br>".join(html.escape(line) for line in own))
    return out


def empty_figure(title: str, message: str | None = None, lang: str = "zh") -> go.Figure:
    message = t("no_data", lang) if message is None else message
    fig = go.Figure()
    fig.add_annotation(text=html.escape(message), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _finish(fig, title, height=300)


def _system_axis(labels: Sequence[str]) -> dict:
    """A category axis of systems by position (two cut names may coincide; positions never do), first
    system at the top."""
    return {
        "tickmode": "array",
        "tickvals": list(range(len(labels))),
        "ticktext": list(labels),
        "autorange": "reversed",
    }


def _lines(label: str) -> int:
    return label.count("<br>") + 1


def _label_lines(labels: Sequence[str]) -> int:
    return max(map(_lines, labels), default=1)


def _bar_height(n_systems: int, bars_per_system: int = 1, label_lines: int = 1) -> int:
    """Horizontal bars: room for every system's label (`label_lines` text lines each) and bars a finger can
    hit."""
    return 170 + n_systems * max(SYSTEM_ROW_PX[min(label_lines, 2) - 1], 11 * bars_per_system)


def field_error_bars(rows: Sequence[dict], lang: str = "zh") -> go.Figure:
    """Per-field error rate (1 − field accuracy) for each selected VARM system: where records go wrong.
    Horizontal bars, a group per field and a bar per system (named in the legend): field names read along
    the y axis, where under upright bars they were tilted into each other on a phone."""
    title = t("fig_field_errors", lang)
    if not rows:
        return empty_figure(title, lang=lang)
    fig = go.Figure()
    fields = _field_names(lang)
    wrong = t("fig_wrong", lang)
    # An error rate is better low: the opposite direction of the field accuracy it is computed from.
    arrow = {"↑": "↓", "↓": "↑"}.get(metric_spec("varm", "field_accuracy.target").arrow, "")
    for short, full, r in zip(short_labels(rows), system_labels(rows), rows, strict=True):
        acc = [_num(r.get(f"field_accuracy.{f}")) for f, _, _ in VARM_FIELDS]
        err = [None if a is None else (1 - a) * 100 for a in acc]
        fig.add_trace(
            go.Bar(
                name=short,
                orientation="h",
                y=fields,
                x=err,
                hovertemplate=full + "<br>%{y}: %{x:.1f}% " + wrong + "<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        yaxis={"autorange": "reversed"},  # the fields in record order, top down; systems in legend order
        yaxis_title=t("fig_field", lang),
        xaxis_title=_titled(t("fig_error_rate", lang), arrow),
    )
    return _finish(fig, title, height=_bar_height(len(fields), len(rows)), systems_legend=True)


def label_vs_jrem(rows: Sequence[dict], lang: str = "zh") -> go.Figure:
    """Label Macro-F1 vs JREM with the diagonal: the vertical distance is the hidden-record-error gap.
    One trace per system (colour and symbol, named in the legend): labels written next to the points pile
    up once a few systems score alike. A system with either metric undefined has no point."""
    title = t("fig_label_vs_jrem", lang)
    if not rows:
        return empty_figure(title, lang=lang)
    xs, ys = metric_spec("varm", "macro_f1.label"), metric_spec("varm", "jrem")
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[0, 100],
            y=[0, 100],
            mode="lines",
            # Short: the legend's columns are sized for cut system names ("JREM = Label Macro-F1" in
            # Chinese ran into the next entry); the subtitle says what the diagonal means.
            name=t("fig_diagonal", lang),
            line={"dash": "dash", "color": "#999"},
            hoverinfo="skip",
        )
    )
    x_values, x_shown = _metric(rows, xs.key, lang)
    y_values, y_shown = _metric(rows, ys.key, lang)
    points = zip(short_labels(rows), system_labels(rows), x_values, y_values, x_shown, y_shown, strict=True)
    for i, (short, full, x, y, x_text, y_text) in enumerate(points):
        gap = NA if x is None or y is None else f"{x - y:.1f}"
        fig.add_trace(
            go.Scatter(
                x=[x],
                y=[y],
                mode="markers",
                name=short,
                customdata=[[x_text, y_text, gap]],
                marker={"size": 11, "symbol": _SYMBOLS[i % len(_SYMBOLS)]},
                hovertemplate=f"{full}<br>{html.escape(xs.name(lang))} %{{customdata[0]}}"
                f"<br>{html.escape(ys.name(lang))} %{{customdata[1]}}"
                f"<br>{t('fig_gap', lang)} %{{customdata[2]}}<extra></extra>",
            )
        )
    fig.update_layout(xaxis_title=_axis(xs, lang), yaxis_title=_axis(ys, lang))
    fig.update_layout(title_subtitle_text=t("fig_diagonal_note", lang))
    # Both axes start a little below 0, so the two "0" tick labels do not meet in the corner.
    fig.update_xaxes(range=[-5, 102])
    fig.update_yaxes(range=[-5, 102])
    return _finish(fig, title, height=LEGEND_PLOT_PX, systems_legend=True)


_SYMBOLS = (
    "circle",
    "square",
    "diamond",
    "triangle-up",
    "x",
    "triangle-down",
    "cross",
    "star",
    "hexagon",
    "pentagon",
)


def her_bars(rows: Sequence[dict], lang: str = "zh") -> go.Figure:
    """HER-C and HER-L per system: of the items with the right category/label, how many records are wrong.
    Horizontal bars: system names read along the axis, never rotated into the legend. Undefined (no item
    with the right category/label): no bar, "n/a" and the reason on hover."""
    title = t("fig_her", lang)
    if not rows:
        return empty_figure(title, lang=lang)
    full, labels = system_labels(rows), short_labels(rows)
    fig = go.Figure()
    specs = [metric_spec("varm", key) for key in ("her_c", "her_l")]
    for spec in specs:
        name = f"{spec.en} ({t('fig_' + spec.key, lang)})"
        values, shown = _metric(rows, spec.key, lang)
        fig.add_trace(
            go.Bar(
                name=name,
                orientation="h",
                y=list(range(len(rows))),
                x=values,
                customdata=list(zip(full, shown, strict=True)),
                hovertemplate="%{customdata[0]}<br>" + name + ": %{customdata[1]}<extra></extra>",
            )
        )
    arrow = specs[0].arrow if len({s.arrow for s in specs}) == 1 else ""
    fig.update_layout(
        barmode="group",
        yaxis=_system_axis(labels),
        xaxis_title=_titled(t("fig_rate", lang), arrow),
        yaxis_title=t("fig_system", lang),
    )
    return _finish(fig, title, height=_bar_height(len(rows), 2, _label_lines(labels)))


def cue_heatmap(rows: Sequence[dict], results: Sequence[dict | None], lang: str = "zh") -> go.Figure:
    """System × cue subset: harmful JREM, non-harmful JREM and their gap (lexical-cue sensitivity). The three
    panels are stacked, so a phone still has room for four readable cells per row."""
    title = t("fig_cue", lang)
    subsets = sorted({name for res in results if res for name in (res.get("subsets") or {})})
    if not rows or not subsets:
        return empty_figure(title, t("fig_no_subsets", lang), lang)
    full = system_labels(rows)
    arrow = metric_spec("varm", "jrem").arrow
    panels = (
        ("jrem_harmful", f"{t('h_jrem_harmful', lang)} {arrow}"),
        ("jrem_non_harmful", f"{t('h_jrem_non_harmful', lang)} {arrow}"),
        ("jrem_gap", t("h_gap", lang)),  # a gap has no better side: 0 is even-handed
    )
    fig = make_subplots(
        rows=3, cols=1, subplot_titles=[p[1] for p in panels], shared_xaxes=True, vertical_spacing=0.09
    )
    reasons: set[str] = set()
    subset_word = t("fig_subset", lang)
    for row, (key, name) in enumerate(panels, start=1):
        z = []
        for res in results:
            subs = (res or {}).get("subsets") or {}
            z.append([_pct((subs.get(s) or {}).get(key)) for s in subsets])
            reasons |= {
                str(subs[s]["withheld"])
                for s in subsets
                if (subs.get(s) or {}).get(key) is None and (subs.get(s) or {}).get("withheld")
            }
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=[  # narrow enough for a phone: a line a word
                    html.escape(subset_name(s, lang)).replace(" ", "<br>").replace("/", "/<br>")
                    for s in subsets
                ],
                y=list(range(len(rows))),
                customdata=[[f] * len(subsets) for f in full],
                coloraxis="coloraxis2" if key == "jrem_gap" else "coloraxis",
                text=[[NA if v is None else f"{v:.1f}" for v in line] for line in z],
                texttemplate="%{text}",
                textfont={"size": 11},
                name=name,
                hovertemplate="%{customdata}<br>"
                + subset_word
                + " %{x}<br>"
                + name
                + ": %{text}<extra></extra>",
            ),
            row=row,
            col=1,
        )
    fig.update_layout(
        coloraxis={"colorscale": "Blues", "cmin": 0, "cmax": 100, "showscale": False},
        coloraxis2={"colorscale": "RdBu", "cmid": 0, "showscale": False},
    )
    fig.update_xaxes(title_text=subset_word, row=3)
    fig.update_xaxes(tickfont={"size": 11}, side="bottom")
    labels = short_labels(rows)
    # 11 px names, as the cells: a row of a panel holds a two-line name in 32 px
    fig.update_yaxes(_system_axis(labels), tickfont={"size": 11}, title_text=t("fig_system", lang))
    _note_withheld(fig, reasons, lang)  # empty cells: n/a, with the reason
    row_px = HEATMAP_ROW_PX[_label_lines(labels) - 1]
    return _finish(fig, title, height=260 + 3 * row_px * len(rows))


def format_issue_bars(rows: Sequence[dict], results: Sequence[dict | None], lang: str = "zh") -> go.Figure:
    """Stacked format-issue counts per system (how many outputs break each rule of the strict parser)."""
    title = t("fig_format", lang)
    counts = [((res or {}).get("format_issues") or {}) for res in results]
    known = sorted({i for c in counts for i in c})
    issues = [i for i in known if any(_num(c.get(i)) for c in counts)]
    if not rows or not known:
        return empty_figure(title, t("fig_no_format", lang), lang)
    full, labels = system_labels(rows), short_labels(rows)
    positions = list(range(len(rows)))
    fig = go.Figure()
    for issue in issues:
        fig.add_trace(
            go.Bar(
                name=html.escape(issue),
                orientation="h",
                y=positions,
                x=[_num(c.get(issue)) for c in counts],
                customdata=full,
                hovertemplate="%{customdata}<br>" + html.escape(issue) + ": %{x}<extra></extra>",
            )
        )
    if not issues:
        # Keep the axes (and the systems) so "no issues at all" reads as a result, not as a missing chart.
        fig.add_trace(
            go.Bar(
                name=t("none", lang),
                orientation="h",
                y=positions,
                x=[0] * len(rows),
                customdata=full,
                hovertemplate="%{customdata}: " + t("fig_no_format_issues", lang) + "<extra></extra>",
            )
        )
        # Said under the title: an annotation on the plot ran over the system names on a phone.
        fig.update_layout(title_subtitle_text=t("fig_no_format_issues", lang))
        fig.update_xaxes(range=[0, 1], dtick=1)  # all zeros: plotly's default axis ran from -1 to 1
    fig.update_xaxes(rangemode="nonnegative")  # counts
    fig.update_layout(
        barmode="stack",
        yaxis=_system_axis(labels),
        xaxis_title=t("fig_outputs", lang),
        yaxis_title=t("fig_system", lang),
    )
    return _finish(fig, title, height=_bar_height(len(rows), 1, _label_lines(labels)) + 20 * len(issues))


def metric_bars(
    rows: Sequence[dict], track: str, keys: Sequence[str], title: str, lang: str = "zh"
) -> go.Figure:
    """Grouped horizontal bars of the track's metrics `keys` per system, the 95% CI as error bars; an
    undefined metric has no bar ("n/a" and the reason on hover)."""
    if not rows:
        return empty_figure(title, lang=lang)
    full, labels = system_labels(rows), short_labels(rows)
    specs = [metric_spec(track, key) for key in keys]
    fig = go.Figure()
    for spec in specs:
        header = html.escape(spec.header(lang))
        x, shown = _metric(rows, spec.key, lang)
        hi = [None if v is None else _pct(r.get(f"ci.{spec.key}.high")) for v, r in zip(x, rows, strict=True)]
        lo = [None if v is None else _pct(r.get(f"ci.{spec.key}.low")) for v, r in zip(x, rows, strict=True)]
        fig.add_trace(
            go.Bar(
                name=header,
                orientation="h",
                y=list(range(len(rows))),
                x=x,
                error_x=_ci_bars(x, lo, hi) if any(v is not None for v in hi) else None,
                customdata=list(zip(full, shown, strict=True)),
                hovertemplate="%{customdata[0]}<br>" + header + ": %{customdata[1]}<extra></extra>",
            )
        )
    arrow = specs[0].arrow if specs and len({s.arrow for s in specs}) == 1 else ""
    fig.update_layout(
        barmode="group",
        yaxis=_system_axis(labels),
        xaxis_title=_titled(t("fig_score", lang), arrow),
        yaxis_title=t("fig_system", lang),
    )
    height = _bar_height(len(rows), len(specs), _label_lines(labels)) + 20 * (len(specs) // 3)
    return _finish(fig, title, height=height)


def _ci_bars(values: Sequence[float | None], lo: Sequence[float | None], hi: Sequence[float | None]) -> dict:
    """Asymmetric error bars from interval ends (none where a value or an end is missing)."""
    return {
        "type": "data",
        "symmetric": False,
        "array": [None if h is None or v is None else h - v for h, v in zip(hi, values, strict=True)],
        "arrayminus": [
            None if lo_ is None or v is None else v - lo_ for lo_, v in zip(lo, values, strict=True)
        ],
    }


def breakdown_bars(
    rows: Sequence[dict],
    results: Sequence[dict | None],
    field: str,
    metric: str = "f1",
    lang: str = "zh",
    track: str = "cold",
) -> go.Figure:
    """ToxiTrace breakdown (COLD topic / fine label, ToxiCN expression / target): `metric` per value.

    A field whose cells all withhold `metric` (a group defined by the gold label publishes accuracy only)
    is drawn with accuracy; withheld cells and undefined ones (0/0: the cell's `undefined`) have no bar and
    say so ("n/a" on hover, the reason below or beside it)."""
    values = sorted({v for res in results if res for v in ((res.get("breakdowns") or {}).get(field) or {})})
    cells = [((res or {}).get("breakdowns") or {}).get(field) or {} for res in results]
    if (
        metric != "accuracy"
        and values
        and all((part.get(v) or {}).get(metric) is None for part in cells for v in values)
    ):
        metric = "accuracy"
    spec = metric_spec(track, metric)
    field_name = html.escape(breakdown_name(field, lang))
    title = t("fig_breakdown", lang, field=field_name, metric=html.escape(spec.name(lang)))
    if not rows or not values:
        return empty_figure(title, t("fig_no_breakdown", lang), lang)
    fig = go.Figure()
    reasons: set[str] = set()
    for short, full, part in zip(short_labels(rows), system_labels(rows), cells, strict=True):
        y, shown = [], []
        for v in values:
            cell = part.get(v) or {}
            undefined = say(str((cell.get("undefined") or {}).get(metric) or ""), lang)
            value = None if undefined else _pct(cell.get(metric))
            y.append(value)
            shown.append(
                f"{NA} ({html.escape(undefined)})" if undefined else NA if value is None else f"{value:.1f}%"
            )
            if value is None and cell.get("withheld"):
                reasons.add(str(cell["withheld"]))
        n = [(part.get(v) or {}).get("rows") for v in values]
        fig.add_trace(
            go.Bar(
                name=short,
                # narrow enough for a phone
                x=[html.escape(breakdown_name(v, lang)).replace("_", "<br>") for v in values],
                y=y,
                customdata=list(zip(n, shown, strict=True)),
                hovertemplate=full + "<br>%{x}: %{customdata[1]} (n=%{customdata[0]})<extra></extra>",
            )
        )
    fig.update_layout(barmode="group", xaxis_title=field_name, yaxis_title=_axis(spec, lang))
    _note_withheld(fig, reasons, lang)
    return _finish(fig, title, height=LEGEND_PLOT_PX, systems_legend=True)


def _note_withheld(fig: go.Figure, reasons: set[str], lang: str) -> None:
    """Say why some cells are empty (the scorer withheld them; see docs/SECURITY.md) in the title's subtitle:
    the title's margin grows to fit it, where a note placed below the axes would land on tick labels."""
    if reasons:
        lines = [line for r in sorted(reasons) for line in textwrap.wrap(say(r, lang), 48)]
        fig.update_layout(title_subtitle_text="<br>".join(html.escape(line) for line in lines))


def breakdown_fields(results: Sequence[dict | None]) -> list[str]:
    return sorted({f for res in results if res for f in (res.get("breakdowns") or {})})


def submission_field_bars(result: dict, lang: str = "zh") -> go.Figure:
    """One VARM submission: field accuracy bars with CIs when the result has them; horizontal, so the field
    names read along the y axis on a phone too."""
    metrics = result.get("metrics") or {}
    acc = metrics.get("field_accuracy") or {}
    ci = result.get("ci") or {}
    title = t("fig_field_accuracy", lang)
    if not acc:
        return empty_figure(title, lang=lang)
    shown = [(f, en if lang == "en" else zh) for f, en, zh in VARM_FIELDS if f in acc]
    x = [_pct(acc[f]) for f, _ in shown]
    cis = [ci.get(f"field_accuracy.{f}") or [None, None] for f, _ in shown]
    err = None
    if any(c[0] is not None for c in cis):
        err = _ci_bars(x, [_pct(c[0]) for c in cis], [_pct(c[1]) for c in cis])
    fig = go.Figure(
        go.Bar(
            orientation="h",
            y=[label for _, label in shown],
            x=x,
            error_x=err,
            hovertemplate="%{y}: %{x:.1f}%<extra></extra>",
        )
    )
    arrow = metric_spec("varm", "field_accuracy.target").arrow
    fig.update_layout(
        yaxis={"autorange": "reversed"},
        yaxis_title=t("fig_field", lang),
        xaxis_title=_titled(t("fig_accuracy", lang), arrow),
    )
    return _finish(fig, title)


COMPARE_COLOURS = {"A": "#2a9d8f", "B": "#e76f51", "": "#bbbbbb"}  # A better, B better, not significant
VERDICTS = {"A": "a_better", "B": "b_better", "": "not_significant"}  # i18n keys


def compare_bars(
    comparison: dict,
    label_a: str,
    label_b: str,
    track: str = "varm",
    lang: str = "zh",
    undefined: dict[str, str] | None = None,
) -> go.Figure:
    """Paired-bootstrap differences (A − B) per headline metric with their 95% CI. A bar is green when A
    is significantly better, orange when B is: better by the metric's direction (a lower HER-C is better),
    not by the sign of the difference; grey when the difference is not significant. `undefined`: metric ->
    reason for the metrics undefined on either side (0/0): no bar, "n/a" and the reason on hover."""
    undefined = undefined or {}
    title = f"{html.escape(_cut(label_a, 40))} − {html.escape(_cut(label_b, 40))}<br>{t('fig_paired', lang)}"
    metrics = [(k, v) for k, v in (comparison or {}).items() if isinstance(v, dict) and "diff" in v]
    if not metrics:
        return empty_figure(title, lang=lang)
    x = [html.escape(metric_spec(track, k).header(lang)) for k, _ in metrics]
    y = [None if k in undefined else _pct(v.get("diff")) for k, v in metrics]
    cis = [[None, None] if k in undefined else v.get("ci") or [None, None] for k, v in metrics]
    sides = [
        "" if k in undefined else better_side(k, _num(v.get("diff")), bool(v.get("significant")), track)
        for k, v in metrics
    ]
    colors = [COMPARE_COLOURS[side] for side in sides]
    points = t("fig_points", lang)
    shown = [
        f"{NA} ({html.escape(undefined[k])})"
        if k in undefined
        else f"{value:+.1f} {points} ({t(VERDICTS[side], lang)})"
        if value is not None
        else NA
        for (k, _), value, side in zip(metrics, y, sides, strict=True)
    ]
    fig = go.Figure(
        go.Bar(
            x=x,
            y=y,
            error_y=_ci_bars(y, [_pct(c[0]) for c in cis], [_pct(c[1]) for c in cis]),
            marker_color=colors,
            customdata=shown,
            hovertemplate="%{x}: %{customdata}<extra></extra>",
        )
    )
    fig.update_layout(xaxis_title=t("fig_metric", lang), yaxis_title=t("fig_difference", lang))
    # Upright metric names: Plotly's own choice of angle depends on how many fit, and slanted names of a
    # phone-wide chart overlapped their neighbours (seen at 390 px with seven metrics).
    fig.update_xaxes(tickangle=-90)
    return _finish(fig, title)


def comprehensiveness_vs_f1(rows: Sequence[dict], lang: str = "zh", track: str = "cold") -> go.Figure:
    """Does a better classifier explain itself better? Comprehensiveness (spec §3) against F1, one point per
    system that submitted explanations (one trace each, named in the legend), with the comprehensiveness
    CI as a vertical error bar. A system whose F1 is undefined has no point."""
    title = t("fig_expl", lang)
    comp, f1 = metric_spec(track, "explanations.comprehensiveness"), metric_spec(track, "f1")
    shown = [r for r in rows if _num(r.get(comp.key)) is not None and not undefined_reason(r, comp.key)]
    if not shown:
        return empty_figure(title, t("fig_no_expl", lang), lang)
    fig = go.Figure()
    x_values, x_text = _metric(shown, f1.key)
    for i, (short, full, r) in enumerate(zip(short_labels(shown), system_labels(shown), shown, strict=True)):
        y = [_pct(r.get(comp.key))]
        hi = [_pct(r.get(f"ci.{comp.key}.high"))]
        lo = [_pct(r.get(f"ci.{comp.key}.low"))]
        fig.add_trace(
            go.Scatter(
                x=[x_values[i]],
                y=y,
                mode="markers",
                name=short,
                customdata=[x_text[i]],
                marker={"size": 11, "symbol": _SYMBOLS[i % len(_SYMBOLS)]},
                error_y=_ci_bars(y, lo, hi),
                hovertemplate=f"{full}<br>{html.escape(f1.name(lang))} %{{customdata}}"
                f"<br>{html.escape(comp.name(lang))} %{{y:.1f}} "
                f"{t('fig_prob_points', lang)}<extra></extra>",
            )
        )
    y_title = f"{comp.name(lang)}<br>({t('fig_prob_points', lang)}) {comp.arrow}"
    fig.update_layout(xaxis_title=_axis(f1, lang), yaxis_title=y_title)
    # Tick labels stand off the axes, so the first of x and the first of y do not meet in the corner.
    fig.update_xaxes(ticklabelstandoff=6)
    fig.update_yaxes(ticklabelstandoff=6)
    return _finish(fig, title, height=LEGEND_PLOT_PX, systems_legend=True)
