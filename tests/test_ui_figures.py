"""Pure-function tests for the plotly figures: titles, axis labels, hover values, escaped names."""

from __future__ import annotations

import html
import json
import re

import plotly.io as pio
import pytest

from space.ui import figures
from tests.factories import XSS_NAME, board_rows, make_entries


@pytest.fixture(scope="module")
def varm() -> tuple[list[dict], list[dict]]:
    entries = make_entries("varm", 8, xss=True)
    rows = board_rows(entries, "varm")
    by_id = {e.record["submission_id"]: e.result for e in entries}
    return rows, [by_id[r["submission_id"]] for r in rows]


def _labelled(fig) -> None:
    layout = fig.layout
    assert layout.title.text
    assert layout.xaxis.title.text and layout.yaxis.title.text
    for trace in fig.data:
        if trace.type != "scatter" or trace.mode != "lines":
            assert trace.hovertemplate or trace.hoverinfo == "skip"


def test_field_error_bars(varm) -> None:
    rows, _ = varm
    fig = figures.field_error_bars(rows, "en")
    _labelled(fig)
    assert len(fig.data) == len(rows)
    first = fig.data[0]
    assert first.orientation == "h" and list(first.y)[0] == "Target"  # field names on the y axis
    assert first.x[0] == pytest.approx((1 - rows[0]["field_accuracy.target"]) * 100)
    assert fig.layout.yaxis.autorange == "reversed"  # record order, top down


def test_label_vs_jrem_has_diagonal_and_gap(varm) -> None:
    rows, _ = varm
    fig = figures.label_vs_jrem(rows, "en")
    _labelled(fig)
    diag, *points = fig.data
    assert list(diag.x) == [0, 100] and list(diag.y) == [0, 100]
    assert len(points) == len(rows)  # one trace per system: named in the legend, no labels piling up
    gap = (rows[0]["macro_f1.label"] - rows[0]["jrem"]) * 100
    assert points[0].customdata[0][2] == f"{gap:.1f}"
    assert "gap" in points[0].hovertemplate and points[0].mode == "markers"


def test_long_names_are_cut_in_the_middle_on_axes_and_whole_on_hover() -> None:
    entries = make_entries("varm", 5)
    long = "超长的中文模型名称：基于大规模预训练的辱骂检测系统第二版"
    entries[3].record["metadata"]["model_name"] = long
    entries[4].record["metadata"]["model_name"] = long.replace("二", "三")  # the same start
    rows = board_rows(entries, "varm")
    short = figures.short_labels(rows)
    assert len(set(short)) == len(short)
    cut = sorted(label for label in short if label.startswith("超长"))
    # Two lines: the start with "…", then the end, where the two names differ (no id needed).
    assert cut == ["超长的中文模型…<br>骂检测系统第三版", "超长的中文模型…<br>骂检测系统第二版"], cut
    her = figures.her_bars(rows)
    assert list(her.layout.yaxis.ticktext) == short and long in [c[0] for c in her.data[0].customdata]
    traces = figures.field_error_bars(rows).data
    assert any(t.name.startswith("超长") and long in t.hovertemplate for t in traces)
    assert sum("◆" in label for label in short) == 3 and not [x for x in short if "baseline" in x]


def _labels(*names: str, baseline: bool = False) -> list[str]:
    rows = [
        {"model_name": name, "is_baseline": baseline, "submission_id": f"{i:02d}{'ab' * 7}"}
        for i, name in enumerate(names)
    ]
    return figures.short_labels(rows)


