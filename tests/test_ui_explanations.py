"""The board's explanation views (spec §3): the "Expl." column group, the comprehensiveness-vs-F1 chart and
the dev explorer's attribution heat map, on results produced by the real scorer from the demo baselines."""

from __future__ import annotations

from pathlib import Path

from scoring.api import score_file
from space.board_query import default_columns, rows_frame
from space.ui import explorer, figures
from space.ui.tables import display_frame, metric_table
from tests.factories import XSS_NAME, board_rows, make_entries
from worker.leaderboard import Entry

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"


def _with_baselines(track: str) -> list[dict]:
    """Factory board rows whose first two results are the real scores of char-ngram (explanations) and
    lexicon (none) on the demo test split; the third is renamed to an XSS probe with the random variant."""
    entries = make_entries(track, 6)
    refs = DEMO / track / "test.jsonl"
    for entry, name in zip(entries, ("char-ngram", "lexicon", "char-ngram-random"), strict=False):
        data = (DEMO / track / "baselines" / f"{name}.test.jsonl").read_bytes()
        entry.result.update(score_file(track, refs, data, bootstrap=20))
        entry.record["metadata"]["model_name"] = name
    entries[2].record["metadata"]["model_name"] = XSS_NAME
    return board_rows([Entry(e.record, e.version, e.result) for e in entries], track)


def test_explanation_columns_only_for_systems_that_have_them() -> None:
    rows = _with_baselines("cntp")
    frame = rows_frame(rows)
    table, types = display_frame(frame, "cntp", default_columns("cntp"), "en")
    expl = [
        "Expl. attribution AUPRC ↑",
        "Expl. comprehensiveness (self-reported) ↑",
        "Expl. comprehensiveness (self-reported) 95% CI",
        "Expl. sufficiency (self-reported) ↓",
        "Expl. spans per item (spans)",
    ]
    assert [c for c in table.columns if c.startswith("Expl.")] == expl
    by_model = table.set_index(frame["model_name"].to_numpy())  # the Model cell is a link to the page
    with_expl = by_model.loc["char-ngram"]
    row = next(r for r in rows if r["model_name"] == "char-ngram")
    assert with_expl["Expl. comprehensiveness (self-reported) ↑"] == round(
        row["explanations.comprehensiveness"] * 100, 1
    )
    # not a share: a plain number
    assert with_expl["Expl. spans per item (spans)"] == round(row["explanations.spans_per_item"], 2)
    lexicon = by_model.loc["lexicon"]
    assert lexicon[[c for c in expl if "CI" not in c]].isna().all()
    assert lexicon["Expl. comprehensiveness (self-reported) 95% CI"] == ""
    # A board with no explanation anywhere looks exactly as before: no Expl. column at all.
    plain, _ = display_frame(
        rows_frame(board_rows(make_entries("cntp", 5), "cntp")), "cntp", default_columns("cntp"), "en"
    )
    assert not [c for c in plain.columns if c.startswith("Expl.")]
    assert len(types) == len(table.columns)


def test_metric_table_keeps_explanations_only_when_present() -> None:
    rows = _with_baselines("cold")
    table, types = metric_table(rows, "cold", "en")
    assert "Expl. comprehensiveness (self-reported) ↑" in table.columns and len(types) == len(table.columns)
    assert (
        "Expl. attribution AUPRC ↑" not in metric_table(rows, "cold", "en")[0].columns
    )  # no gold spans on cold
    plain = board_rows(make_entries("cold", 4), "cold")
    assert not [c for c in metric_table(plain, "cold", "en")[0].columns if c.startswith("Expl.")]


def test_comprehensiveness_vs_f1_chart() -> None:
    rows = _with_baselines("cntp")
    fig = figures.comprehensiveness_vs_f1(rows)
    assert len(fig.data) == 2  # char-ngram and the (renamed) random variant; lexicon has no explanations
    real = next(r for r in rows if r["model_name"] == "char-ngram")
    assert (real["f1"] * 100, real["explanations.comprehensiveness"] * 100) in [
        (t.x[0], t.y[0]) for t in fig.data
    ]
    assert all("<script" not in t.name + t.hovertemplate for t in fig.data)  # user text escaped
    empty = figures.comprehensiveness_vs_f1(board_rows(make_entries("cold", 3), "cold"))
    assert not empty.data


