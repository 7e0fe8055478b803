"""The strict VARM parser (spec §2), rule by rule, and the lenient advice pass."""

from __future__ import annotations

import pytest

from scoring.protocol import (
    ANCHOR_RE,
    FORMAT_ISSUES,
    PLACEHOLDER_VALUES,
    count_cjk,
    diagnose_lenient,
    lenient_parse,
    parse_output,
    summarise_advice,
)
from tests.varm_factory import HARMFUL_GROUP, NO_TARGET_ROW, QUOTED, output

# 56 code points, 10 CJK characters outside anchors; every CJK character appended adds one of each.
SHORT = "分析：[T:楼主]是[TY:单一对象]且[TT:明示]作者[S:攻击或认同]内容[L:有害]属于[C:一般辱骂]"
RECORD = {
    "target": "楼主",
    "target_type": "单一对象",
    "target_explicitness": "明示",
    "stance": "攻击或认同",
    "label": "有害",
    "category": "一般辱骂",
}


def sized(length: int) -> str:
    return SHORT + "很" * (length - len(SHORT))


def issues(raw: str) -> tuple[str, ...]:
    return parse_output(raw).format_issues


def test_short_template_figures() -> None:
    assert len(SHORT) == 56
    assert count_cjk(ANCHOR_RE.sub("", SHORT)) == 10


def test_valid_output_gives_record_and_no_issue() -> None:
    parsed = parse_output(output(HARMFUL_GROUP))
    assert parsed.schema_valid and parsed.anchor_schema_valid
    assert parsed.format_issues == ()
    assert parsed.record == HARMFUL_GROUP


def test_outer_whitespace_is_stripped_before_every_rule() -> None:
    parsed = parse_output("\n\n  " + sized(100) + "  \r\n")
    assert parsed.schema_valid, parsed.format_issues


@pytest.mark.parametrize(("length", "ok"), [(79, False), (80, True), (180, True), (181, False)])
def test_length_bounds(length: int, ok: bool) -> None:
    raw = sized(length)
    assert len(raw) == length
    assert count_cjk(ANCHOR_RE.sub("", raw)) >= 30  # only the length rule is under test
    assert issues(raw) == (() if ok else ("length_out_of_range",))


def test_length_counts_code_points_with_anchors_after_strip() -> None:
    assert issues("   " + sized(180) + "   ") == ()


def test_insufficient_reasoning_text_at_29_and_30_cjk() -> None:
    # 20 CJK of padding + 10 in the template = 30 -> fine; pad the length with ASCII to stay >= 80.
    assert issues(SHORT + "很" * 20 + "a" * 10) == ()
    assert issues(SHORT + "很" * 19 + "a" * 11) == ("insufficient_reasoning_text",)


def test_cjk_range_is_u3400_to_u9fff() -> None:
    assert count_cjk("\u3400\u9fff") == 2
    assert count_cjk("\u33ff\ua000，。ａ") == 0  # full-width punctuation and letters are not CJK here


def test_repeated_anchor_later_value_wins_but_sequence_fails() -> None:
    raw = sized(100).replace("[T:楼主]", "[T:楼主]又[T:网友]")
    parsed = parse_output(raw)
    assert parsed.record["target"] == "网友"
    assert not parsed.anchor_schema_valid and not parsed.schema_valid
    assert parsed.format_issues == ("anchor_sequence_or_value_invalid",)


def test_ty_tt_t_are_told_apart() -> None:
    parsed = parse_output(sized(100))
    assert parsed.record["target_type"] == "单一对象"
    assert parsed.record["target_explicitness"] == "明示"
    assert [m.group(1) for m in ANCHOR_RE.finditer(SHORT)] == ["T", "TY", "TT", "S", "L", "C"]
    # A target whose value starts with "Y:" is still read as T, not as a TY anchor.
    assert ANCHOR_RE.match("[T:Y:abc]").groups() == ("T", "Y:abc")


def test_anchor_order_must_be_exact() -> None:
    raw = sized(100).replace("[S:攻击或认同]内容[L:有害]", "[L:有害]内容[S:攻击或认同]")
    assert issues(raw) == ("anchor_sequence_or_value_invalid",)


def test_missing_anchor() -> None:
    parsed = parse_output(sized(100).replace("[C:一般辱骂]", "一般辱骂"))
    assert "category" not in parsed.record
    assert parsed.format_issues == ("anchor_sequence_or_value_invalid",)