@pytest.mark.parametrize(
    ("names", "baseline", "expected"),
    [
        # A name that fits two lines wraps whole, after a hyphen or a space where one is near the end.
        (
            ("baseline: char-ngram", "baseline: char-ngram-random"),
            True,
            ["char-ngram ◆", "char-ngram-<br>random ◆"],
        ),
        (("GPT-4o-mini zero-shot",), False, ["GPT-4o-mini<br>zero-shot"]),
        (
            ("Qwen2.5-72B-Instruct + taxonomy prompt (v3, self-consistency)",),
            False,
            ["Qwen2.5-72B-…<br>consistency)"],
        ),
        # Different names with the same start and end: the second line shows where they part.
        (
            ("model-A-" + "x" * 30 + "-v1", "model-A-" + "x" * 13 + "y" + "x" * 16 + "-v1"),
            False,
            ["model-A-…<br>…xxxxxxxxxxxxxx…", "model-A-…<br>…yxxxxxxxxxxxxx…"],
        ),
        # Only the same name needs the submission id.
        (("same", "same"), False, ["same<br>(00abab)", "same<br>(01abab)"]),
        (("<b>x</b>",), False, ["&lt;b&gt;x&lt;/b&gt;"]),  # escaped after the cut
    ],
)
def test_system_labels_wrap_then_cut_in_the_middle(names, baseline, expected) -> None:
    labels = _labels(*names, baseline=baseline)
    assert labels == expected
    for label in labels:
        lines = [html.unescape(line) for line in label.split("<br>")]
        assert len(lines) <= 2 and all(figures._text_width(x) <= figures.LABEL_CHARS for x in lines), label


def test_user_names_are_escaped_in_every_figure(varm) -> None:
    rows, results = varm
    figs = [
        figures.field_error_bars(rows),
        figures.label_vs_jrem(rows),
        figures.her_bars(rows),
        figures.cue_heatmap(rows, results),
        figures.format_issue_bars(rows, results),
    ]
    for fig in figs:
        text = fig.to_json()
        assert XSS_NAME not in text and "<img" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in json.dumps([list(c) for c in figs[2].data[-1].customdata])


def test_cue_heatmap_panels(varm) -> None:
    rows, results = varm
    fig = figures.cue_heatmap(rows, results, "en")
    assert [a.text for a in fig.layout.annotations][:3] == ["JREM harmful ↑", "JREM non-harmful ↑", "Gap"]
    assert len(fig.data[0].y) == len(rows)
    heat = fig.data[2]
    sub = sorted(results[0]["subsets"])[0]
    assert heat.z[0][0] == pytest.approx(results[0]["subsets"][sub]["jrem_gap"] * 100)
    assert fig.layout.title.text and fig.layout.xaxis3.title.text  # under the bottom panel


def test_format_issues_and_her(varm) -> None:
    rows, results = varm
    fmt = figures.format_issue_bars(rows, results, "en")
    _labelled(fmt)
    nonzero = {i for res in results for i, v in res["format_issues"].items() if v}
    assert fmt.layout.barmode == "stack" and {t.name for t in fmt.data} == nonzero
    clean = figures.format_issue_bars(rows[:1], [{"format_issues": {"placeholder_value": 0}}], "en")
    assert "No format issues" in clean.layout.title.text and clean.data[0].name == "none"
    assert list(clean.layout.xaxis.range) == [0, 1]  # not plotly's -1..1 for all zeros (issue 28.15)
    assert fmt.layout.xaxis.range is None and fmt.layout.xaxis.rangemode == "nonnegative"
    her = figures.her_bars(rows, "en")
    _labelled(her)
    assert her.data[0].orientation == "h" and her.data[0].x[0] == pytest.approx(rows[0]["her_c"] * 100)


def test_toxitrace_breakdowns() -> None:
    entries = make_entries("cold", 4)
    rows = board_rows(entries, "cold")
    by_id = {e.record["submission_id"]: e.result for e in entries}
    results = [by_id[r["submission_id"]] for r in rows]
    assert figures.breakdown_fields(results) == ["fine_grained_label", "topic"]
    fig = figures.breakdown_bars(rows, results, "topic", lang="en")
    _labelled(fig)
    assert list(fig.data[0].x) == ["gender", "race", "region"]
    bars = figures.metric_bars(rows, "cold", ["f1", "accuracy"], "COLD", "en")
    assert bars.data[0].error_x.array is not None


def test_empty_inputs_still_titled() -> None:
    for fig in (
        figures.field_error_bars([]),
        figures.cue_heatmap([], []),
        figures.compare_bars({}, "a", "b"),
    ):
        assert fig.layout.title.text
        assert pio.from_json(fig.to_json()).layout.annotations


