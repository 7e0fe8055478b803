"""The shared JSONL reader and id-coverage helper, including hostile inputs."""

from __future__ import annotations

import json

import pytest

from scoring.jsonl import coverage_problems, describe_found, quote, read_jsonl
from scoring.limits import MAX_ERRORS_KEPT, MAX_IDS_LISTED


def lines(*objects: object) -> bytes:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects).encode()


def messages(problems) -> list[str]:
    return [str(p) for p in problems]


def test_reads_objects_with_line_numbers_and_skips_blank_lines() -> None:
    data = b'{"a": 1}\n\n   \n\t\r\n{"b": "\xe4\xb8\xad"}\r\n{"c": 3}'
    rows, problems = read_jsonl(data)
    assert rows == [(1, {"a": 1}), (5, {"b": "中"}), (6, {"c": 3})]
    assert problems == [] and problems.total == 0


def test_bom_is_tolerated() -> None:
    rows, problems = read_jsonl(b"\xef\xbb\xbf" + lines({"id": "x"}, {"id": "y"}))
    assert rows == [(1, {"id": "x"}), (2, {"id": "y"})] and not problems


def test_empty_file() -> None:
    for data in (b"", b"\n\n  \n", b"\xef\xbb\xbf"):
        rows, problems = read_jsonl(data, what="predictions")
        assert rows == [] and messages(problems) == ["file: the predictions file is empty"]


def test_gbk_file_is_named() -> None:
    data = lines({"id": "1", "output": "分析：这是一段中文"}).decode().encode("gbk")
    rows, problems = read_jsonl(data)
    assert rows == []
    assert messages(problems) == ["file: the predictions file is encoded as GBK/GB18030; save it as UTF-8"]


def test_utf16_file_is_named() -> None:
    rows, problems = read_jsonl('{"id": "1"}\n'.encode("utf-16"))
    assert "UTF-16" in problems[0].message and rows == []


def test_other_bad_bytes_name_the_line() -> None:
    rows, problems = read_jsonl(b'{"a": 1}\n{"b": "\xff\xfe\xff"}\n')
    assert rows == []
    assert problems[0].line == 2 and "not valid UTF-8" in problems[0].message


def test_nul_bytes_are_rejected_per_line() -> None:
    rows, problems = read_jsonl(b'{"a": 1}\n{"b": "x\x00"}\n')
    assert rows == [(1, {"a": 1})]
    assert problems[0].line == 2 and "NUL" in problems[0].message


@pytest.mark.parametrize(
    ("line", "found"),
    [
        ("[1, 2]", "a list"),
        ('"text"', "a string"),
        ("3", "a number"),
        ("null", "null"),
        ("true", "true/false"),
    ],
)
def test_each_line_must_be_an_object(line: str, found: str) -> None:
    rows, problems = read_jsonl(f'{{"ok": 1}}\n{line}\n'.encode())
    assert rows == [(1, {"ok": 1})]
    assert messages(problems) == [f"line 2: expected a JSON object {{...}}, found {found}"]


def test_invalid_json_says_where() -> None:
    _, problems = read_jsonl(b'{"a": 1,}\n')
    assert problems[0].line == 1
    assert "not valid JSON" in problems[0].message and "column" in problems[0].message


def test_json_error_reads_as_english() -> None:
    """json's own messages differ in whether they end in "at"; ours never says "at at column"."""
    _, problems = read_jsonl(b'{"a": "open string\n{"b": 1,}\n')
    texts = messages(problems)
    assert "line 1: not valid JSON (Unterminated string starting at column 7)" in texts[0], texts
    assert "Expecting property name enclosed in double quotes at column 9" in texts[1], texts
    assert not any("at at" in t for t in texts)


def test_nan_and_infinity_are_rejected() -> None:
    _, problems = read_jsonl(b'{"a": NaN}\n{"a": -Infinity}\n')
    assert [p.line for p in problems] == [1, 2]


def test_file_size_limit() -> None:
    rows, problems = read_jsonl(b"x" * 101, max_bytes=100)
    assert rows == []
    assert messages(problems) == ["file: the predictions file is 101 bytes; the limit is 100 bytes"]


