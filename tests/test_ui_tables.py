"""Pure-function tests for the leaderboard table builders (no Gradio)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from space.board_query import View, default_columns, filter_rows, page_slice, rows_frame, to_csv, to_json
from space.ui.safe import md
from space.ui.tables import (
    column_choices,
    display_frame,
    model_cell,
    rank_label,
    sort_choices,
    system_choices,
    top_systems,
)
from tests.factories import XSS_NAME, board_rows, make_entries


@pytest.fixture(scope="module")
def varm_rows() -> list[dict]:
    return board_rows(make_entries("varm", 30, xss=True), "varm")


def test_rank_label_ranges() -> None:
    assert rank_label(1, 1) == "1"
    assert rank_label(1, 3) == "1–3"
    assert rank_label(None, 2) == ""


def test_display_frame_columns_and_types(varm_rows: list[dict]) -> None:
    df = rows_frame(varm_rows)
    table, types = display_frame(df.head(10), "varm", default_columns("varm"), "en")
    assert list(table.columns)[:2] == ["Rank", "Model"]
    for header in (
        "JREM ↑",
        "JREM 95% CI",
        "Label Macro-F1 ↑",
        "Category Macro-F1 ↑",
        "HER-C ↓",
        "HER-L ↓",
        "T-F1 ↑",
        "Parse success ↑",
        "Date",
        "Scorer",
        "Mark",
    ):
        assert header in table.columns
    # User text is "str" (never markdown/html) except the model name and links, built as escaped Markdown;
    # metric columns are numbers.
    kinds = dict(zip(table.columns, types, strict=True))
    assert {h for h, k in kinds.items() if k == "markdown"} <= {"Model", "Links"}
    assert kinds["Model"] == "markdown" and kinds["JREM ↑"] == "number"
    assert kinds["Organisation"] == kinds["Setting"] == "str"
    jrem = table["JREM ↑"].tolist()
    assert all(0 <= v <= 100 for v in jrem)
    assert table["JREM 95% CI"].iloc[0].startswith("[")


def test_rank_order_and_baseline_mark(varm_rows: list[dict]) -> None:
    df = filter_rows(rows_frame(varm_rows), View())
    assert df["rank"].tolist() == sorted(df["rank"].tolist())
    table, _ = display_frame(df, "varm", default_columns("varm"), "en")
    baseline = df["model_name"].isin(["majority", "lexicon", "char-ngram"]).to_numpy()
    marks = table.loc[baseline, "Mark"]
    assert len(marks) == 3 and all("baseline" in m for m in marks)
    assert all("baseline" not in m for m in table.loc[~baseline, "Mark"])


def test_model_name_links_to_its_submission_page_as_escaped_text(varm_rows: list[dict]) -> None:
    df = filter_rows(rows_frame(varm_rows), View())
    table, _ = display_frame(df, "varm", default_columns("varm"), "en")
    for cell, name, sid in zip(table["Model"], df["model_name"], df["submission_id"], strict=True):
        assert cell == f"[{md(name)}](?submission={sid}&track=varm&lang=en)", cell  # keeps track, language
    xss = table.loc[df["model_name"].eq(XSS_NAME).to_numpy(), "Model"].iloc[0]
    assert "<" not in xss and "&lt;img" in xss  # inert: Markdown shows it as text (browser test renders it)
    assert model_cell({"model_name": "m", "submission_id": "../x)(javascript:"}) == "m"  # no id, no link
    zh, _ = display_frame(df, "varm", default_columns("varm"), "zh")
    assert zh["模型"].iloc[0].endswith("&track=varm)")  # Chinese is the default: no lang parameter


def test_links_column_only_links_http_urls_and_collapses_when_empty(varm_rows: list[dict]) -> None:
    df = rows_frame(varm_rows).head(4).copy()
    table, _ = display_frame(df, "varm", default_columns("varm"), "en")
    assert "Links" not in table.columns  # nobody gave a link on this page: the column collapses
    df["paper_url"] = ["https://arxiv.org/abs/1234.5678", "", "javascript:alert(1)", ""]
    df["code_url"] = ["", "https://github.com/x/y", "", ""]
    table, types = display_frame(df, "varm", default_columns("varm"), "en")
    links = table["Links"].tolist()
    assert links[0] == "[paper](<https://arxiv.org/abs/1234.5678>)"
    assert links[1] == "[code](<https://github.com/x/y>)"
    assert "](" not in links[2] and "javascript" in links[2]  # shown as text, never a link
    assert links[3] == ""
    assert types[list(table.columns).index("Links")] == "markdown"
    df["organisation"] = ""  # empty for everyone: collapses; other text columns stay
    table, _ = display_frame(df, "varm", default_columns("varm"), "en")
    assert "Organisation" not in table.columns and "Setting" in table.columns


CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def test_headers_and_cells_follow_the_language(varm_rows: list[dict]) -> None:
    df = filter_rows(rows_frame(varm_rows), View()).copy()
    df["paper_url"] = "https://example.org/p"
    every = default_columns("varm") + ["text:submission_id"]
    en, _ = display_frame(df, "varm", every, "en")
    zh, _ = display_frame(df, "varm", every, "zh")
    assert list(zh.columns)[:2] == ["排名", "模型"] and {"机构", "标记", "链接", "日期"} <= set(zh.columns)
    assert not [h for h in en.columns if CJK.search(h)], list(en.columns)
    assert not CJK.search(" ".join(en["Mark"]) + " ".join(en["Links"]))  # "◆ baseline", "[paper](…)"
    assert any("基线" in m for m in zh["标记"]) and all("论文" in c for c in zh["链接"])  # positive control
    assert [label for label, _ in column_choices("varm", "en") if CJK.search(label)] == []
    assert ("排名", "rank") in sort_choices("varm", "zh") and ("Rank", "rank") in sort_choices("varm", "en")
    # Metric headers (issue 28.9): Chinese names on a Chinese page, acronyms (JREM, HER-C, F1) alike in both.
    assert {"JREM ↑", "JREM 95% CI", "标签 Macro-F1 ↑", "解析成功率 ↑"} <= set(zh.columns), list(zh.columns)
    words = [h for h in zh.columns if re.search(r"[a-z]{2,}", h.replace("Macro-F1", ""))]
    assert words == [], words
    assert [h for h in en.columns if re.search(r"[a-z]{2,}", h.replace("Macro-F1", ""))]  # positive control
    assert ("标签 Macro-F1 ↑", "macro_f1.label") in sort_choices("varm", "zh")


def test_search_filters_and_sort(varm_rows: list[dict]) -> None:
    df = rows_frame(varm_rows)
    assert set(filter_rows(df, View(q="LEXI"))["model_name"]) == {"lexicon"}
    assert not filter_rows(df, View(baselines=False))["is_baseline"].any()
    assert set(filter_rows(df, View(model_types=("open",)))["model_type"]) == {"open"}
    assert set(filter_rows(df, View(settings=("fine-tuned",)))["setting"]) == {"fine-tuned"}
    by_her = filter_rows(df, View(sort="her_c"))["her_c"].tolist()
    assert by_her == sorted(by_her, reverse=True)
    # Filtering never re-ranks: the ranks shown are the official ones.
    sub = filter_rows(df, View(q="model-0002"))
    assert sub["rank"].tolist() == df.loc[df["model_name"].str.contains("model-0002"), "rank"].tolist()


def test_search_is_literal_not_regex(varm_rows: list[dict]) -> None:
    df = rows_frame(varm_rows)
    assert filter_rows(df, View(q="<img src=x")).iloc[0]["model_name"] == XSS_NAME
    assert filter_rows(df, View(q=".*")).empty


def test_column_chooser(varm_rows: list[dict]) -> None:
    df = rows_frame(varm_rows)
    table, _ = display_frame(df.head(3), "varm", ["field_accuracy.target", "text:submission_id"], "en")
    assert list(table.columns) == ["Rank", "Model", "Target acc. ↑", "ID"]
    values = {v for _, v in column_choices("varm")}
    assert "field_accuracy.stance" in values and "text:organisation" in values


def test_toxitrace_columns() -> None:
    rows = board_rows(make_entries("cntp", 5), "cntp")
    table, _ = display_frame(rows_frame(rows), "cntp", default_columns("cntp"), "en")
    for header in ("Span overlap F1 ↑", "Span overlap F1 95% CI", "F1 ↑", "Accuracy ↑", "Macro-F1 ↑"):
        assert header in table.columns
    cold, _ = display_frame(
        rows_frame(board_rows(make_entries("cold", 5), "cold")), "cold", default_columns("cold"), "en"
    )
    assert {"F1 ↑", "F1 95% CI", "Accuracy ↑", "Precision ↑", "Recall ↑", "Macro-F1 ↑"} <= set(cold.columns)


def test_view_query_round_trip() -> None:
    view = View(
        track="cold", q="lexicon & co", baselines=False, model_types=("open",), sort="accuracy", page=2
    )
    query = view.to_query(submission="0123456789abcdef")
    assert query.startswith("?track=cold")
    from urllib.parse import parse_qsl

    params = dict(parse_qsl(query[1:]))
    assert params["submission"] == "0123456789abcdef"
    assert View.from_query(params) == view


def test_view_from_hostile_query() -> None:
    view = View.from_query(
        {
            "track": "<script>",
            "sort": "__import__",
            "page": "-5",
            "cols": "x,jrem",
            "type": "evil",
            "q": "a" * 1000,
        }
    )
    assert view.track == "varm" and view.sort == "rank" and view.page == 1
    assert view.columns == ("jrem",) and view.model_types == () and len(view.q) == 200


def test_paging(varm_rows: list[dict]) -> None:
    df = rows_frame(varm_rows)
    part, page, first, last = page_slice(df, 99, size=7)
    assert page == 5 and (first, last) == (29, 30) and len(part) == 2


def test_exports_are_raw_and_formula_safe(varm_rows: list[dict]) -> None:
    rows = [dict(r) for r in varm_rows]
    rows[0]["model_name"] = '=HYPERLINK("http://x")'
    df = rows_frame(rows)
    csv = to_csv(df).decode("utf-8-sig")
    assert "'=HYPERLINK" in csv and "_search" not in csv
    parsed = pd.read_csv(__import__("io").StringIO(csv))
    assert parsed["jrem"].iloc[0] == pytest.approx(rows[0]["jrem"])  # unrounded
    data = json.loads(to_json(df, "varm"))
    assert data["track"] == "varm" and len(data["rows"]) == len(rows)
    assert data["rows"][0]["jrem"] == rows[0]["jrem"]


def test_default_analysis_selection(varm_rows: list[dict]) -> None:
    df = rows_frame(varm_rows)
    ids = top_systems(df)
    assert len(ids) == 5 + 3
    chosen = df.set_index("submission_id").loc[ids]
    assert chosen["is_baseline"].sum() == 3
    labels = dict((v, k) for k, v in system_choices(df))
    assert all(i in labels for i in ids)


def test_empty_board() -> None:
    df = rows_frame([])
    table, _ = display_frame(filter_rows(df, View()), "varm", default_columns("varm"), "en")
    assert table.empty and "JREM ↑" in table.columns


def test_the_ui_board_and_the_parquet_export_agree(tmp_path) -> None:
    """The UI shows the live board (Service.leaderboard); the complete parquet export of the same publish
    gives the same table."""
    import io

    from scoring.version import SCORER_VERSION
    from space.ui.state import load_board_frame
    from tests.conftest_ui import publish_demo_board, web_service
    from worker.config import Config
    from worker.store.local import LocalStore

    store = LocalStore(tmp_path)
    publish_demo_board(store, "varm", 3, xss=True)  # real scoring job + publisher
    service = web_service(Config(data_dir=tmp_path))
    meta, df = load_board_frame(service, "varm")
    df_p = rows_frame(pd.read_parquet(io.BytesIO(store.read("results", "varm/leaderboard.parquet"))))
    assert meta["scorer_version"] == SCORER_VERSION
    assert len(df) == len(df_p) == 6
    view = View()
    a, _ = display_frame(filter_rows(df, view), "varm", default_columns("varm"), "en")
    b, _ = display_frame(filter_rows(df_p, view), "varm", default_columns("varm"), "en")
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


def test_pickers_include_low_ranked_baselines() -> None:
    rows = board_rows(make_entries("varm", 40), "varm")
    df = rows_frame(rows)
    ids = {v for _, v in system_choices(df, limit=5)}
    assert set(top_systems(df)) <= ids


def test_analysis_table_shows_na_with_the_reason_for_an_undefined_metric(varm_rows: list[dict]) -> None:
    """An undefined metric (0/0, published as 0) is "n/a" with the scorer's reason on hover, its CI blank; a
    measured 0 next to it stays a number (positive control)."""
    from space.ui.tables import SHOWN, metric_table

    rows = [dict(r) for r in varm_rows[:3]]
    rows[0].update({"her_c": 0.0, "undefined.her_c": "no item with the right category <b>"})
    rows[1].update({"her_c": 0.0})
    table, types = metric_table(rows, "varm", "en")
    column = list(table.columns).index("HER-C ↓")
    assert types[column] == "markdown"
    cell = table.attrs[SHOWN]["HER-C ↓"][0]  # shown; the value the browser sorts by is none
    assert ">n/a<" in cell and 'title="no item with the right category &lt;b&gt;"' in cell
    assert pd.isna(table["HER-C ↓"].iloc[0]) and table["HER-C ↓"].iloc[1] == 0.0
    assert table.attrs[SHOWN]["HER-C ↓"][1] == "0.0" and list(table.columns)[0] == "Model"
    plain, plain_types = metric_table(varm_rows[:3], "varm", "en")
    assert plain_types[list(plain.columns).index("HER-C ↓")] == "number"  # no n/a: numbers sort as numbers


def test_times_read_as_a_person_writes_them() -> None:
    """Issue 28.15: no raw ISO stamps on the pages; what is not one passes as given."""
    from space.ui.tables import when

    assert when("2026-12-05T23:36:37.036Z") == when("2026-12-05T23:36:37+00:00") == "2026-12-05 23:36 UTC"
    assert when(None) == "" and when("2026-12-05") == "2026-12-05" and when("soon") == "soon"


def test_a_table_sent_back_with_missing_cells_is_read_without_an_error() -> None:
    """The Maintainers tab reads its tables back on a language toggle; a held gold match's empty count comes
    back as NaN, which pandas 3 keeps through astype(str): the check raised "'float' object has no attribute
    'strip'" (an error toast on every page). Blank and missing cells hold no data; one value does."""
    from space.ui.pages.maintainers import shows_rows

    blank = pd.DataFrame({"count": [float("nan"), None], "id": ["", "  "]}, dtype=object)
    assert shows_rows(blank) is False
    assert shows_rows(pd.DataFrame({"count": [float("nan"), 3.0], "id": ["", None]})) is True
    assert shows_rows(pd.DataFrame({"count": [float("nan")], "id": ["c0c21526c163048d"]})) is True
    assert shows_rows(None) is False and shows_rows(pd.DataFrame()) is False
