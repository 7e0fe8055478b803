"""Plotly figures: pure functions of published leaderboard rows and result dicts (aggregates only).

Nothing here sees per-item outcomes on the hidden test. System names are user text and plotly renders a
subset of HTML in labels and hovers, so every name passes through `html.escape` before it reaches a figure.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

VARM_FIELDS = (
    ("target", "Target 对象"),
    ("target_type", "Type 类型"),
    ("target_explicitness", "Explicitness 显隐性"),
    ("stance", "Stance 立场"),
    ("label", "Label 标签"),
    ("category", "Category 类别"),
)
_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 60, "r": 20, "t": 60, "b": 60},
    "height": 420,
    "legend": {"orientation": "h", "y": -0.2},
}


def _num(value: object) -> float | None:
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if v != v else v


def _pct(value: object) -> float | None:
    v = _num(value)
    return None if v is None else v * 100


def system_labels(rows: Sequence[dict]) -> list[str]:
    """Escaped, unique display names (a short id is appended when two systems share a name)."""
    names = [str(r.get("model_name") or r.get("submission_id") or "?") for r in rows]
    out = []
    for name, r in zip(names, rows, strict=True):
        label = name if names.count(name) == 1 else f"{name} ({str(r.get('submission_id', ''))[:6]})"
        if r.get("is_baseline"):
            label += " ◆"
        out.append(html.escape(label[:60]))
    return out


def empty_figure(title: str, message: str = "No data 暂无数据") -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, **_LAYOUT)
    fig.add_annotation(text=html.escape(message), showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def field_error_bars(rows: Sequence[dict]) -> go.Figure:
    """Per-field error rate (1 − field accuracy) for each selected VARM system: where records go wrong."""
    title = "Per-field error rate 各字段错误率 (1 − accuracy)"
    if not rows:
        return empty_figure(title)
    fig = go.Figure()
    fields = [label for _, label in VARM_FIELDS]
    for label, r in zip(system_labels(rows), rows, strict=True):
        acc = [_num(r.get(f"field_accuracy.{f}")) for f, _ in VARM_FIELDS]
        err = [None if a is None else (1 - a) * 100 for a in acc]
        fig.add_trace(
            go.Bar(
                name=label,
                x=fields,
                y=err,
                hovertemplate="%{fullData.name}<br>%{x}: %{y:.1f}% wrong<extra></extra>",
            )
        )
    fig.update_layout(
        title=title, barmode="group", xaxis_title="Field 字段", yaxis_title="Error rate 错误率 (%)", **_LAYOUT
    )
    return fig


def label_vs_jrem(rows: Sequence[dict]) -> go.Figure:
    """Label Macro-F1 vs JREM with the diagonal: the vertical distance is the hidden-record-error gap."""
    title = (
        "Label Macro-F1 vs JREM 标签分数 vs 整条记录"
        "<br><sub>below the diagonal = record errors a label score hides</sub>"
    )
    if not rows:
        return empty_figure(title)
    labels = system_labels(rows)
    x = [_pct(r.get("macro_f1.label")) for r in rows]
    y = [_pct(r.get("jrem")) for r in rows]
    gap = [None if a is None or b is None else a - b for a, b in zip(x, y, strict=True)]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[0, 100],
            y=[0, 100],
            mode="lines",
            name="JREM = Label F1",
            line={"dash": "dash", "color": "#999"},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="markers+text",
            text=labels,
            name="systems 系统",
            textposition=["top left" if (v or 0) > 70 else "top right" for v in x],
            customdata=[[g] for g in gap],
            marker={"size": 11},
            hovertemplate="%{text}<br>Label Macro-F1 %{x:.1f}<br>JREM %{y:.1f}"
            "<br>gap 差距 %{customdata[0]:.1f}"
            "<extra></extra>",
        )
    )
    fig.update_layout(title=title, xaxis_title="Label Macro-F1 (%)", yaxis_title="JREM (%)", **_LAYOUT)
    fig.update_xaxes(range=[0, 102])
    fig.update_yaxes(range=[0, 102])
    return fig


def her_bars(rows: Sequence[dict]) -> go.Figure:
    """HER-C and HER-L per system: of the items with the right category/label, how many records are wrong."""
    title = "Hidden error rates HER-C / HER-L 隐藏错误率"
    if not rows:
        return empty_figure(title)
    labels = system_labels(rows)
    fig = go.Figure()
    for key, name in (
        ("her_c", "HER-C (category right, record wrong)"),
        ("her_l", "HER-L (label right, record wrong)"),
    ):
        fig.add_trace(
            go.Bar(
                name=name,
                x=labels,
                y=[_pct(r.get(key)) for r in rows],
                hovertemplate="%{x}<br>" + name + ": %{y:.1f}%<extra></extra>",
            )
        )
    fig.update_layout(
        title=title, barmode="group", xaxis_title="System 系统", yaxis_title="Rate 比例 (%)", **_LAYOUT
    )
    return fig


def cue_heatmap(rows: Sequence[dict], results: Sequence[dict | None]) -> go.Figure:
    """System × cue subset: harmful JREM, non-harmful JREM and their gap (lexical-cue sensitivity)."""
    title = "Cue subsets: harmful vs non-harmful JREM 线索子集：有害 vs 无害 JREM 及差距"
    subsets = sorted({name for res in results if res for name in (res.get("subsets") or {})})
    if not rows or not subsets:
        return empty_figure(title, "No subset results 暂无子集结果")
    labels = system_labels(rows)
    panels = (
        ("jrem_harmful", "Harmful 有害"),
        ("jrem_non_harmful", "Non-harmful 无害"),
        ("jrem_gap", "Gap 差距"),
    )
    fig = make_subplots(
        rows=1, cols=3, subplot_titles=[p[1] for p in panels], shared_yaxes=True, horizontal_spacing=0.04
    )
    reasons: set[str] = set()
    for col, (key, name) in enumerate(panels, start=1):
        z = []
        for res in results:
            subs = (res or {}).get("subsets") or {}
            z.append([_pct((subs.get(s) or {}).get(key)) for s in subsets])
            reasons |= {str(subs[s]["withheld"]) for s in subsets
                        if (subs.get(s) or {}).get(key) is None and (subs.get(s) or {}).get("withheld")}
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=[html.escape(s).replace("_", "<br>") for s in subsets],
                y=labels,
                coloraxis="coloraxis2" if key == "jrem_gap" else "coloraxis",
                text=[["n/a" if v is None else f"{v:.1f}" for v in line] for line in z],
                texttemplate="%{text}",
                name=name,
                hovertemplate="%{y}<br>subset %{x}<br>" + name + " JREM: %{text}<extra></extra>",
            ),
            row=1,
            col=col,
        )
    fig.update_layout(
        title=title,
        coloraxis={"colorscale": "Blues", "cmin": 0, "cmax": 100, "showscale": False},
        coloraxis2={"colorscale": "RdBu", "cmid": 0, "showscale": False},
        **_LAYOUT,
    )
    fig.update_xaxes(title_text="Subset 子集", tickangle=0)
    fig.update_yaxes(title_text="System 系统", col=1)
    fig.update_layout(height=max(360, 120 + 40 * len(rows)))
    _note_withheld(fig, reasons)  # empty cells: n/a, with the reason
    return fig


def format_issue_bars(rows: Sequence[dict], results: Sequence[dict | None]) -> go.Figure:
    """Stacked format-issue counts per system (how many outputs break each rule of the strict parser)."""
    title = "Format issues 格式问题（每类问题的输出条数）"
    counts = [((res or {}).get("format_issues") or {}) for res in results]
    known = sorted({i for c in counts for i in c})
    issues = [i for i in known if any(_num(c.get(i)) for c in counts)]
    if not rows or not known:
        return empty_figure(title, "No format report 暂无格式统计")
    labels = system_labels(rows)
    fig = go.Figure()
    for issue in issues:
        y = [_num(c.get(issue)) for c in counts]
        fig.add_trace(
            go.Bar(
                name=html.escape(issue),
                x=labels,
                y=y,
                hovertemplate="%{x}<br>" + html.escape(issue) + ": %{y}<extra></extra>",
            )
        )
    if not issues:
        # Keep the axes (and the systems) so "no issues at all" reads as a result, not as a missing chart.
        fig.add_trace(
            go.Bar(
                name="none 无",
                x=labels,
                y=[0] * len(labels),
                hovertemplate="%{x}: no format issues<extra></extra>",
            )
        )
        fig.add_annotation(
            text="No format issues: every output parses 所有输出均符合格式",
            showarrow=False,
            x=0.5,
            y=0.5,
            xref="paper",
            yref="paper",
        )
    fig.update_layout(
        title=title, barmode="stack", xaxis_title="System 系统", yaxis_title="Outputs 输出条数", **_LAYOUT
    )
    return fig


def metric_bars(rows: Sequence[dict], metrics: Sequence[tuple[str, str]], title: str) -> go.Figure:
    """Grouped bars of the given (key, header) metrics per system, with the 95% CI as error bars."""
    if not rows:
        return empty_figure(title)
    labels = system_labels(rows)
    fig = go.Figure()
    for key, header in metrics:
        y = [_pct(r.get(key)) for r in rows]
        hi = [_pct(r.get(f"ci.{key}.high")) for r in rows]
        lo = [_pct(r.get(f"ci.{key}.low")) for r in rows]
        has_ci = any(v is not None for v in hi)
        err = None
        if has_ci:
            err = {
                "type": "data",
                "symmetric": False,
                "array": [None if h is None or v is None else h - v for h, v in zip(hi, y, strict=True)],
                "arrayminus": [
                    None if lo_ is None or v is None else v - lo_ for lo_, v in zip(lo, y, strict=True)
                ],
            }
        fig.add_trace(
            go.Bar(
                name=header,
                x=labels,
                y=y,
                error_y=err,
                hovertemplate="%{x}<br>" + header + ": %{y:.1f}%<extra></extra>",
            )
        )
    fig.update_layout(
        title=title, barmode="group", xaxis_title="System 系统", yaxis_title="Score 分数 (%)", **_LAYOUT
    )
    return fig


def breakdown_bars(
    rows: Sequence[dict], results: Sequence[dict | None], field: str, metric: str = "f1"
) -> go.Figure:
    """ToxiTrace breakdown (COLD topic / fine label, ToxiCN expression / target): `metric` per value.

    A field whose cells all withhold `metric` (a group defined by the gold label publishes accuracy only)
    is drawn with accuracy; withheld cells have no bar and say so ("n/a" on hover, the reason below)."""
    values = sorted({v for res in results if res for v in ((res.get("breakdowns") or {}).get(field) or {})})
    cells = [((res or {}).get("breakdowns") or {}).get(field) or {} for res in results]
    if metric != "accuracy" and values and all(
        (part.get(v) or {}).get(metric) is None for part in cells for v in values
    ):
        metric = "accuracy"
    title = f"Breakdown by {html.escape(field)} 分项：{metric}"
    if not rows or not values:
        return empty_figure(title, "No breakdown 暂无分项")
    fig = go.Figure()
    reasons: set[str] = set()
    for label, part in zip(system_labels(rows), cells, strict=True):
        y = [_pct((part.get(v) or {}).get(metric)) for v in values]
        n = [(part.get(v) or {}).get("rows") for v in values]
        shown = ["n/a" if value is None else f"{value:.1f}%" for value in y]
        reasons |= {str((part.get(v) or {}).get("withheld")) for v, value in zip(values, y, strict=True)
                    if value is None and (part.get(v) or {}).get("withheld")}
        fig.add_trace(
            go.Bar(
                name=label,
                x=[html.escape(str(v)) for v in values],
                y=y,
                customdata=list(zip(n, shown, strict=True)),
                hovertemplate="%{fullData.name}<br>%{x}: %{customdata[1]} "
                "(n=%{customdata[0]})<extra></extra>",
            )
        )
    fig.update_layout(
        title=title, barmode="group", xaxis_title=html.escape(field), yaxis_title=f"{metric} (%)", **_LAYOUT
    )
    _note_withheld(fig, reasons)
    return fig


def _note_withheld(fig: go.Figure, reasons: set[str]) -> None:
    """Say under the plot why some cells are empty (the scorer withheld them; see docs/SECURITY.md)."""
    if reasons:
        fig.add_annotation(
            text="<br>".join(html.escape(r) for r in sorted(reasons)), showarrow=False, x=0, y=-0.25,
            xref="paper", yref="paper", xanchor="left", align="left", font={"size": 11},
        )


def breakdown_fields(results: Sequence[dict | None]) -> list[str]:
    return sorted({f for res in results if res for f in (res.get("breakdowns") or {})})


def submission_field_bars(result: dict) -> go.Figure:
    """One VARM submission: field accuracy bars with CIs when the result has them."""
    metrics = result.get("metrics") or {}
    acc = metrics.get("field_accuracy") or {}
    ci = result.get("ci") or {}
    title = "Field accuracy 字段准确率"
    if not acc:
        return empty_figure(title)
    names = [label for f, label in VARM_FIELDS if f in acc]
    y = [_pct(acc[f]) for f, _ in VARM_FIELDS if f in acc]
    cis = [ci.get(f"field_accuracy.{f}") for f, _ in VARM_FIELDS if f in acc]
    err = None
    if any(cis):
        err = {
            "type": "data",
            "symmetric": False,
            "array": [None if not c else c[1] * 100 - v for c, v in zip(cis, y, strict=True)],
            "arrayminus": [None if not c else v - c[0] * 100 for c, v in zip(cis, y, strict=True)],
        }
    fig = go.Figure(go.Bar(x=names, y=y, error_y=err, hovertemplate="%{x}: %{y:.1f}%<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="Field 字段", yaxis_title="Accuracy 准确率 (%)", **_LAYOUT)
    return fig


def compare_bars(comparison: dict, label_a: str, label_b: str) -> go.Figure:
    """Paired-bootstrap differences (A − B) per headline metric with their 95% CI."""
    title = f"{html.escape(label_a)} − {html.escape(label_b)} (paired bootstrap 配对自助法, 95% CI)"
    metrics = [(k, v) for k, v in (comparison or {}).items() if isinstance(v, dict) and "diff" in v]
    if not metrics:
        return empty_figure(title)
    x = [html.escape(k) for k, _ in metrics]
    y = [_pct(v.get("diff")) for _, v in metrics]
    cis = [v.get("ci") or [None, None] for _, v in metrics]
    colors = ["#2a9d8f" if v.get("significant") else "#bbbbbb" for _, v in metrics]
    err = {
        "type": "data",
        "symmetric": False,
        "array": [None if c[1] is None or d is None else c[1] * 100 - d for c, d in zip(cis, y, strict=True)],
        "arrayminus": [
            None if c[0] is None or d is None else d - c[0] * 100 for c, d in zip(cis, y, strict=True)
        ],
    }
    fig = go.Figure(
        go.Bar(
            x=x, y=y, error_y=err, marker_color=colors, hovertemplate="%{x}: %{y:+.2f} points<extra></extra>"
        )
    )
    fig.update_layout(
        title=title, xaxis_title="Metric 指标", yaxis_title="Difference 差值 (points)", **_LAYOUT
    )
    return fig


def comprehensiveness_vs_f1(rows: Sequence[dict]) -> go.Figure:
    """Does a better classifier explain itself better? Comprehensiveness (spec §3) against F1, one point per
    system that submitted explanations, with the comprehensiveness CI as a vertical error bar."""
    title = "Explanations: comprehensiveness vs F1 解释忠实度与F1"
    shown = [r for r in rows if _num(r.get("explanations.comprehensiveness")) is not None]
    if not shown:
        return empty_figure(title, "No system with explanations 暂无提交解释的系统")
    y = [_pct(r.get("explanations.comprehensiveness")) for r in shown]
    hi = [_pct(r.get("ci.explanations.comprehensiveness.high")) for r in shown]
    lo = [_pct(r.get("ci.explanations.comprehensiveness.low")) for r in shown]
    fig = go.Figure(
        go.Scatter(
            x=[_pct(r.get("f1")) for r in shown],
            y=y,
            mode="markers+text",
            text=system_labels(shown),
            textposition="top center",
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [None if h is None else h - v for h, v in zip(hi, y, strict=True)],
                "arrayminus": [None if lo_ is None else v - lo_ for lo_, v in zip(lo, y, strict=True)],
            },
            hovertemplate="%{text}<br>F1 %{x:.1f}%<br>comprehensiveness %{y:.1f} points<extra></extra>",
        )
    )
    fig.update_layout(title=title, xaxis_title="F1 (%)",
                      yaxis_title="Comprehensiveness 全面性 (probability points)", **_LAYOUT)
    return fig
