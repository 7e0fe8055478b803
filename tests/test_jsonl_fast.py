"""read_jsonl's fast path (orjson, when installed) against its general path (the stdlib's decoder alone, as
in the scorer's distribution, which needs numpy only): the same rows (values and Python types) and the same
problems, line for line, for usual files, every hostile kind of line and random damage."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from scoring import jsonl
from scoring.jsonl import read_jsonl

pytest.importorskip("orjson")

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


def typed(value: object) -> list[str]:
    """A value as tokens with every type spelled out (1 == 1.0 == True and 0.0 == -0.0 in Python; not
    here), without recursion (some lines nest a thousand deep)."""
    out: list[str] = []
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            out.append(f"dict{len(item)}")
            for key, inner in reversed(item.items()):
                stack += [inner, key]
        elif isinstance(item, list):
            out.append(f"list{len(item)}")
            stack += reversed(item)
        else:
            out.append(f"{type(item).__name__}:{item!r}")
    return out


def read_both(data: bytes, monkeypatch: pytest.MonkeyPatch, **limits) -> tuple:
    fast_rows, fast_problems = read_jsonl(data, **limits)
    with monkeypatch.context() as m:
        m.setattr(jsonl, "_FAST_LOADS", None)
        rows, problems = read_jsonl(data, **limits)
    fast = ([(n, typed(o)) for n, o in fast_rows], [p.as_dict() for p in fast_problems], fast_problems.total)
    general = ([(n, typed(o)) for n, o in rows], [p.as_dict() for p in problems], problems.total)
    assert fast == general
    return fast


EDGE_LINES = [
    b'{"a":1,"b":2,"a":3}',  # duplicate keys: the last value, at the first key's place
    b'{"a":"\\ud800"}',
    b'{"a":"\\ud83d\\ude00"}',
    b'{"a":"\\udc00\\ud800"}',
    b'{"\\ud800":1}',
    b'{"a":"\\uD800\\u0041"}',
    b'{"a":"\\ud800\\ud800"}',
    b'{"a":123456789012345678901234567890}',
    b'{"a":18446744073709551615}',
    b'{"a":18446744073709551616}',
    b'{"a":-9223372036854775808}',
    b'{"a":-9223372036854775809}',
    b'{"a":[1.5,{"b":99999999999999999999}]}',  # a float and a big int: the general path
    b'{"a":1.5,"b":"99999999999999999999"}',
    b'{"a":1e400}',
    b'{"a":-1e400}',
    b'{"a":1e-400}',
    b'{"a":-0}',
    b'{"a":-0.0}',
    b'{"a":0e0}',
    b'{"a":1E+2}',
    b'{"a":NaN}',
    b'{"a":Infinity}',
    b'{"a":-Infinity}',
    b'\xef\xbb\xbf{"a":1}',
    b' {"a":1} \r',
    b'\t{"a":1}\t',
    b'{"a":1}\x0c',
    b'\x0b{"a":1}',
    b'\x0c{"a":1}',
    b'{"a":\r1}',
    b'{"a":"\x7f"}',
    b'{"a":"\xc2\x85"}',
    b'{"a":1}\xc2\xa0',
    b'{"a":"\\/"}',
    b'{"a":"\\x"}',
    b'{"a":01}',
    b'{"a":1.}',
    b'{"a":.5}',
    b'{"a":+1}',
    b'{"a":1,}',
    b"[1,]",
    b'{"a":tru}',
    b'{"a":true,"b":false,"c":null}',
    b'{"a":"' + b"9" * 5000 + b'"}',
    b'{"a":' + b"9" * 4300 + b"}",
    b'{"a":' + b"9" * 4301 + b"}",
    b'{"a":1.' + b"9" * 5000 + b"}",
    b'{"a":2.2250738585072011e-308}',
    b'{"a":4.9e-324}',
    b'{"a":2.4703282292062327e-324}',
    b'{"a":1.7976931348623157e308}',
    b'{"a":1.7976931348623158e308}',
    b'{"a":1.7976931348623159e308}',
    b'{"a":0.1000000000000000055511151231257827021181583404541015625}',
    b'{"a":9007199254740993}',
    b'{"a":9007199254740993.0}',
    b'{"a" : 1 }',
    b'"s"',
    b"1",
    b"1.5",
    b"[]",
    b"null",
    b"true",
    b"{}",
    b'{"a":"\\u0000"}',
    b'{"a":{"b":[{"c":[1,2,{"d":"e"}]}]}}',
    b'{"id": "x", "output": "[T:a][TY:b]"}',
    b"{",
    b"}",
    b'{"a" 1}',
    b'{"a":1}{"b":2}',
    b'{"a":1} {"b":2}',
    b"{'a': 1}",
    b'{"a":"\xe4\xb8\xad"}',
]
EDGE_LINES += [b'{"a":"x' + bytes([c]) + b'"}' for c in range(0x20) if c != 0x0A]
EDGE_LINES += [
    b'{"a":' + b"[" * d + b"]" * d + b"}" for d in (10, 150, 198, 199, 200, 201, 500, 1023, 1024, 1025, 5000)
]
EDGE_LINES += [b"[" * d + b"]" * d for d in (198, 199, 200, 201, 1100)]
EDGE_LINES += [b'{"a":' + b'{"a":' * d + b"1" + b"}" * d + b"}" for d in (100, 199, 200, 1030)]


@pytest.mark.parametrize("line", EDGE_LINES, ids=range(len(EDGE_LINES)))
def test_each_kind_of_line_reads_the_same(line: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b'{"id": "a", "output": "x"}\n' + line + b'\n\n{"id": "b", "output": 2.5}\r\n'
    read_both(data, monkeypatch)
    read_both(line, monkeypatch)


def test_the_usual_file_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (DEMO / "varm" / "baselines" / "lexicon.test.jsonl").read_bytes()
    monkeypatch.setattr(jsonl, "_read_line", lambda *args: pytest.fail("the general path read a usual line"))
    rows, problems = read_jsonl(data)
    assert len(rows) > 100 and not problems


def test_demo_files_of_every_track_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = sorted(DEMO.glob("*/baselines/*.jsonl")) + sorted(DEMO.glob("*/test.jsonl"))
    assert len(paths) >= 8
    for path in paths:
        rows, problems, _ = read_both(path.read_bytes(), monkeypatch)
        assert rows and not problems, path


def test_file_level_problems_and_limits_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    good = b'{"id": "a", "output": "x"}\n'
    for data in (
        b"",
        b"\n \n\t\r\n",
        b"\xef\xbb\xbf" + good,
        good + b"\xff\xfe" + good,
        "分析".encode("gbk") + b"\n",
        b"\xff\xfe" + good,
        good + b'{"a": "\x00"}\n' + good,
        good * 50,
        b"[1]\n" * 300,  # more problems than are kept
    ):
        read_both(data, monkeypatch)
    read_both(good * 20, monkeypatch, max_rows=7)
    read_both(good + b'{"a": "' + b"x" * 200 + b'"}\n' + good, monkeypatch, max_line_bytes=100)
    read_both(good * 20, monkeypatch, max_bytes=100)


def test_random_numbers_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(26)
    lines = []
    for _ in range(4000):
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 40))).lstrip("0") or "0"
        number = rng.choice(["", "-"]) + digits
        if rng.random() < 0.6:
            number += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30)))
        if rng.random() < 0.5:
            number += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 340))
        lines.append(f'{{"n": {number}, "l": [{number}]}}'.encode())
    read_both(b"\n".join(lines), monkeypatch)


def test_randomly_damaged_lines_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Valid lines with bytes dropped, doubled or replaced from JSON's own alphabet and a few others."""
    rng = random.Random(4)
    base = [
        json.dumps(
            {"id": f"r{i}", "output": "分析：[T:湖北人][TY:群体]", "n": [i, i / 7, None, True]}
        ).encode()
        for i in range(50)
    ] + [json.dumps({"id": "x", "output": "\ud83d\ude00 \\u00e9"}, ensure_ascii=True).encode()]
    alphabet = [bytes([c]) for c in b'{}[]",:0123456789.eE+-truefalsn\\/ \t\r\x0b\x0c'] + [
        b"\\u",
        b"\\ud800",
        b"\\udc00",
        b"\xe4\xb8\xad",
        b"NaN",
        b"1e999",
        b"99999999999999999999",
    ]
    lines = []
    for _ in range(6000):
        line = bytearray(rng.choice(base))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(line) + 1)
            kind = rng.random()
            if kind < 0.3 and line:
                del line[min(at, len(line) - 1)]
            elif kind < 0.6:
                line[at:at] = rng.choice(alphabet)
            else:
                line[at : at + 1] = rng.choice(alphabet)
        lines.append(bytes(line).replace(b"\n", b" "))
    # One file per 500 lines, so that one bad byte (a file-level problem) spoils only its own file.
    for start in range(0, len(lines), 500):
        data = b"\n".join(lines[start : start + 500])
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            data = b"\n".join(line for line in lines[start : start + 500] if line.isascii() or _utf8(line))
        rows, problems, _ = read_both(data, monkeypatch)
        assert rows and problems


