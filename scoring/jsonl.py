"""Safe JSONL reading and id-coverage checks, shared by every track.

Inputs are untrusted uploads: the reader bounds memory and time (file size, line length, record count,
JSON nesting) and turns every failure into a line-numbered `Problem` instead of an exception.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from .limits import MAX_ERRORS_KEPT, MAX_FILE_BYTES, MAX_IDS_LISTED, MAX_LINE_BYTES, MAX_ROWS
from .problems import Problem

__all__ = ["ProblemList", "coverage_problems", "describe_found", "quote", "read_jsonl", "string_problem"]

_BOM = b"\xef\xbb\xbf"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
# The next line holding a non-blank byte. Blank (ASCII-whitespace-only) lines are skipped inside the
# regex engine, so a file of millions of empty lines costs no Python-level iterations.
_CONTENT_LINE = re.compile(rb"(?m)^[ \t\r\f\v]*[^ \t\r\f\v\n][^\n]*")


class ProblemList(list[Any]):
    """A list of problems capped at MAX_ERRORS_KEPT that still counts every problem in `total`."""

    def __init__(self, cap: int = MAX_ERRORS_KEPT) -> None:
        super().__init__()
        self.cap = cap
        self.total = 0

    def add(self, problem: Problem) -> None:
        self.total += 1
        if len(self) < self.cap:
            self.append(problem)

    @property
    def full(self) -> bool:
        return self.total >= self.cap


def quote(value: str, limit: int = 40) -> str:
    """Quote a (public) id or text for a message, shortened so one message stays readable."""
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    return json.dumps(value, ensure_ascii=False)


def describe_found(value: object) -> str:
    """Plain words for the JSON type of a value ("a list", "a number", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, float):
        return "a decimal number"  # e.g. 1.0 where a whole number is expected
    if isinstance(value, int):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def string_problem(obj: dict[str, Any], key: str, line: int, hint: str = "") -> Problem | None:
    """A Problem when `obj[key]` is missing or not a string (`hint` says what the string should hold)."""
    if key not in obj:
        return Problem(line, key, f"missing '{key}'{hint}")
    if not isinstance(obj[key], str):
        return Problem(line, key, f"'{key}' must be a string{hint}, found {describe_found(obj[key])}")
    return None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not allowed in JSON")


# One decoder for every line: json.loads(..., parse_constant=...) would build a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


# The fast path: orjson reads a line to the same value as _DECODER does, or raises where _DECODER raises or
# gives a value the checks below reject (a lone surrogate escape, NaN/Infinity, a number too large for a
# double). Two kinds of line it could read differently take the general path instead: one whose value holds
# a float and a run of 19 or more digits (an integer outside 64 bits is a float to orjson and an int to the
# stdlib) and deep nesting (orjson reads 1,024 levels, where the stdlib may run out of stack first; a value
# of more than _FAST_MAX_CONTAINERS lists and objects, so any deeper one too, is read again by the stdlib).
# Any other line it cannot read, or one that is not an object, takes the general path too, which reports it
# as before.
_FAST_LOADS: Callable[[bytes], Any] | None
_FAST_ERROR: type[Exception]
try:  # in the service's lock; the scorer's distribution needs numpy alone and reads the same without it
    import orjson
except ImportError:  # pragma: no cover - the tests force the general path with _FAST_LOADS = None
    _FAST_LOADS, _FAST_ERROR = None, ValueError
else:
    _FAST_LOADS, _FAST_ERROR = orjson.loads, orjson.JSONDecodeError
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
_FAST_MAX_CONTAINERS = 200  # lists and objects in a line's value: its depth stays far below any stack limit


