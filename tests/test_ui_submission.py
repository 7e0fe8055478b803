"""Submission-page renderers: every metric with CI, subsets, provenance, BibTeX; user text escaped."""

from __future__ import annotations

from space.ui import submission
from tests.factories import make_entries, submission_view


def _sub() -> dict:
    """A published submission as `Service.submission` returns it (shape checked in test_ui_api.py)."""
    return submission_view(make_entries("varm", 5)[3])


def test_result_unwrapping() -> None:
    res = {"metrics": {"jrem": 0.5}}
    assert submission.result_of({"result": {"version": 2, "result": res}}) is res
    assert submission.result_of({"result": res}) is res
    assert submission.result_of({"result": None}) is None
    assert submission.version_of({"result": {"version": 2, "result": res}}) == 2


def test_metrics_table_has_every_leaf_and_ci() -> None:
    sub = _sub()
    table = submission.metrics_table(submission.result_of(sub), "varm", "en")
    names = table["Metric"].tolist()
    result = submission.result_of(sub)
    assert len(names) == len(submission.flatten_metrics(result)) == len(set(names))  # every leaf, once
    assert names[:7] == [
        "JREM",
        "Label Macro-F1",
        "Category Macro-F1",
        "HER-C",
        "HER-L",
        "T-F1",
        "Parse success",
    ]
    assert {"Stance acc.", "Stance Macro-F1", "Type Macro-F1"} <= set(names)
    assert not [n for n in names if "_" in n or "." in n.rstrip(".")], names  # no raw keys
    jrem = table.set_index("Metric").loc["JREM"]
    assert jrem["Value"] == f"{result['metrics']['jrem'] * 100:.1f} %"  # one decimal, as on the board
    assert submission.metrics_table(result, "varm", "zh").iloc[0, 0] == "JREM · 联合记录精确匹配"
    assert jrem["95% CI"].startswith("[") and jrem["Direction"].startswith("↑")
    assert table.set_index("Metric").loc["HER-C", "Direction"].startswith("↓")


def test_rank_line_names_the_tie_group() -> None:
    tied = submission.rank_markdown({"rank_low": 2, "rank_high": 4}, 12, "varm", "en")
    assert "2–4 of 12" in tied and "statistically tied" in tied and "JREM" in tied
    alone = submission.rank_markdown({"rank_low": 1, "rank_high": 1}, 12, "cold", "en")
    assert "1 of 12" in alone and "tied" not in alone
    assert "not on the public board" in submission.rank_markdown(None, 12, "varm", "en")
    assert tied in submission.header_markdown(_sub(), tied)


def test_header_escapes_and_links() -> None:
    sub = _sub()
    sub["metadata"] = {
        "model_name": "<img src=x onerror=alert(1)>",
        "paper_url": "javascript:alert(1)",
        "code_url": "https://example.org/x(1)",
        "description": "[click](javascript:alert(1))",
    }
    text = submission.header_markdown(sub)
    assert "<img" not in text and "](javascript" not in text
    assert "(<https://example.org/x%281%29>)" in text


def test_provenance_versions_bibtex_status() -> None:
    sub = _sub()
    prov = submission.provenance_markdown(sub)
    assert "`1.0.0`" in prov and "abab" in prov
    assert submission.versions_table(sub, "en")["Result version"].tolist() == [1]
    bib = submission.bibtex({**sub, "metadata": {"model_name": "x}{evil", "organisation": "o"}})
    assert bib.startswith("@misc{varm-") and "x}{evil" not in bib
    assert "**published** ●" in submission.status_line(sub, "en")
    assert "rejected" in submission.status_line({"status": "rejected", "error": "<b>bad</b>"}, "en")
    assert "<b>" not in submission.status_line({"status": "rejected", "error": "<b>bad</b>"}, "en")


def test_output_format_report_table_count_and_advice() -> None:
    sub = _sub()
    assert submission.output_format_markdown(sub, "en").startswith("**Output format")  # clean: says so
    assert submission.output_format_table(sub).empty
    sub["format_report"] = {
        "entries": [
            {
                "line": 3,
                "id": "varm-demo-test-0003",
                "issues": ["missing_analysis_prefix", "length_out_of_range"],
            },
            {"line": 9, "id": None, "issues": ["anchor_sequence_or_value_invalid"]},
        ],
        "total": 1200,
        "advice": ["1 output uses full-width brackets <b>x</b>"],
    }
    table = submission.output_format_table(sub, "en")
    assert table.columns.tolist() == ["Line", "ID", "Issues"]
    assert table.values.tolist() == [
        [3, "varm-demo-test-0003", "missing_analysis_prefix, length_out_of_range"],
        [9, "—", "anchor_sequence_or_value_invalid"],
    ]
    text = submission.output_format_markdown(sub, "en")
    assert "1,200 output(s) are not schema-valid" in text and "first 2 listed" in text
    assert "full\\-width brackets" in text and "<b>" not in text  # advice is escaped Markdown
    assert submission.output_format_markdown({"format_report": None}) == ""  # ToxiTrace / older records
    assert submission.output_format_table({}).empty


def test_a_private_submission_rests_at_scored() -> None:
    """The status timer stops when nothing more will happen: a hidden result is never published."""
    assert submission.is_final({"status": "scored", "hidden": True})
    assert not submission.is_final({"status": "scored", "hidden": False})  # the publish is still to come
    assert submission.is_final({"status": "published"}) and not submission.is_final({"status": "queued"})


def test_the_validation_report_names_lines_in_order() -> None:
    """Issue 28.10: the schema-invalid summary names the first lines and ids, the problems table is in line
    order (file-level first), and the client's line for a problem without a field has no "None"."""
    from space.ui.reports import report_frame, report_markdown
    from varm_client.cli import _error_line

    report = {
        "valid": False,
        "errors_total": 3,
        "errors": [
            {"line": 11, "field": None, "message": "not JSON"},
            {"line": None, "field": None, "message": "no rows"},
            {"line": 2, "field": "id", "message": "missing field 'id'"},
        ],
        "format_report": [{"line": n, "id": f"r{n}", "issues": ["x"]} for n in (4, 6, 9, 12, 20)],
    }
    assert report_frame(report, "en").iloc[:, 0].tolist() == ["file", "2", "11"]
    text = report_markdown(report, "en")
    assert "5 output(s) are not schema-valid and will count as wrong: line 4 (r4), line 6 (r6)" in text
    assert "and 2 more" in text, text
    assert "第 4 行（r4）" in report_markdown(report, "zh")
    assert _error_line(report["errors"][0]) == "line 11: not JSON"
    assert _error_line(report["errors"][1]) == "file: no rows"
    assert _error_line(report["errors"][2]) == "line 2, id: missing field 'id'"