def test_value_outside_value_set_and_no_consistency_check() -> None:
    raw = sized(100).replace("[L:有害]", "[L:有毒]")
    # The consistency rules apply only to anchor-schema-valid outputs.
    assert issues(raw) == ("anchor_sequence_or_value_invalid",)


def test_values_are_stripped() -> None:
    parsed = parse_output(sized(100).replace("[L:有害]", "[L: 有害 ]"))
    assert parsed.record["label"] == "有害" and parsed.schema_valid


def test_blank_target_is_invalid() -> None:
    parsed = parse_output(sized(100).replace("[T:楼主]", "[T:  ]"))
    assert parsed.record["target"] == ""
    assert not parsed.anchor_schema_valid


def test_anchor_value_cannot_span_lines_or_brackets() -> None:
    assert ANCHOR_RE.search("[T:楼\n主]") is None
    assert ANCHOR_RE.search("[T:]") is None


def test_full_width_brackets_are_not_anchors() -> None:
    raw = sized(100).replace("[", "【").replace("]", "】")
    parsed = parse_output(raw)
    assert parsed.record == {}
    assert not parsed.schema_valid
    assert "anchor_sequence_or_value_invalid" in parsed.format_issues


def test_nothing_is_normalised() -> None:
    assert issues(sized(100).replace("分析：", "分析:")) == ("missing_analysis_prefix",)
    assert issues(sized(100).replace("[T:楼主]", "［T:楼主］")) == ("anchor_sequence_or_value_invalid",)
    assert issues(sized(100).replace("[T:楼主]", "[T：楼主]")) == ("anchor_sequence_or_value_invalid",)


def test_anchors_only_output() -> None:
    raw = "[T:楼主][TY:单一对象][TT:明示][S:攻击或认同][L:有害][C:一般辱骂]"
    parsed = parse_output(raw)
    assert parsed.anchor_schema_valid and not parsed.schema_valid
    assert parsed.format_issues == (
        "anchors_not_naturally_integrated",
        "missing_analysis_prefix",
        "length_out_of_range",
        "insufficient_reasoning_text",
        "forbidden_wrapper",
    )


def test_anchors_need_cjk_between_each_adjacent_pair() -> None:
    raw = sized(100).replace("]且[", "], [")
    assert issues(raw) == ("anchors_not_naturally_integrated",)
    # Text before the first and after the last anchor does not count.
    assert issues(sized(100)) == ()


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"])
def test_multiple_paragraphs(newline: str) -> None:
    raw = sized(100)
    assert issues(raw[:70] + newline + raw[70:]) == ("multiple_paragraphs",)


@pytest.mark.parametrize("wrapper", ["{", "[", "```", "#", "- "])
def test_forbidden_wrappers(wrapper: str) -> None:
    found = issues(wrapper + sized(100))
    assert "forbidden_wrapper" in found
    assert "missing_analysis_prefix" in found


def test_dash_without_space_is_not_a_wrapper() -> None:
    assert "forbidden_wrapper" not in issues("-" + sized(100))


@pytest.mark.parametrize("placeholder", sorted(PLACEHOLDER_VALUES))
def test_placeholder_values(placeholder: str) -> None:
    raw = sized(110).replace("[T:楼主]", f"[T:{placeholder}]")
    assert issues(raw) == ("placeholder_value",)


def test_placeholder_in_a_discrete_anchor_also_breaks_the_value_set() -> None:
    raw = sized(110).replace("[L:有害]", "[L:是否有害]")
    assert issues(raw) == ("anchor_sequence_or_value_invalid", "placeholder_value")


def test_label_category_rule() -> None:
    assert issues(output({**QUOTED, "category": "一般辱骂"})) == ("label_category_inconsistent",)
    assert issues(output({**HARMFUL_GROUP, "category": "非攻击"})) == ("label_category_inconsistent",)


def test_no_target_rule() -> None:
    assert issues(output({**NO_TARGET_ROW, "target_type": "群体对象"})) == ("no_target_fields_inconsistent",)
    assert issues(output({**QUOTED, "target": "无明确对象"})) == ("no_target_fields_inconsistent",)
    no_tt = {**QUOTED, "target_explicitness": "无明确对象"}
    assert issues(output(no_tt)) == ("no_target_fields_inconsistent",)
    assert issues(output(NO_TARGET_ROW)) == ()


