"""Reading VARM reference bundles and the maintainer's bundle checker."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scoring.problems import InputError
from scoring.references import (
    audit_key,
    check_reference_bundle,
    load_references,
    near_duplicate_pairs,
)
from tests.varm_factory import HARMFUL_GROUP, HARMFUL_SINGLE, NO_TARGET_ROW, QUOTED, gold, write_jsonl

SECRET_TARGET = "秘密目标甲"
TEXTS = [
    "外地人都滚出去，这里不欢迎你们",
    "楼主就是个傻子，别理他了吧",
    "有人说女司机不行，我完全不认同这种说法",
    "今天天气不错，大家出去走走吧",
    "那些秘密目标甲真是烦死人了",
]


def rows(with_ids: bool = True) -> list[dict]:
    records = [
        HARMFUL_GROUP,
        HARMFUL_SINGLE,
        QUOTED,
        {**NO_TARGET_ROW, "target": ""},
        {**HARMFUL_GROUP, "target": SECRET_TARGET},
    ]
    return [
        gold(f"r{i}" if with_ids else None, text, record)
        for i, (text, record) in enumerate(zip(TEXTS, records, strict=True))
    ]


def bundle(tmp_path: Path, test: list[dict] | None = None, **extra: list[dict]) -> Path:
    test = rows() if test is None else test
    write_jsonl(tmp_path / "test.jsonl", test)
    for name, content in extra.items():
        write_jsonl(tmp_path / (name.replace("__", "/") + ".jsonl"), content)
    return tmp_path


def load_problems(path: Path) -> list[str]:
    with pytest.raises(InputError) as info:
        load_references(path)
    return [str(p) for p in info.value.problems]


def test_load_bundle_dir_and_file(tmp_path: Path) -> None:
    test = rows()
    directory = bundle(tmp_path, test, subsets__identity=[test[0], test[2]], subsets__abuse=[test[1]])
    refs = load_references(directory)
    assert refs.ids == ["r0", "r1", "r2", "r3", "r4"] and refs.texts == TEXTS and len(refs) == 5
    assert sorted(refs.subsets) == ["abuse", "identity"]
    assert refs.subsets["identity"].tolist() == [0, 2]
    only_test = load_references(directory / "test.jsonl")
    assert only_test.subsets == {}
    explicit = load_references(directory / "test.jsonl", directory / "subsets")
    assert np.array_equal(explicit.subsets["abuse"], [1])


def test_without_ids_rows_are_numbered_and_subsets_match_by_text(tmp_path: Path) -> None:
    test = rows(with_ids=False)
    refs = load_references(bundle(tmp_path, test, subsets__s=[{"text": TEXTS[3]}]))
    assert refs.ids == ["1", "2", "3", "4", "5"] and not refs.has_ids
    assert refs.subsets["s"].tolist() == [3]


def test_value_set_violation_names_line_and_field_without_the_value(tmp_path: Path) -> None:
    test = rows()
    test[4]["label"] = "很有害"
    problems = load_problems(bundle(tmp_path, test))
    assert problems == ["test.jsonl: line 5, field 'label': value is not one of 有害, 无害"]


def test_missing_and_non_string_fields(tmp_path: Path) -> None:
    test = rows()
    del test[0]["stance"]
    test[1]["category"] = 3
    problems = load_problems(bundle(tmp_path, test))
    assert problems == [
        "test.jsonl: line 1, field 'stance': missing 'stance'",
        "test.jsonl: line 2, field 'category': 'category' must be a string, found a number",
    ]


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ({"category": "非攻击"}, "label_category_inconsistent"),
        ({"target_type": "无明确对象"}, "no_target_fields_inconsistent"),
        ({"stance": "中性提及"}, "stance_label_inconsistent"),
    ],
)
def test_consistency_rules(tmp_path: Path, change: dict, rule: str) -> None:
    test = rows()
    test[4].update(change)
    problems = load_problems(bundle(tmp_path, test))
    assert any("line 5" in p and rule in p for p in problems), problems
    assert all(SECRET_TARGET not in p for p in problems)


def test_blank_target_needs_no_target_type(tmp_path: Path) -> None:
    test = rows()
    test[0]["target"] = " "
    problems = load_problems(bundle(tmp_path, test))
    assert problems == [
        "test.jsonl: line 1, field 'target': 'target' is empty; it may be empty only when "
        "target_type is 无明确对象"
    ]


def test_duplicate_ids_and_texts(tmp_path: Path) -> None:
    test = rows()
    test[3]["id"] = "r0"
    test[4]["text"] = TEXTS[1]
    problems = load_problems(bundle(tmp_path, test))
    assert "test.jsonl: line 4, field 'id': same id as line 1; every id must be unique" in problems
    assert "test.jsonl: line 5, field 'text': same text as line 2; every text must be unique" in problems
    assert all(TEXTS[1] not in p for p in problems)


def test_subset_rows_must_be_test_rows(tmp_path: Path) -> None:
    test = rows()
    directory = bundle(tmp_path, test, subsets__s=[test[0], {"id": "nope", "text": "x"}, test[0]])
    problems = load_problems(directory)
    assert problems == [
        "subsets/s.jsonl: line 2, field 'id': no test row has this id",
        "subsets/s.jsonl: line 3, field 'id': the same test row as line 1",
    ]


def test_unreadable_test_file(tmp_path: Path) -> None:
    problems = load_problems(tmp_path / "missing.jsonl")
    assert problems[0].startswith("missing.jsonl: file: cannot read missing.jsonl")


def test_gold_values_never_appear_in_messages(tmp_path: Path) -> None:
    test = rows()
    test[4].update(label="无害", target_type="奇怪类型")
    messages = load_problems(bundle(tmp_path, test))
    assert messages
    assert all(SECRET_TARGET not in m and "奇怪类型" not in m and TEXTS[4] not in m for m in messages)


# --- the maintainer checker ------------------------------------------------------------------------------


def split_rows(prefix: str, count: int) -> list[dict]:
    records = [HARMFUL_GROUP, HARMFUL_SINGLE, QUOTED, NO_TARGET_ROW]
    return [
        gold(f"{prefix}{i}", f"{prefix}第{i}条完全不同的评论内容编号{i * 7919}", records[i % 4])
        for i in range(count)
    ]


def test_clean_bundle_passes(tmp_path: Path) -> None:
    test = rows()
    directory = bundle(
        tmp_path, test, train=split_rows("train", 8), dev=split_rows("dev", 4), subsets__identity=[test[0]]
    )
    assert check_reference_bundle(directory) == []


def test_cot_must_parse_to_its_own_fields(tmp_path: Path) -> None:
    test = rows()
    test[1]["cot"] = test[1]["cot"].replace("[S:攻击或认同]", "[S:反对攻击]").replace("[L:有害]", "[L:无害]")
    test[1]["cot"] = test[1]["cot"].replace("[C:一般辱骂]", "[C:非攻击]")
    # Without the 分析： opening but parsing to its own fields: accepted, as the authors' validator does.
    test[2]["cot"] = test[2]["cot"].replace("分析：", "")
    problems = [str(p) for p in check_reference_bundle(bundle(tmp_path, test))]
    assert problems == [
        "test.jsonl: line 2, field 'cot': the cot's [S] value differs from the record's 'stance'",
        "test.jsonl: line 2, field 'cot': the cot's [L] value differs from the record's 'label'",
        "test.jsonl: line 2, field 'cot': the cot's [C] value differs from the record's 'category'",
    ]


def test_cot_is_required_by_the_checker(tmp_path: Path) -> None:
    test = rows()
    del test[0]["cot"]
    problems = [str(p) for p in check_reference_bundle(bundle(tmp_path, test))]
    assert problems == ["test.jsonl: line 1, field 'cot': missing 'cot'"]


def test_ids_and_texts_unique_across_splits(tmp_path: Path) -> None:
    train = split_rows("train", 3)
    train[1]["id"] = "r2"
    train[2]["text"] = TEXTS[0]
    problems = [p.as_dict() for p in check_reference_bundle(bundle(tmp_path, train=train))]
    assert {
        "file": "test.jsonl",
        "line": 3,
        "field": "id",
        "message": "same id as train.jsonl line 2; splits must not share rows",
    } in problems
    assert {
        "file": "test.jsonl",
        "line": 1,
        "field": "text",
        "message": "same text as train.jsonl line 3; splits must not share rows",
    } in problems


def test_near_duplicates_across_splits(tmp_path: Path) -> None:
    train = split_rows("train", 3)
    # Differs from test line 3 by one added space, full-width punctuation and case: identical once
    # normalised, so RapidFuzz gives 100.
    train[0]["text"] = "有人说女司机不行,我完全不认同这种说法 "
    train[1]["text"] = TEXTS[1] + "啊"  # one extra character on a 14-character text: ratio 96.6
    problems = [p.as_dict() for p in check_reference_bundle(bundle(tmp_path, train=train))]
    near = [p for p in problems if "near-duplicate" in p["message"]]
    assert [(p["file"], p["line"]) for p in near] == [("test.jsonl", 2), ("test.jsonl", 3)]
    assert "train.jsonl line 1" in near[1]["message"] and "ratio 100.0" in near[1]["message"]


def test_subset_rows_must_copy_their_test_row(tmp_path: Path) -> None:
    test = rows()
    changed = {**test[0], "stance": "反对攻击"}
    problems = [str(p) for p in check_reference_bundle(bundle(tmp_path, test, subsets__s=[changed]))]
    assert problems == [
        "subsets/s.jsonl: line 1, field 'stance': subset row differs from its test row in stance"
    ]


def test_missing_test_file(tmp_path: Path) -> None:
    problems = [str(p) for p in check_reference_bundle(tmp_path)]
    assert len(problems) == 1
    assert problems[0].startswith("test.jsonl: file: the folder has no test.jsonl; expected")
    assert "single gold JSONL file" in problems[0]  # says which inputs it takes


def test_normalisation_and_pairs() -> None:
    assert audit_key("ＡＢ c\u3000，") == "abc"  # NFKC, lower case, letters and digits only
    pairs = near_duplicate_pairs(["abcdefghijklmnopqrst", "zzz"], ["abcdefghijklmnopqrsu", "abc"])
    assert [(i, j) for i, j, _ in pairs] == [(0, 0)]
    assert pairs[0][2] == 95.0


def test_check_references_compares_texts_on_the_authors_audit_key(tmp_path: Path) -> None:
    """Texts that differ only in punctuation, spacing or case are one text: refused within a split and
    across splits (spec "Release formats"); a real difference passes (positive control)."""
    base = rows()
    twin = {**base[1], "id": "twin", "text": base[1]["text"].rstrip("。！？!?.") + "！！"}
    other = {**base[1], "id": "other", "text": base[1]["text"] + "另外还有一句完全不同的话，说的是别的事情"}
    assert check_reference_bundle(bundle(tmp_path / "ok", dev=[other])) == []
    problems = [str(p) for p in check_reference_bundle(bundle(tmp_path / "within", [*base, twin]))]
    assert len(problems) == 1 and "test.jsonl: line 6" in problems[0] and "same text as line 2" in problems[0]
    spaced = {**twin, "text": " ".join(twin["text"]).upper()}
    problems = [str(p) for p in check_reference_bundle(bundle(tmp_path / "across", dev=[spaced]))]
    assert len(problems) == 1 and problems[0].startswith(
        "test.jsonl: line 2"
    )  # splits in train, dev, test order
    assert "near-duplicate of dev.jsonl line 1" in problems[0] and "audit key" in problems[0]
