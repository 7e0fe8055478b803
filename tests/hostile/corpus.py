"""Generator of crafted hostile uploads (prediction files and submission metadata).

Nothing large is committed: every file is built at test time from the track's *public* inputs
(`[{"id", "text"}]`), either as bytes (`build_bytes`) or streamed to disk in chunks (`write_case`), so the
50 MB line and the ten-million-line file never need to sit twice in memory.

Each `FileCase` says what it attacks and what must happen at the scorer's gold-independent validation:

- ``reject``: `check_predictions` returns ``valid=False`` with at least one problem (line-numbered when
  `line_numbered` is set), the CLI exits non-zero without a traceback, the REST API answers 4xx.
- ``accept``: a tolerated quirk (BOM, CRLF, U+2028 inside a string): the file must validate.
- ``clean``: either answer is acceptable, but it must be a clean answer (no exception, no 5xx).

`MetaCase`s pair a valid file with hostile metadata (model names, URLs) for the REST level.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

MiB = 1024 * 1024
KiB = 1024
# Mirrors scoring/limits.py (kept literal so the corpus can be generated without importing the scorer).
MAX_FILE_BYTES = 64 * MiB
MAX_LINE_BYTES = 64 * KiB

SPAN_TRACKS = frozenset({"cntp"})
TOXITRACE = ("cold", "toxicn", "cntp")
ALL_TRACKS = ("varm", *TOXITRACE)

Inputs = list[dict]
Chunks = Iterator[bytes]


@dataclass(frozen=True)
class FileCase:
    """One crafted predictions upload."""

    name: str
    what: str
    build: Callable[[Inputs, str], Iterable[bytes]]
    expect: str = "reject"  # "reject" | "accept" | "clean"
    tracks: tuple[str, ...] = ALL_TRACKS
    heavy: bool = False  # tens of MB: run in its own subprocess, not in the fast in-process loop
    line_numbered: bool = True  # the first problem must carry a line number
    tags: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class MetaCase:
    """A valid predictions file submitted with one hostile metadata field (REST level)."""

    name: str
    what: str
    metadata: dict
    expect: str = "reject_or_inert"  # "reject" (4xx) | "reject_or_inert" (4xx, or stored verbatim and inert)
    identity: str | None = None  # hostile submitter identity (header), None for the default


# ---------------------------------------------------------------- valid baselines


def valid_row(track: str, item: dict) -> dict:
    """A structurally valid prediction for one public input (its content need not be right)."""
    if track == "varm":
        return {"id": item["id"], "output": "分析：这是一条用于结构校验的占位输出。"}
    row: dict = {"id": item["id"], "label": 0}
    if track in SPAN_TRACKS:
        row["spans"] = []
    return row


def _line(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


def valid_lines(track: str, inputs: Inputs) -> list[bytes]:
    return [_line(valid_row(track, item)) for item in inputs]


def valid_file(track: str, inputs: Inputs) -> bytes:
    """A complete, valid predictions file for `inputs`."""
    return b"".join(valid_lines(track, inputs))


def _with_line(track: str, inputs: Inputs, index: int, raw: bytes) -> bytes:
    """The valid file with physical line `index` (0-based) replaced by `raw` (no newline)."""
    lines = valid_lines(track, inputs)
    lines[min(index, len(lines) - 1)] = raw + b"\n"
    return b"".join(lines)


def _with_row(track: str, inputs: Inputs, index: int, **changes: object) -> bytes:
    row = valid_row(track, inputs[min(index, len(inputs) - 1)])
    for key, value in changes.items():
        if value is _DROP:
            row.pop(key, None)
        else:
            row[key] = value
    return _with_line(track, inputs, index, json.dumps(row, ensure_ascii=False).encode())


_DROP = object()


def _payload_key(track: str) -> str:
    return "output" if track == "varm" else "label"


# ---------------------------------------------------------------- builders


def _one(data: bytes) -> Iterable[bytes]:
    return [data]


def _gzip_bomb() -> bytes:
    """~1 GiB of zeros as 1024 concatenated gzip members (~1 MB on disk), built in milliseconds."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(bytes(MiB))
    return buf.getvalue() * 1024