def test_stance_label_rule() -> None:
    assert issues(output({**HARMFUL_GROUP, "stance": "引用或转述"})) == ("stance_label_inconsistent",)
    assert issues(output({**QUOTED, "stance": "攻击或认同"})) == ("stance_label_inconsistent",)


def test_all_three_consistency_issues_in_spec_order() -> None:
    record = {
        "target": "无明确对象",
        "target_type": "群体对象",
        "target_explicitness": "明示",
        "stance": "中性提及",
        "label": "有害",
        "category": "非攻击",
    }
    assert issues(output(record)) == (
        "label_category_inconsistent",
        "no_target_fields_inconsistent",
        "stance_label_inconsistent",
    )


def test_issues_are_reported_in_spec_order() -> None:
    raw = "- [T:主要对象]\n"  # many rules at once
    found = issues("x" + raw + "y")
    assert list(found) == [name for name in FORMAT_ISSUES if name in found]
    assert found == (
        "anchor_sequence_or_value_invalid",
        "multiple_paragraphs",
        "missing_analysis_prefix",
        "length_out_of_range",
        "insufficient_reasoning_text",
        "placeholder_value",
    )


def test_empty_output() -> None:
    parsed = parse_output("")
    assert parsed.record == {} and not parsed.schema_valid
    assert parsed.format_issues == (
        "anchor_sequence_or_value_invalid",
        "missing_analysis_prefix",
        "length_out_of_range",
        "insufficient_reasoning_text",
    )


# --- lenient advice -------------------------------------------------------------------------------------


def test_lenient_full_width_brackets() -> None:
    raw = sized(100).replace("[", "【").replace("]", "】")
    diagnosis = diagnose_lenient(raw)
    assert diagnosis.fullwidth_brackets and not diagnosis.fullwidth_colon and not diagnosis.spaced_names
    assert diagnosis.would_be_valid
    assert lenient_parse(raw).record == RECORD


def test_lenient_other_brackets_colon_and_spaces() -> None:
    raw = sized(100).replace("[T:楼主]", "［ T ：楼主］").replace("[L:有害]", "〔L:有害〕")
    diagnosis = diagnose_lenient(raw)
    assert diagnosis.fullwidth_brackets and diagnosis.fullwidth_colon and diagnosis.spaced_names
    assert diagnosis.would_be_valid


def test_lenient_returns_none_when_nothing_to_repair() -> None:
    assert lenient_parse(sized(100)) is None
    assert lenient_parse("no anchors at all") is None


def test_lenient_never_repairs_other_problems() -> None:
    raw = sized(100).replace("[", "【").replace("]", "】").replace("分析：", "")
    diagnosis = diagnose_lenient(raw)
    assert diagnosis.fullwidth_brackets and not diagnosis.would_be_valid


def test_summarise_advice_counts_invalid_outputs_only() -> None:
    good = sized(100)
    brackets = good.replace("[", "【").replace("]", "】")
    colon = good.replace("[T:", "[T：")
    spaces = good.replace("[T:", "[ T :")
    advice = summarise_advice([good, brackets, brackets, colon, spaces])
    assert advice == [
        "2 outputs use full-width brackets around anchors; the scorer accepts only ASCII [ ] — they count as "
        "invalid.",
        "1 output uses a full-width colon (：) inside anchors; the scorer accepts only an ASCII colon as in "
        "[T:...] — it counts as invalid.",
        "1 output uses spaces around anchor names (like [ T :...]); the scorer accepts only [T:...] — it "
        "counts as invalid.",
        "4 invalid outputs would be valid if they were written with ASCII anchors [NAME:value]; fix the "
        "output format to have them scored.",
    ]
    assert summarise_advice([good]) == []
    parsed = [parse_output(x) for x in (good, brackets)]
    assert summarise_advice([good, brackets], parsed) == summarise_advice([good, brackets])


def test_advice_names_the_lines_it_is_about() -> None:
    """Issue 28.10: each advice names the first lines it is about (at most five, then how many more)."""
    good = sized(100)
    brackets = good.replace("[", "【").replace("]", "】")
    outputs = [good, *[brackets] * 7, good.replace("[T:", "[T：")]
    advice = summarise_advice(outputs, lines=[1, 3, 4, 6, 8, 9, 11, 12, 15])
    assert advice[0].startswith(
        "7 outputs use full-width brackets around anchors (lines 3, 4, 6, 8, 9 and 2 more); the scorer"
    ), advice[0]
    assert "inside anchors (line 15);" in advice[1], advice[1]
