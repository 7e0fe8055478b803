"""The one writer of store JSON. Every JSON file a store holds is encoded here, in one of three shapes:

- `pretty(obj)`: `json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2)` plus a newline, written by
  orjson (leaderboard.json at 3,000 rows: 363 ms -> 18 ms) with the bytes kept identical to json's, so
  published files do not change under anyone who diffs or hashes them;
- `record(obj)`: the same with `indent=1` (submission records, quota indices, re-score chunks: private
  files whose bytes content-address them in LocalStore, kept as they were);
- `line(obj)`: one sorted-key line plus a newline (`changelog.jsonl`, subset sizes);
- `compact(obj)`: orjson's compact sorted-key bytes, for files this project both writes and reads in bulk
  (the record index), where only size and speed matter.
"""

from __future__ import annotations

import hashlib
import json
import re

import orjson

# Floats that orjson spells differently from json (Python's repr): 0.00005 and 5.96e-8 where json writes
# 5e-05 and 5.96e-08. In indented output a number token is followed by "," or a newline, which a string's
# content never is (it ends with a quote first), and is preceded by a space (after ": " or the indent).
_EXPONENT = re.compile(rb"e-\d+(?=,?\n)")
_TINY_DECIMAL = re.compile(rb"0\.0000\d*(?=,?\n)")
_NUMBER_BYTES = frozenset(b"0123456789.-e")
_PRETTY = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def _respell_floats(text: bytes) -> bytes:
    """orjson's indented output with every float that json spells differently re-spelled with `repr`
    (both write the shortest round-trip digits, so `float()` of orjson's token is the same float)."""
    ends = sorted({m.end() for pattern in (_EXPONENT, _TINY_DECIMAL) for m in pattern.finditer(text)})
    parts, last = [], 0
    for end in ends:
        start = end
        while start > 0 and text[start - 1] in _NUMBER_BYTES:
            start -= 1
        if start <= last or text[start - 1] != ord(" "):  # not a whole number token
            continue
        parts += [text[last:start], repr(float(text[start:end])).encode()]
        last = end
    return b"".join([*parts, text[last:]]) if parts else text


def _stdlib(obj, indent: int | None) -> bytes:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=indent).encode() + b"\n"


def pretty(obj) -> bytes:
    """Exactly `json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2)` plus a newline.

    orjson spells every value as json does except floats that need an exponent or are below 1e-4 in
    magnitude, which are re-spelled (`_respell_floats`), and NaN/infinity, which store files never hold
    (boards keep finite numbers only, else None; results are dumped with allow_nan=False).
    """
    try:
        fast = orjson.dumps(obj, option=_PRETTY)
    except TypeError:  # integers beyond 64 bits, non-string keys: json knows them
        return _stdlib(obj, 2)
    return _respell_floats(fast)


def record(obj) -> bytes:
    """`json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=1)` plus a newline."""
    return _stdlib(obj, 1)


def line(obj) -> bytes:
    """One line: `json.dumps(obj, ensure_ascii=False, sort_keys=True)` plus a newline."""
    return _stdlib(obj, None)


def compact(obj) -> bytes:
    """orjson's compact bytes with sorted keys (valid JSON; not json.dumps's spelling)."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


def stamp(data: bytes) -> str:
    """A change stamp of stored bytes (a prefix of their sha256): names a version of a file that a reader
    can keep and compare, not a proof of its content."""
    return hashlib.sha256(data).hexdigest()[:16]