def _zip_bomb(inputs: Inputs, track: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("predictions.jsonl", valid_file(track, inputs) + b"\n" * (64 * MiB))
    return buf.getvalue()


def _single_huge_line(total: int) -> Chunks:
    """One JSON object line of `total` bytes, streamed: {"id": "x", "output": "aaaa…"}."""
    head, tail = b'{"id": "x", "output": "', b'"}\n'
    yield head
    remaining = total - len(head) - len(tail)
    block = b"a" * MiB
    while remaining > 0:
        yield block[: min(remaining, MiB)]
        remaining -= MiB
    yield tail


def _many_lines(count: int, line: bytes) -> Chunks:
    per = 100_000
    block = line * per
    for _ in range(count // per):
        yield block
    yield line * (count % per)


def _oversized_file(inputs: Inputs, track: str) -> Chunks:
    """A file of MAX_FILE_BYTES + 1 bytes made of valid-looking short lines."""
    body = valid_file(track, inputs)
    yield body
    remaining = MAX_FILE_BYTES + 1 - len(body)
    filler = b"\n" * MiB
    while remaining > 0:
        yield filler[: min(remaining, MiB)]
        remaining -= MiB


def _nested(depth: int, opener: bytes, closer: bytes) -> bytes:
    return opener * depth + closer * depth


def _utf16(inputs: Inputs, track: str) -> bytes:
    return valid_file(track, inputs).decode().encode("utf-16")


def _gbk(inputs: Inputs, track: str) -> bytes:
    """Valid content re-encoded as GBK; the Chinese output makes it non-UTF-8."""
    rows = [valid_row(track, item) for item in inputs]
    rows[0] = {**rows[0], "note": "中文注释：该文件以国标编码保存"}
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("gbk")


def _bom_valid(inputs: Inputs, track: str) -> bytes:
    return b"\xef\xbb\xbf" + valid_file(track, inputs)


def _crlf_valid(inputs: Inputs, track: str) -> bytes:
    return valid_file(track, inputs).replace(b"\n", b"\r\n")


def _u2028_valid(inputs: Inputs, track: str) -> bytes:
    """Literal U+2028 / U+0085 inside a JSON string: valid JSON, and not a JSONL line break."""
    lines = valid_lines(track, inputs)
    row = valid_row(track, inputs[0])
    row["note"] = "a\u2028b\u0085c\u2029d\x1ce"
    lines[0] = json.dumps(row, ensure_ascii=False).encode() + b"\n"
    return b"".join(lines)


def _all_lines_bad(inputs: Inputs, track: str) -> bytes:
    """Every line invalid and 5,000 lines: the report must cap the list and count the rest."""
    return b"not json\n" * 5000


def _duplicate_ids(inputs: Inputs, track: str) -> bytes:
    lines = valid_lines(track, inputs)
    return b"".join(lines + lines[:3])


def _missing_ids(inputs: Inputs, track: str) -> bytes:
    return b"".join(valid_lines(track, inputs)[: max(1, len(inputs) // 2)])


def _unknown_ids(inputs: Inputs, track: str) -> bytes:
    extra = [valid_row(track, {"id": f"no-such-id-{i}", "text": ""}) for i in range(3)]
    return valid_file(track, inputs) + b"".join(_line(r) for r in extra)


def _huge_unknown_ids(inputs: Inputs, track: str) -> bytes:
    """300 unknown ids of 10 KB each: the report must stay small (ids truncated, list capped)."""
    extra = b"".join(
        _line(valid_row(track, {"id": f"{i:05d}" + "Z" * 10_000, "text": ""})) for i in range(300)
    )
    return valid_file(track, inputs) + extra


def _text_keyed_unknown(inputs: Inputs, track: str) -> bytes:
    rows = [{"text": item["text"], "output": "分析：占位。"} for item in inputs]
    rows[0] = {"text": "这段文本不在测试集中" * 3, "output": "分析：占位。"}
    return b"".join(_line(r) for r in rows)


def _bool_label(inputs: Inputs, track: str) -> bytes:
    return _with_row(track, inputs, 1, label=True)


CASES_LIST: list[FileCase] = []


def _case(name: str, what: str, build: Callable[[Inputs, str], Iterable[bytes] | bytes], **kw) -> None:
    def as_chunks(inputs: Inputs, track: str) -> Iterable[bytes]:
        out = build(inputs, track)
        return [out] if isinstance(out, bytes | bytearray) else out

    CASES_LIST.append(FileCase(name=name, what=what, build=as_chunks, **kw))


# -- encoding and framing
_case("empty_file", "0-byte file", lambda i, t: b"", line_numbered=False)
_case("blank_lines_only", "only newlines and spaces", lambda i, t: b"\n  \n\t\n" * 100, line_numbered=False)
_case("gbk_encoded", "Chinese content saved as GBK, not UTF-8", _gbk, line_numbered=False)
_case("utf16_bom", "UTF-16 with BOM", _utf16, line_numbered=False)
_case("bom_valid", "UTF-8 BOM then a valid file (BOM is tolerated)", _bom_valid, expect="accept")
_case(
    "bom_mid_file",
    "a second UTF-8 BOM at the start of line 2",
    lambda i, t: _with_line(t, i, 1, b"\xef\xbb\xbf" + json.dumps(valid_row(t, i[1])).encode()),
)
_case("crlf_valid", "CRLF line endings (tolerated)", _crlf_valid, expect="accept")
_case(
    "u2028_in_string", "literal U+2028/U+0085/U+2029/FS inside a JSON string", _u2028_valid, expect="accept"
)
_case(
    "nul_byte_in_line",
    "a raw NUL byte inside line 2",
    lambda i, t: _with_line(t, i, 1, json.dumps(valid_row(t, i[1])).encode()[:-1] + b"\x00}"),
)
_case("nul_file", "1 MiB of NUL bytes", lambda i, t: bytes(MiB), line_numbered=False)
_case(
    "invalid_utf8_byte",
    "a lone 0xFF byte in line 3",
    lambda i, t: _with_line(t, i, 2, b'{"id": "\xff"}'),
    line_numbered=False,
)
_case(
    "utf8_surrogate_bytes",
    "CESU-style encoded surrogate (ED A0 80) in line 2",
    lambda i, t: _with_line(t, i, 1, b'{"id": "\xed\xa0\x80"}'),
    line_numbered=False,
)
_case(
    "lone_surrogate_escape",
    "valid JSON whose id is a lone surrogate escape \\ud800",
    lambda i, t: _with_line(t, i, 1, b'{"id": "\\ud800", "output": "x", "label": 0}'),
    expect="reject",
)
_case(
    "gzip_bomb",
    "1 GiB of zeros gzipped (~1 MB): must be refused as not UTF-8 JSONL, undecompressed",
    lambda i, t: _gzip_bomb(),
    line_numbered=False,
)
_case("zip_archive", "a zip holding the predictions", _zip_bomb, line_numbered=False)
_case(
    "pdf_header",
    "binary junk with a PDF header",
    lambda i, t: b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(range(256)) * 64,
    line_numbered=False,
)
# -- JSON syntax
_case(
    "invalid_json_line", "truncated object on line 3", lambda i, t: _with_line(t, i, 2, b'{"id": "x", "out')
)
_case("trailing_comma", "trailing comma in line 2", lambda i, t: _with_line(t, i, 1, b'{"id": "x",}'))
_case(
    "single_quotes", "Python-repr line with single quotes", lambda i, t: _with_line(t, i, 1, b"{'id': 'x'}")
)
_case(
    "json_array_file",
    "the whole file is one JSON array",
    lambda i, t: json.dumps([valid_row(t, x) for x in i], ensure_ascii=False).encode(),
)
_case(
    "non_object_lines",
    "lines that are a string, a number, null, a list",
    lambda i, t: valid_file(t, i) + b'"just a string"\n42\nnull\n[1, 2]\n',
)
_case(
    "deep_nested_array",
    "output nested 20,000 arrays deep (recursion bomb)",
    lambda i, t: _with_line(t, i, 1, b'{"id": "x", "output": ' + _nested(20_000, b"[", b"]") + b"}"),
)
_case(
    "deep_nested_object",
    "10,000 nested objects",
    lambda i, t: _with_line(t, i, 1, b'{"id": "x", "a": ' + b'{"a": ' * 10_000 + b"1" + b"}" * 10_000 + b"}"),
)
_case(
    "huge_int_digits",
    "label/id is an integer with 50,000 digits (int max_str_digits)",
    lambda i, t: _with_line(
        t, i, 1, b'{"id": ' + b"9" * 50_000 + b', "label": ' + b"9" * 50_000 + b', "output": "x"}'
    ),
)
_case(
    "huge_float",
    "1e999999 (inf) as label and id",
    lambda i, t: _with_line(t, i, 1, b'{"id": 1e999999, "label": 1e999999, "output": 1e999999}'),
)
_case(
    "nan_literal",
    "NaN / Infinity literals",
    lambda i, t: _with_line(t, i, 1, b'{"id": NaN, "label": NaN, "output": Infinity}'),
)
_case(
    "duplicate_json_keys",
    "the same key twice in one object",
    lambda i, t: _with_line(
        t, i, 1, ('{{"id": "{}", "id": "zz-unknown", "output": "x", "label": 0}}'.format(i[1]["id"])).encode()
    ),
)
_case(
    "escaped_nul_in_string",
    "\\u0000 and ANSI escapes inside the payload string",
    lambda i, t: _with_row(t, i, 1, output="a\u0000b\x1b[31mred\x1b[0m", label="\u0000"),
    expect="clean",
)
# -- size limits
_case(
    "line_over_limit",
    f"one line of {MAX_LINE_BYTES + 1} bytes",
    lambda i, t: _with_line(t, i, 1, b'{"id": "x", "output": "' + b"a" * (MAX_LINE_BYTES - 24) + b'"}'),
)
_case(
    "line_at_limit_minus",
    "one line just under the 64 KiB limit (long but legal line)",
    lambda i, t: _with_row(t, i, 1, output="分" * ((MAX_LINE_BYTES - 200) // 3)),
    expect="clean",
)
_case("single_50mb_line", "a single 50 MB line", lambda i, t: _single_huge_line(50 * MiB), heavy=True)
_case(
    "file_over_limit",
    f"{MAX_FILE_BYTES + 1} bytes (one over the upload limit)",
    _oversized_file,
    heavy=True,
    line_numbered=False,
)
_case(
    "ten_million_lines",
    "10,000,000 lines of '{}' (30 MB)",
    lambda i, t: _many_lines(10_000_000, b"{}\n"),
    heavy=True,
)
_case("all_lines_bad", "5,000 invalid lines (error cap)", _all_lines_bad)
# -- ids
_case("duplicate_ids", "the first three rows repeated", _duplicate_ids)
_case("missing_ids", "only half of the test rows", _missing_ids, line_numbered=False)
_case("unknown_ids", "three ids that are not in the test set", _unknown_ids)
_case("huge_unknown_ids", "300 unknown ids of 10 KB each", _huge_unknown_ids)
_case("path_traversal_id", "id '../../etc/passwd'", lambda i, t: _with_row(t, i, 1, id="../../etc/passwd"))
_case(
    "html_id",
    "id '<script>alert(1)</script>'",
    lambda i, t: _with_row(t, i, 1, id="<script>alert(1)</script>"),
)
_case("null_id", "id null", lambda i, t: _with_row(t, i, 1, id=None))
_case("list_id", "id is a list (unhashable)", lambda i, t: _with_row(t, i, 1, id=[i[1]["id"]]))
_case("dict_id", "id is an object (unhashable)", lambda i, t: _with_row(t, i, 1, id={"id": i[1]["id"]}))
_case("int_id", "id is a number", lambda i, t: _with_row(t, i, 1, id=12345678), expect="clean")
_case("missing_id_key", "a row with neither id nor text", lambda i, t: _with_row(t, i, 1, id=_DROP))
_case(
    "text_keyed_unknown",
    "VARM rows keyed by text, one text not in the test set",
    _text_keyed_unknown,
    tracks=("varm",),
)
# -- payload types (VARM output)
for _label, _value in [
    ("int", 7),
    ("null", None),
    ("list", ["分析：x"]),
    ("dict", {"text": "x"}),
    ("bool", True),
]:
    _case(
        f"varm_output_{_label}",
        f"VARM output is {_label}",
        lambda i, t, v=_value: _with_row(t, i, 1, output=v),
        tracks=("varm",),
    )
_case(
    "varm_output_missing",
    "VARM row without output",
    lambda i, t: _with_row(t, i, 1, output=_DROP),
    tracks=("varm",),
)
# -- payload types (ToxiTrace label and spans)
for _label, _value in [
    ("string", "1"),
    ("two", 2),
    ("negative", -1),
    ("float", 0.5),
    ("null", None),
    ("list", [1]),
]:
    _case(
        f"label_{_label}",
        f"ToxiTrace label is {_value!r}",
        lambda i, t, v=_value: _with_row(t, i, 1, label=v),
        tracks=TOXITRACE,
    )
_case(
    "label_bool",
    "ToxiTrace label is true (bool is an int subclass in Python)",
    _bool_label,
    tracks=TOXITRACE,
    expect="clean",
)
_case(
    "label_missing",
    "ToxiTrace row without label",
    lambda i, t: _with_row(t, i, 1, label=_DROP),
    tracks=TOXITRACE,
)
for _label, _value in [
    ("string", "abc"),
    ("reversed", [[5, 2]]),
    ("out_of_range", [[0, 10**9]]),
    ("negative", [[-3, 2]]),
    ("wrong_arity", [[0, 1, 2]]),
    ("non_int", [["a", "b"]]),
    ("float_bounds", [[0.5, 2.5]]),
    ("not_in_text", ["这个片段不存在于原文之中的字符串"]),
    ("dict", {"start": 0, "end": 1}),
]:
    _case(
        f"spans_{_label}",
        f"spans given as {json.dumps(_value)[:40]}",
        lambda i, t, v=_value: _with_row(t, i, 1, spans=v),
        tracks=tuple(SPAN_TRACKS),
    )
_case(
    "spans_huge_list",
    "5,000 repeated spans in one row (a span set: duplicates are harmless, must stay cheap)",
    lambda i, t: _with_row(t, i, 1, spans=[[0, 1]] * 5000),
    tracks=tuple(SPAN_TRACKS),
    expect="clean",
)

CASES: dict[str, FileCase] = {c.name: c for c in CASES_LIST}


def file_cases(track: str, *, heavy: bool | None = None) -> list[FileCase]:
    """The file cases that apply to `track` (heavy ones only, none, or all when `heavy` is None)."""
    return [c for c in CASES_LIST if track in c.tracks and (heavy is None or c.heavy == heavy)]


def chunks(case: FileCase, inputs: Inputs, track: str) -> Iterable[bytes]:
    return case.build(inputs, track)


def build_bytes(case: FileCase, inputs: Inputs, track: str) -> bytes:
    """The whole upload in memory (fine for every case; heavy ones are 30–65 MB)."""
    return b"".join(case.build(inputs, track))


def write_case(case: FileCase, inputs: Inputs, track: str, path: Path) -> Path:
    """Stream the upload to `path` chunk by chunk; returns `path`."""
    with open(path, "wb") as fh:
        for chunk in case.build(inputs, track):
            fh.write(chunk)
    return path


# ---------------------------------------------------------------- metadata (REST level)

LONG = "A" * 10_240

META_CASES: list[MetaCase] = [
    MetaCase(
        "name_script_tag", "model name with a <script> tag", {"model_name": "<script>alert(1)</script>"}
    ),
    MetaCase(
        "name_img_onerror",
        "model name with an <img onerror>",
        {"model_name": '<img src=x onerror="alert(1)">'},
    ),
    MetaCase(
        "name_markdown_link",
        "model name with a markdown javascript: link",
        {"model_name": "[click](javascript:alert(1))"},
    ),
    MetaCase("name_dotdot", "model name '../../../etc/passwd'", {"model_name": "../../../etc/passwd"}),
    MetaCase("name_backslash", "model name with backslashes", {"model_name": "..\\..\\windows\\system32"}),
    MetaCase("name_slash", "model name with a path separator (org/model)", {"model_name": "org/model-7b"}),
    MetaCase(
        "name_control_chars",
        "model name with NUL, ESC and newline",
        {"model_name": "evil\x00name\x1b[2J\nINFO forged log line"},
        expect="reject",
    ),
    MetaCase("name_10kb", "model name of 10 KB", {"model_name": LONG}, expect="reject"),
    MetaCase("name_empty", "empty model name", {"model_name": ""}, expect="reject"),
    MetaCase("name_whitespace", "whitespace-only model name", {"model_name": " \t　 "}, expect="reject"),
    MetaCase(
        "name_rtl_override", "model name with a right-to-left override", {"model_name": "gpt\u202eevil"}
    ),
    MetaCase("name_not_string", "model name is a number", {"model_name": 12345}),
    MetaCase("org_html", "organisation with HTML", {"organisation": "<b onmouseover=alert(1)>ACME</b>"}),
    MetaCase(
        "paper_url_javascript", "paper_url javascript:", {"paper_url": "javascript:alert(1)"}, expect="reject"
    ),
    MetaCase(
        "code_url_javascript_case",
        "code_url JaVaScRiPt: with spaces",
        {"code_url": "  JaVaScRiPt:alert(document.cookie)"},
        expect="reject",
    ),
    MetaCase(
        "code_url_data",
        "code_url data:text/html",
        {"code_url": "data:text/html,<script>alert(1)</script>"},
        expect="reject",
    ),
    MetaCase(
        "paper_url_file", "paper_url file:///etc/passwd", {"paper_url": "file:///etc/passwd"}, expect="reject"
    ),
    MetaCase(
        "model_type_bogus", "model_type outside the allowed set", {"model_type": "<script>"}, expect="reject"
    ),
    MetaCase("setting_bogus", "setting outside the allowed set", {"setting": "../../x"}, expect="reject"),
    MetaCase("description_1mb", "description of 1 MB", {"description": "x" * MiB}, expect="reject"),
    MetaCase(
        "unknown_metadata_key",
        "an unknown metadata key that looks internal",
        {"status": "published", "verified": True, "is_baseline": True},
    ),
]


def meta_case_names() -> list[str]:
    return [c.name for c in META_CASES]