def _utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_the_fast_path_walks_at_most_200_containers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check after orjson is a Python walk: a line of more lists and objects than the old bracket count
    let through (thousands of small lists in 64 KiB) goes to the stdlib unwalked, where brackets inside
    strings do not count."""
    general: list[int] = []
    real = jsonl._read_line
    monkeypatch.setattr(jsonl, "_read_line", lambda raw, n, p: general.append(n) or real(raw, n, p))
    lines = [
        b'{"w": [' + b",".join([b"[]"] * 198) + b"]}",  # 200 lists and objects, the top one's too: fast
        b'{"w": [' + b",".join([b"[]"] * 199) + b"]}",  # 201: the stdlib
        b'{"w": [' + b",".join([b"{}"] * 20_000) + b"]}",
        b'{"w": "' + b"[{" * 500 + b'"}',  # brackets in a string: fast
    ]
    rows, problems = read_jsonl(b"\n".join(lines))
    assert len(rows) == 4 and not problems and general == [2, 3]


def test_read_and_searched_lines_are_the_same_lines() -> None:
    """A file of at most max_rows lines is read line by line; a longer one is searched for its content lines
    (millions of blank lines stay cheap): both give the same (line number, line) pairs, every kind of blank
    line skipped."""
    rng = random.Random(7)
    pieces = [b"", b" ", b"\t", b"\r", b"\x0b", b"\x0c", b" \r", b'{"a": 1}', b' {"a": 2}\r', b"x", b"\x85"]
    for _ in range(200):
        data = b"\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        split = list(jsonl._content_lines(data, max_rows=10**9))
        searched = list(jsonl._content_lines(data, max_rows=-1))  # more lines than max_rows: the search
        assert split == searched, data
    assert list(jsonl._content_lines(b'\n \n{"a": 1}\r\n\n', 10)) == [(3, b'{"a": 1}\r')]