def test_explorer_shows_attributions_next_to_gold_spans() -> None:
    dev = (DEMO / "cntp" / "dev.jsonl").read_bytes()
    preds = (DEMO / "cntp" / "baselines" / "char-ngram-random.dev.jsonl").read_bytes()  # scores, no spans
    exp = explorer.explore("cntp", dev, preds)
    assert exp.report["valid"]
    item = next(i for i in exp.items if i["gold_spans"])
    assert item["pred_spans"]  # derived from the scores, as the scorer derives them
    html = explorer.item_html(item)
    n = len(item["text"])
    assert html.count("attr-top") == -(-20 * n // 100)  # the characters the k = 20 masking removes
    gold = sum(e - s for s, e in item["gold_spans"])
    assert html.count('<u><span class="attr-') == gold
    # Without explanations the item view is unchanged (no heat map).
    lexicon = (DEMO / "cntp" / "baselines" / "lexicon.dev.jsonl").read_bytes()
    assert "explorer-attr" not in explorer.item_html(explorer.explore("cntp", dev, lexicon).items[1])


def test_attribution_heat_map_escapes_text() -> None:
    html = explorer.highlight_attributions("<b>&", [0.0, 1.0, 0.5, 0.2], [(0, 2)])
    assert "<b>" not in html and "&lt;" in html and "&amp;" in html
    assert html.count("attr-top") == 1 and 'class="attr-5 attr-top">b<' in html
    assert explorer.highlight_attributions("", [], []) == ""


def test_the_outline_marks_the_evidence_for_the_predicted_class() -> None:
    """Issue 25: on a row predicted non-toxic the masking removes the LOWEST-scoring 20 % (spec §3); the
    explorer outlined the highest ones on every row. Positive control: a row predicted toxic outlines the
    highest."""
    scores = [0.0, 1.0, 0.5, 0.2, 0.9]
    non_toxic = explorer.highlight_attributions("abcde", scores, [], label=0)
    toxic = explorer.highlight_attributions("abcde", scores, [], label=1)
    assert non_toxic.count("attr-top") == 1 and 'attr-top">a<' in non_toxic  # score 0.0: the lowest
    assert toxic.count("attr-top") == 1 and 'attr-top">b<' in toxic  # score 1.0: the highest


def test_the_submission_page_lists_the_explanation_metrics_its_board_row_shows() -> None:
    """Issue 28.4: the page of a ToxiTrace entry with explanations lists them (value, CI) beside the
    classification metrics, and its chart's row carries them; a result without explanations lists none."""
    from space.ui.pages.submission import _row_of
    from space.ui.submission import metrics_table

    refs = DEMO / "cold" / "test.jsonl"
    explained = score_file("cold", refs, (DEMO / "cold" / "baselines" / "char-ngram.test.jsonl").read_bytes())
    table = metrics_table(explained, "cold", "en").set_index("Metric")
    names = [n for n in table.index if n.startswith("Expl.")]
    assert {"Expl. comprehensiveness (self-reported)", "Expl. sufficiency (self-reported)"} <= set(names)
    value = explained["explanations"]["comprehensiveness"]
    assert table.loc["Expl. comprehensiveness (self-reported)", "Value"].startswith(f"{value * 100:.1f}")
    assert table.loc["Expl. comprehensiveness (self-reported)", "95% CI"].startswith("[")
    assert not [n for n in table.index if "by_predicted" in n or "tau" in n.lower()]  # the row's keys only
    assert _row_of(explained)["explanations.comprehensiveness"] == value  # the chart's bar
    plain = score_file("cold", refs, (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes())
    assert not [n for n in metrics_table(plain, "cold", "en")["Metric"] if n.startswith("Expl.")]