def _line_number(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _encoding_problem(data: bytes, error: UnicodeDecodeError, what: str) -> Problem:
    """Name the encoding when we can recognise it: the usual cause is a spreadsheet or editor export."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return Problem(None, None, f"the {what} file is encoded as UTF-16; save it as UTF-8")
    try:
        data.decode("gb18030")
    except UnicodeDecodeError:
        line = _line_number(data, error.start)
        return Problem(
            line,
            None,
            f"the {what} file is not valid UTF-8 (first bad byte on line {line}); save it as UTF-8",
        )
    return Problem(None, None, f"the {what} file is encoded as GBK/GB18030; save it as UTF-8")


def read_jsonl(  # noqa: C901
    data: bytes,
    *,
    what: str = "predictions",
    max_bytes: int = MAX_FILE_BYTES,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_rows: int = MAX_ROWS,
) -> tuple[list[tuple[int, dict[str, Any]]], ProblemList]:
    """Parse a JSONL upload into `(line_number, object)` pairs and problems.

    UTF-8 only (a BOM is tolerated), blank lines skipped, every other line must be one JSON object.
    File-level failures (size, encoding) return no rows; per-line failures are listed by line number,
    the first MAX_ERRORS_KEPT kept and `problems.total` counting all of them.
    """
    problems = ProblemList()
    rows: list[tuple[int, dict[str, Any]]] = []
    if len(data) > max_bytes:
        problems.add(
            Problem(None, None, f"the {what} file is {len(data):,} bytes; the limit is {max_bytes:,} bytes")
        )
        return rows, problems
    if data.startswith(_BOM):
        data = data[len(_BOM) :]  # a slice, not finditer(pos=3): "^" only matches at the real start
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        problems.add(_encoding_problem(data, error, what))
        return rows, problems

    fast = _FAST_LOADS
    has_nul = b"\x00" in data
    records = 0
    for line_no, raw in _content_lines(data, max_rows):
        records += 1
        if records > max_rows:  # counts bad lines too, so a flood of junk lines stays cheap
            problems.add(
                Problem(
                    line_no, None, f"the {what} file has more than {max_rows:,} lines; stopped reading here"
                )
            )
            break
        if len(raw) > max_line_bytes:
            problems.add(
                Problem(
                    line_no,
                    None,
                    f"line is {len(raw):,} bytes long; the limit is {max_line_bytes:,} bytes per line",
                )
            )
            continue
        if has_nul and b"\x00" in raw:
            problems.add(Problem(line_no, None, "line contains a NUL byte (\\0); remove it"))
            continue
        if fast is not None:
            try:
                obj = fast(raw)
            except _FAST_ERROR:
                pass
            else:
                floats = _holds_float(obj) if type(obj) is dict else None
                if floats is False or (floats and not _LONG_DIGITS.search(raw)):
                    rows.append((line_no, obj))
                    continue
        obj = _read_line(raw, line_no, problems)
        if obj is not None:
            rows.append((line_no, obj))
    if not rows and not problems.total:
        problems.add(Problem(None, None, f"the {what} file is empty"))
    return rows, problems


def _content_lines(data: bytes, max_rows: int) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of each line holding a non-blank byte, in order.

    A file of at most `max_rows` lines is read line by line (the usual upload: no search per line, and no
    copy of the file, as a split would make); a longer one may be millions of blank lines, which the regex
    skips inside its engine, so they cost no Python-level iterations (the reader stops after `max_rows`
    content lines)."""
    if data.count(b"\n") <= max_rows:
        for line_no, raw in enumerate(io.BytesIO(data), start=1):
            if not raw.isspace():  # bytes.isspace: the regex's blanks, [ \t\r\f\v], and the newline
                yield line_no, raw[:-1] if raw.endswith(b"\n") else raw
        return
    line_no, counted_to = 1, 0
    for match in _CONTENT_LINE.finditer(data):
        start = match.start()
        line_no += data.count(b"\n", counted_to, start)
        counted_to = start
        yield line_no, match.group()


def _holds_float(obj: dict[str, Any]) -> bool | None:
    """Whether a decoded object holds a float at any depth (a usual line: strings and a few ints); None when
    it holds more than _FAST_MAX_CONTAINERS lists and objects (so any deeper one too): the walk is Python, so
    it stays as short as the bracket count kept it, and a line of thousands of small lists is the stdlib's."""
    holds = False
    stack: list[Any] = [obj]
    containers = 1
    while stack:
        value = stack.pop()
        for item in value.values() if type(value) is dict else value:
            kind = type(item)
            if kind is float:
                holds = True
            elif kind is dict or kind is list:
                containers += 1
                if containers > _FAST_MAX_CONTAINERS:
                    return None
                stack.append(item)
    return holds


def _read_line(raw: bytes, line_no: int, problems: ProblemList) -> dict[str, Any] | None:
    """One line's object by the general path (the stdlib's decoder), or None with its problem added."""
    text = raw.decode("utf-8").rstrip("\r")
    try:
        obj = _DECODER.decode(text)
    except RecursionError:
        problems.add(Problem(line_no, None, "JSON is nested too deeply to read"))
        return None
    except ValueError as error:  # JSONDecodeError, and ints longer than Python's digit limit
        problems.add(
            Problem(
                line_no, None, f"not valid JSON ({_json_error(error)}); each line must be one JSON object"
            )
        )
        return None
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(obj):
        problems.add(
            Problem(
                line_no,
                None,
                "line holds a \\uD800–\\uDFFF escape that is not part of a "
                "surrogate pair (not a character); remove it",
            )
        )
        return None
    if not isinstance(obj, dict):
        problems.add(Problem(line_no, None, f"expected a JSON object {{...}}, found {describe_found(obj)}"))
        return None
    return obj


def _has_lone_surrogate(obj: object) -> bool:
    """True when a decoded JSON value holds a lone surrogate (json turns valid pairs into one character)."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _json_error(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        # Some messages end in "at" already ("Unterminated string starting at"): no "at at column".
        joiner = " " if error.msg.endswith(" at") else " at "
        return f"{error.msg}{joiner}column {error.colno}"
    return str(error).split(";")[0][:120]


def coverage_problems(
    found: Sequence[tuple[int, Hashable]],
    expected: Sequence[Hashable],
    *,
    field: str = "id",
    describe: Callable[[Hashable], str] | None = None,
    split: str = "test",
) -> list[Problem]:
    """Duplicate, unknown and missing keys of a file against the expected keys (one per row of `split`,
    the split named in the messages: "test" for submissions, "dev" in the dev explorer).

    `found` holds `(line, key)` for each record. Keys must be public (ids or texts of the public test
    inputs), never gold values. The first MAX_IDS_LISTED of each kind are named, the rest counted.
    """
    show = describe or (lambda key: f"{field} {quote(str(key))}")
    a_field = f"{'an' if field[:1] in 'aeiou' else 'a'} {field}"
    expected_set = set(expected)
    first_line: dict[Hashable, int] = {}
    duplicates: list[Problem] = []
    unknown: list[Problem] = []
    n_duplicates = n_unknown = 0
    for line, key in found:
        if key not in expected_set:
            n_unknown += 1
            if n_unknown <= MAX_IDS_LISTED:
                unknown.append(Problem(line, field, f"{show(key)} is not in the {split} set"))
        elif key in first_line:
            n_duplicates += 1
            if n_duplicates <= MAX_IDS_LISTED:
                message = f"{show(key)} already appeared on line {first_line[key]}; give one line per row"
                duplicates.append(Problem(line, field, message))
        else:
            first_line[key] = line
    problems = duplicates
    if n_duplicates > MAX_IDS_LISTED:
        problems.append(
            Problem(
                None,
                field,
                f"{n_duplicates:,} lines repeat {a_field} in total (the first {MAX_IDS_LISTED} are listed)",
            )
        )
    problems += unknown
    if n_unknown > MAX_IDS_LISTED:
        problems.append(
            Problem(
                None,
                field,
                f"{n_unknown:,} lines name {a_field} that is not in the {split} "
                f"set (the first {MAX_IDS_LISTED} are listed)",
            )
        )
    missing = [key for key in expected if key not in first_line]
    if missing:
        named = ", ".join(show(key) for key in missing[:MAX_IDS_LISTED])
        more = f" (the first {MAX_IDS_LISTED} are listed)" if len(missing) > MAX_IDS_LISTED else ""
        message = f"{len(missing):,} {split} rows have no prediction{more}: {named}"
        problems.append(Problem(None, field, message))
    return problems