def test_line_length_limit() -> None:
    data = lines({"a": "x" * 200}, {"b": 1})
    rows, problems = read_jsonl(data, max_line_bytes=100)
    assert rows == [(2, {"b": 1})]
    assert problems[0].line == 1 and "the limit is 100 bytes per line" in problems[0].message


def test_a_single_50_mb_line_is_rejected_without_parsing() -> None:
    data = b'{"output": "' + b"a" * (50 * 1024 * 1024) + b'"}\n'
    rows, problems = read_jsonl(data)
    assert rows == [] and problems.total == 1 and "per line" in problems[0].message


def test_deep_nesting_becomes_a_problem() -> None:
    data = b"[" * 60000 + b"]" * 60000 + b"\n"
    rows, problems = read_jsonl(data, max_line_bytes=200_000)
    assert rows == [] and problems[0].line == 1


def test_huge_numbers() -> None:
    rows, problems = read_jsonl(b'{"a": ' + b"9" * 5000 + b"}\n" + b'{"b": 1e999999}\n')
    assert problems[0].line == 1 and "not valid JSON" in problems[0].message
    assert rows == [(2, {"b": float("inf")})]  # a float overflow is a value, not a crash


def test_lone_surrogate_escape_is_rejected_but_pairs_are_fine() -> None:
    rows, problems = read_jsonl(b'{"a": "\\ud800"}\n{"a": "\\ud83d\\ude00"}\n{"a": "\\\\ud800"}\n')
    assert [p.line for p in problems] == [1]
    assert rows == [(2, {"a": "😀"}), (3, {"a": "\\ud800"})]


def test_errors_are_capped_and_counted() -> None:
    data = b"nope\n" * 500
    rows, problems = read_jsonl(data)
    assert rows == [] and len(problems) == MAX_ERRORS_KEPT and problems.total == 500


def test_many_short_lines_stop_at_the_row_limit() -> None:
    data = b"{}\n" * 2_000_000
    rows, problems = read_jsonl(data, max_rows=1000)
    assert len(rows) == 1000 and problems.total == 1
    assert problems[0].line == 1001 and "more than 1,000 lines" in problems[0].message


def test_millions_of_blank_lines_are_cheap() -> None:
    rows, problems = read_jsonl(b"\n" * 10_000_000 + b'{"a": 1}\n')
    assert rows == [(10_000_001, {"a": 1})] and not problems


def test_describe_and_quote() -> None:
    assert describe_found({}) == "an object" and describe_found(2) == "a number"
    assert describe_found(1.5) == "a decimal number"
    assert quote("楼主") == '"楼主"'
    assert quote("x" * 100) == '"' + "x" * 39 + '…"'


# --- coverage -------------------------------------------------------------------------------------------


def test_coverage_duplicates_unknown_missing() -> None:
    found = [(1, "a"), (2, "b"), (3, "a"), (4, "zz")]
    problems = coverage_problems(found, ["a", "b", "c"])
    assert messages(problems) == [
        "line 3, field 'id': id \"a\" already appeared on line 1; give one line per row",
        "line 4, field 'id': id \"zz\" is not in the test set",
        "file, field 'id': 1 test rows have no prediction: id \"c\"",
    ]


def test_coverage_lists_the_first_ids_and_counts_the_rest() -> None:
    expected = [f"id{i}" for i in range(100)]
    found = [(i + 1, f"id{i}") for i in range(50)] + [(100 + i, f"x{i}") for i in range(30)]
    found += [(200 + i, f"id{i}") for i in range(25)]
    problems = coverage_problems(found, expected)
    duplicates = [p for p in problems if "already appeared" in p.message]
    unknown = [p for p in problems if p.line is not None and "is not in the test set" in p.message]
    assert len(duplicates) == MAX_IDS_LISTED and len(unknown) == MAX_IDS_LISTED
    assert "25 lines repeat an id in total" in messages(problems)[MAX_IDS_LISTED]
    assert any("30 lines name an id that is not in the test set" in m for m in messages(problems))
    missing = problems[-1].message
    assert missing.startswith('50 test rows have no prediction (the first 20 are listed): id "id50"')
    assert missing.count('id "') == MAX_IDS_LISTED


def test_coverage_custom_description() -> None:
    problems = coverage_problems([(1, ("text", "新的评论"))], [0], describe=lambda k: f"row {k}")
    assert messages(problems)[0] == "line 1, field 'id': row ('text', '新的评论') is not in the test set"