def test_long_titles_wrap_to_a_phone() -> None:
    """Plotly does not wrap titles: a line over TITLE_COLUMNS is broken at a space, Chinese anywhere (a
    character takes two columns), an entity never; the title's top margin grows with its lines."""
    n = figures.TITLE_COLUMNS
    en = figures.cue_heatmap([], [], "en").layout
    assert "Cue subsets: harmful vs non-harmful JREM and gap" not in en.title.text  # 48 columns
    fig = figures.empty_figure("Cue subsets: harmful vs non-harmful JREM and gap", lang="en")
    assert fig.layout.title.text == "Cue subsets: harmful vs non-harmful<br>JREM and gap"
    assert fig.layout.margin.t > figures.empty_figure("short", lang="en").layout.margin.t
    zh = figures.empty_figure("超长" * 30, lang="zh").layout.title.text.split("<br>")
    assert [len(line) for line in zh] == [n // 2, n // 2, n // 2, 60 - 3 * (n // 2)]
    entities = figures.empty_figure("&lt;" * (n + 5), lang="en").layout.title.text.split("<br>")
    assert entities == ["&lt;" * n, "&lt;" * 5]
    lines = figures.empty_figure("short<br>" + "word " * 20, lang="en").layout.title.text.split("<br>")
    assert lines[0] == "short" and all(len(line) <= n for line in lines)  # a given break stays


def test_compare_bars() -> None:
    comp = {"jrem": {"a": 0.5, "b": 0.4, "diff": 0.1, "ci": [0.05, 0.15], "significant": True}}
    fig = figures.compare_bars(comp, "A<b>", "B")
    assert fig.data[0].y[0] == pytest.approx(10)
    assert "&lt;b&gt;" in fig.layout.title.text


def test_compare_colours_a_delta_by_improvement_not_sign() -> None:
    """A higher HER-C is worse: A − B > 0 there means B is better, and the bar says so."""
    sig = {"ci": [0.05, 0.15], "significant": True}
    comp = {
        "jrem": {"a": 0.5, "b": 0.4, "diff": 0.1, **sig},  # higher is better: A better
        "her_c": {"a": 0.5, "b": 0.4, "diff": 0.1, **sig},  # lower is better: B better
        "her_l": {"a": 0.3, "b": 0.4, "diff": -0.1, "ci": [-0.15, -0.05], "significant": True},  # A better
        "t_f1": {"a": 0.5, "b": 0.49, "diff": 0.01, "ci": [-0.02, 0.04], "significant": False},
    }
    fig = figures.compare_bars(comp, "A", "B", "varm", "en")
    colours = dict(zip(fig.data[0].x, fig.data[0].marker.color, strict=True))
    assert colours == {
        "JREM ↑": figures.COMPARE_COLOURS["A"],
        "HER-C ↓": figures.COMPARE_COLOURS["B"],
        "HER-L ↓": figures.COMPARE_COLOURS["A"],
        "T-F1 ↑": figures.COMPARE_COLOURS[""],
    }
    assert [c.split("(")[-1] for c in fig.data[0].customdata] == [
        "A better)",
        "B better)",
        "A better)",
        "not significant)",
    ]


ZH = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")


def _texts(fig) -> list[str]:
    """Every text a reader sees on a chart: title, axis titles, subplot titles, trace names, ticks, hovers
    (less the system names, which are data)."""
    layout = fig.layout
    out = [layout.title.text or ""]
    out += [a.text for a in layout.annotations or ()]
    for name in ("xaxis", "yaxis", "xaxis2", "yaxis2", "xaxis3", "yaxis3"):
        axis = getattr(layout, name, None)
        if axis is not None and axis.title is not None:
            out.append(axis.title.text or "")
    for trace in fig.data:
        out += [trace.name or "", trace.hovertemplate or ""]
        if trace.type == "bar":  # the category axis: field, metric or value names (systems are numbered)
            out += [str(x) for x in (trace.y if trace.orientation == "h" else trace.x) or ()]
    return out


def _all_figures(lang: str) -> list:
    entries = make_entries("varm", 5)
    rows = board_rows(entries, "varm")
    by_id = {e.record["submission_id"]: e.result for e in entries}
    results = [by_id[r["submission_id"]] for r in rows]
    cold_entries = make_entries("cold", 4)
    cold = board_rows(cold_entries, "cold")
    cold_by_id = {e.record["submission_id"]: e.result for e in cold_entries}
    cold_results = [cold_by_id[r["submission_id"]] for r in cold]
    comp = {"jrem": {"a": 0.5, "b": 0.4, "diff": 0.1, "ci": [0.05, 0.15], "significant": True}}
    return [
        figures.field_error_bars(rows, lang),
        figures.label_vs_jrem(rows, lang),
        figures.her_bars(rows, lang),
        figures.format_issue_bars(rows, results, lang),
        figures.format_issue_bars(rows[:1], [{"format_issues": {"x": 0}}], lang),
        figures.cue_heatmap(rows, results, lang),
        figures.metric_bars(cold, "cold", ["f1", "precision"], "COLD", lang),
        figures.breakdown_bars(cold, cold_results, "topic", lang=lang),
        figures.submission_field_bars(results[0], lang),
        figures.compare_bars(comp, "a", "b", "varm", lang),
        figures.comprehensiveness_vs_f1(cold, lang),
        figures.empty_figure("t", lang=lang),
    ]


def test_every_chart_text_is_in_one_language() -> None:
    """English charts carry no Chinese (system names aside: none here are Chinese); Chinese charts
    have Chinese texts. Positive control: the Chinese charts do have Chinese in them."""
    for fig in _all_figures("en"):
        found = [x for x in _texts(fig) if ZH.search(x)]
        assert found == [], (fig.layout.title.text, found)
    assert all(ZH.search(" ".join(_texts(fig))) for fig in _all_figures("zh"))


def test_every_metric_axis_shows_its_direction() -> None:
    rows = board_rows(make_entries("varm", 3), "varm")
    assert figures.label_vs_jrem(rows, "en").layout.xaxis.title.text == "Label Macro-F1 (%) ↑"
    assert figures.label_vs_jrem(rows, "en").layout.yaxis.title.text == "JREM (%) ↑"
    assert figures.her_bars(rows, "en").layout.xaxis.title.text.endswith("↓")  # lower is better
    assert figures.field_error_bars(rows, "en").layout.xaxis.title.text.endswith("↓")  # error = 1 − accuracy
    cold = board_rows(make_entries("cold", 3), "cold")
    assert figures.metric_bars(cold, "cold", ["f1"], "t", "en").layout.xaxis.title.text.endswith("↑")
    mixed = figures.metric_bars(cold, "cold", ["f1", "explanations.sufficiency"], "t", "en")
    assert not mixed.layout.xaxis.title.text.endswith(("↑", "↓"))  # no one direction for both


def test_undefined_metrics_are_na_not_zero() -> None:
    """A metric the scorer names undefined (0/0, published as 0) gets no bar and "n/a" with the reason on
    hover; a real 0 beside it still gets its bar (positive control)."""
    rows = board_rows(make_entries("cold", 3), "cold")
    reason = "TP + FP = 0: no positive predictions"
    rows[0] = {**rows[0], "precision": 0.0, "undefined.precision": reason}
    rows[1] = {**rows[1], "precision": 0.0}  # a measured 0
    fig = figures.metric_bars(rows, "cold", ["precision"], "t", "en")
    bar = fig.data[0]
    assert bar.x[0] is None and bar.x[1] == 0.0
    assert bar.customdata[0][1] == f"n/a ({reason})" and bar.customdata[1][1] == "0.0%"
    comp = {
        "precision": {"a": 0.0, "b": 0.3, "diff": -0.3, "ci": [-0.4, -0.2], "significant": True},
        "f1": {"a": 0.5, "b": 0.3, "diff": 0.2, "ci": [0.1, 0.3], "significant": True},
    }
    bars = figures.compare_bars(comp, "a", "b", "cold", "en", undefined={"precision": f"A: {reason}"})
    assert list(bars.data[0].y) == [None, pytest.approx(20)]
    assert bars.data[0].customdata[0].startswith("n/a (A: TP + FP")
    assert bars.data[0].marker.color[0] == figures.COMPARE_COLOURS[""]
