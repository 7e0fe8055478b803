"""Convert the published COLD and ToxiCN releases into our reference JSONL (one file per split).

``import_dataset(dataset, path, out_dir)`` reads a file, or every matching file directly inside a folder
(not sub-folders: ToxiCN's repository also holds lexicon JSON files), and writes ``<split>.jsonl`` files
of ``{"id", "text", "label", <breakdown fields>}``. Nothing is written unless every row is valid; errors
name the file, the physical line and the column.

- COLD (``thu-coai/COLDataset``, files in its ``COLDataset/`` sub-folder): CSV
  ``,split,topic,label[,fine-grained-label],TEXT`` (the first column an unnamed index, ignored). Split from
  the ``split`` column. Breakdowns: ``topic``; ``fine_label`` from the test split's fine-grained label
  (0 other non-offensive, 1 attack individual, 2 attack group, 3 anti-bias).
- ToxiCN (``DUT-lujunyu/ToxiCN``): ``ToxiCN_1.0.csv`` at the repository root (``content, toxic,
  toxic_type, expression, target`` with ``target`` a six-place multi-hot string) or the JSON split files in
  ``ToxiCN_ex/ToxiCN/data/`` (an array of objects on one line, ``target`` a five-place list without the
  non-hate place). Also JSONL. Split from a ``split`` field, else from the file name (``test.json`` ->
  test), else ``all``. Breakdowns: ``toxic_type``, ``expression``, ``target_groups`` and ``topic``.

The summary lists ``warnings`` (not failures): rows whose split column disagrees with their file's name, no
test split, texts repeated within a split, test texts also in train/dev (``quality.split_warnings``).

Published files are CSV text, so codes there are read from digit strings ("1", also "1.0" as pandas writes
them); the strict number-only label policy applies to our own JSONL, not to these sources.
Ids are generated deterministically in file order: ``cold-test-00001``, ``toxicn-train-00042``, ...
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import bundle_info
from ..jsonl import ProblemList
from ..problems import InputError, Problem
from .fields import EXPRESSIONS, FINE_LABELS, TARGET_GROUPS, TOXIC_TYPES
from .quality import split_warnings

_GROUP_ALIASES = {
    "lgbtq": "LGBTQ",
    "lgbt": "LGBTQ",
    "region": "Region",
    "sexism": "Sexism",
    "racism": "Racism",
    "others": "others",
    "other": "others",
    "non-hate": "non-hate",
    "nonhate": "non-hate",
    "none": "non-hate",
}
_SPLITS = {"train": "train", "dev": "dev", "val": "dev", "valid": "dev", "validation": "dev", "test": "test"}
_SPLIT_ORDER = ("train", "dev", "test")
_CODE = re.compile(r"^\s*(-?\d+)(?:\.0*)?\s*$")

DATASETS = ("cold", "toxicn")


def import_dataset(dataset: str, path: Path, out_dir: Path) -> dict[str, Any]:  # noqa: C901
    """Convert ``path`` and write ``out_dir/<split>.jsonl``; returns a JSON-ready summary.

    Raises InputError (every problem, line-numbered) before writing anything when a row is malformed.
    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; expected one of {', '.join(DATASETS)}")
    path = Path(path)
    suffixes = (".csv",) if dataset == "cold" else (".csv", ".json", ".jsonl")
    files = _source_files(path, suffixes)
    problems = ProblemList()
    splits: dict[str, list[dict[str, Any]]] = {}
    warnings: list[str] = []
    untold: list[str] = []  # ToxiCN hate rows whose target group the file cannot tell
    for file in files:
        if dataset == "cold":
            records = _cold_records(file, problems)
        else:
            records = _toxicn_records(file, problems, untold)
        named = _SPLITS.get(file.stem.strip().lower())
        per_file: Counter[str] = Counter()
        for split, record in records:
            per_file[split] += 1
            rows = splits.setdefault(split, [])
            record = {"id": None, **record}
            rows.append(record)
        disagree = sum(n for split, n in per_file.items() if named is not None and split != named)
        if disagree:
            says = ", ".join(f"{n:,} say {split}" for split, n in sorted(per_file.items()) if split != named)
            warnings.append(
                f"{file.name}: {disagree:,} of {sum(per_file.values()):,} rows disagree with the "
                f"file name ({says}); rows go where their split column says"
            )
    if untold:
        warnings.append(
            f"{len(untold):,} hate rows have an all-zero target, so their target group cannot be told "
            f"({', '.join(untold[:10])}{', ...' if len(untold) > 10 else ''}); they are left out of the "
            "target_groups breakdown (the JSON release gives their groups)"
        )
    if problems.total:
        raise InputError(list(problems), problems.total)
    if not any(splits.values()):
        raise InputError([Problem(None, None, f"no rows found in {path}")])

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    warnings += split_warnings({split: [r["text"] for r in rows] for split, rows in splits.items()})
    summary: dict[str, Any] = {
        "dataset": dataset,
        "sources": [str(f) for f in files],
        "splits": {},
        "toxic": {},
        "files": [],
        "warnings": warnings,
    }
    for split in sorted(splits, key=lambda s: (_SPLIT_ORDER.index(s) if s in _SPLIT_ORDER else 9, s)):
        rows = splits[split]
        width = max(5, len(str(len(rows))))
        for k, row in enumerate(rows, start=1):
            row["id"] = f"{dataset}-{split}-{k:0{width}d}"
        target = out_dir / f"{split}.jsonl"
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        summary["splits"][split] = len(rows)
        summary["toxic"][split] = sum(r["label"] for r in rows)
        summary["files"].append(str(target))
    # Both releases publish their test labels: a board on them is self-reported, not held out (§1, §5).
    info = bundle_info.write(out_dir, dataset=dataset, test_status="public", source=f"{dataset} release")
    summary["files"].append(str(info))
    summary["test_status"] = "public"
    return summary


def _source_files(path: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in suffixes)
        if not files:
            raise InputError([Problem(None, None, f"no {'/'.join(suffixes)} files directly inside {path}")])
        return files
    if not path.is_file():
        raise InputError([Problem(None, None, f"{path} does not exist")])
    return [path]


def _read_text(file: Path, problems: ProblemList) -> str | None:
    data = file.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        problems.add(
            Problem(
                line,
                None,
                f"{file.name}: not valid UTF-8 (first bad byte on line {line}); "
                "the published files are UTF-8",
            )
        )
        return None


def _code(value: object, allowed: dict[int, str] | range) -> int | None:
    """A whole-number code from an int, an integral float or a digit string; None when not allowed."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        code = value
    elif isinstance(value, float) and value.is_integer():
        code = int(value)
    elif isinstance(value, str) and (m := _CODE.match(value)):
        code = int(m.group(1))
    else:
        return None
    return code if code in allowed else None


def _show(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return json.dumps(text[:40], ensure_ascii=False)


# --- COLD ------------------------------------------------------------------------------------------


def _csv_rows(file: Path, problems: ProblemList) -> Iterator[tuple[int, dict[str, str]]]:
    """(first physical line, {column: value}) per CSV record; header names are stripped."""
    text = _read_text(file, problems)
    if text is None:
        return
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        problems.add(Problem(None, None, f"{file.name}: the file is empty"))
        return
    except csv.Error as error:
        problems.add(Problem(1, None, f"{file.name}: unreadable CSV header ({error})"))
        return
    end = reader.line_num
    while True:
        start = end + 1
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            problems.add(Problem(start, None, f"{file.name}: unreadable CSV ({error})"))
            return
        end = reader.line_num
        if not record or (len(record) == 1 and not record[0].strip()):
            continue  # blank line
        if len(record) != len(header):
            problems.add(
                Problem(
                    start, None, f"{file.name}: row has {len(record)} fields but the header has {len(header)}"
                )
            )
            continue
        yield start, dict(zip(header, record, strict=True))


def _require_columns(file: Path, columns: set[str], needed: tuple[str, ...], problems: ProblemList) -> bool:
    missing = [c for c in needed if c not in columns]
    if missing:
        problems.add(
            Problem(
                1,
                None,
                f"{file.name}: missing column(s) {', '.join(missing)}; found "
                f"{', '.join(sorted(c or '(unnamed)' for c in columns))}",
            )
        )
    return not missing


def _cold_records(file: Path, problems: ProblemList) -> Iterator[tuple[str, dict[str, Any]]]:  # noqa: C901
    checked = False
    for line, row in _csv_rows(file, problems):
        if not checked:
            checked = True
            if not _require_columns(file, set(row), ("split", "topic", "label", "TEXT"), problems):
                return
        bad = False

        def fail(column: str, message: str, line: int = line) -> None:
            nonlocal bad
            bad = True
            problems.add(Problem(line, column, f"{file.name}: {message}"))

        split = _SPLITS.get(row["split"].strip().lower())
        if split is None:
            fail("split", f"split must be train, dev or test; got {_show(row['split'])}")
        label = _code(row["label"], range(2))
        if label is None:
            fail("label", f"label must be 0 or 1; got {_show(row['label'])}")
        text = row["TEXT"]
        if not text.strip():
            fail("TEXT", "TEXT is empty")
        record: dict[str, Any] = {"text": text, "label": label}
        topic = row["topic"].strip()
        if topic:
            record["topic"] = topic
        fine = (row.get("fine-grained-label") or "").strip()
        if fine:
            code = _code(fine, FINE_LABELS)
            if code is None:
                fail("fine-grained-label", f"fine-grained-label must be 0, 1, 2 or 3; got {_show(fine)}")
            else:
                record["fine_label"] = FINE_LABELS[code]
        if not bad and split is not None:
            yield split, record


# --- ToxiCN ----------------------------------------------------------------------------------------


def _json_records(file: Path, problems: ProblemList) -> Iterator[tuple[int, object, str]]:  # noqa: C901
    """(line, object, where) from a JSON array or JSONL; line = where the object starts, ``where`` names
    the array item (the published test.json is a single line, so the line alone would not help)."""
    text = _read_text(file, problems)
    if text is None:
        return
    decoder = json.JSONDecoder()
    stripped = text.lstrip()
    if file.suffix.lower() == ".jsonl" or not stripped.startswith("["):
        for no, raw in enumerate(text.splitlines(), start=1):
            if raw.strip():
                try:
                    yield no, json.loads(raw), ""
                except ValueError as error:
                    problems.add(Problem(no, None, f"{file.name}: not valid JSON ({error})"))
        return
    pos = text.index("[") + 1
    item = 0
    line, counted = 1, 0  # the line number at offset `counted`, advanced incrementally (linear time)

    def line_at(offset: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, offset)
        counted = offset
        return line

    # Walk the array item by item so each error can name the line the item starts on.
    while True:
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == "]":
            return
        try:
            obj, end = decoder.raw_decode(text, pos)
        except ValueError as error:
            problems.add(Problem(line_at(pos), None, f"{file.name}: not valid JSON ({error})"))
            return
        item += 1
        yield line_at(pos), obj, f" item {item}"
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos >= len(text) or text[pos] != "]":
            problems.add(Problem(line_at(pos), None, f"{file.name}: expected ',' or ']' between array items"))
            return


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _target_groups(value: object) -> list[str] | None:
    """Group names from a multi-hot list (5 or 6 places), its string form, or a list of names."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                value = json.loads(stripped)
            except ValueError:
                return None
        else:
            value = [v for v in re.split(r"[,|;]", stripped) if v.strip()]
    if not isinstance(value, list):
        return None
    if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        if len(value) not in (5, 6) or any(v not in (0, 1) for v in value):
            return None
        groups = [TARGET_GROUPS[k] for k, v in enumerate(value) if v == 1]
        return groups or ["non-hate"]  # the JSON release drops the sixth (non-hate) place
    if all(isinstance(v, str) for v in value):
        groups = []
        for v in value:
            name = _GROUP_ALIASES.get(v.strip().lower().replace("_", "-"))
            if name is None:
                return None
            groups.append(name)
        return list(dict.fromkeys(groups)) or ["non-hate"]
    return None


def _all_zero(value: object) -> bool:
    """A multi-hot target (list or its string form) with no place set."""
    if isinstance(value, str):
        try:
            value = json.loads(value.strip())
        except ValueError:
            return False
    return isinstance(value, list) and bool(value) and all(v == 0 for v in value)


def _toxicn_records(  # noqa: C901
    file: Path, problems: ProblemList, untold: list[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Records of one ToxiCN file; ``untold`` gets "<file> line <n>" for each hate row whose all-zero
    target names no group (left without ``target_groups``; the importer warns)."""
    if file.suffix.lower() == ".csv":
        items: Iterator[tuple[int, object, str]] = ((ln, row, "") for ln, row in _csv_rows(file, problems))
    else:
        items = _json_records(file, problems)
    default_split = _SPLITS.get(file.stem.strip().lower(), "all")
    for line, obj, where in items:
        source = f"{file.name}{where}"
        if not isinstance(obj, dict):
            problems.add(
                Problem(
                    line,
                    None,
                    f"{source}: each item must be an object with content, toxic, "
                    "toxic_type, expression and target",
                )
            )
            continue
        bad = False

        def fail(column: str, message: str, line: int = line, source: str = source) -> None:
            nonlocal bad
            bad = True
            problems.add(Problem(line, column, f"{source}: {message}"))

        text_key = next((k for k in ("content", "text", "TEXT") if k in obj), None)
        text = obj.get(text_key) if text_key else None
        if not isinstance(text, str) or not text.strip():
            fail(text_key or "content", "content (the text) is missing or empty")
        label = _code(obj.get("toxic"), range(2))
        if label is None:
            fail("toxic", f"toxic must be 0 or 1; got {_show(obj.get('toxic'))}")
        record: dict[str, Any] = {"text": text, "label": label}
        for key, names in (("toxic_type", TOXIC_TYPES), ("expression", EXPRESSIONS)):
            if obj.get(key) in (None, ""):
                continue
            code = _code(obj[key], names)
            if code is None:
                fail(key, f"{key} must be one of {', '.join(map(str, names))}; got {_show(obj[key])}")
            else:
                record[key] = names[code]
        if obj.get("target") not in (None, ""):
            groups = _target_groups(obj["target"])
            if groups is None:
                fail(
                    "target",
                    "target must be a multi-hot list over (LGBTQ, Region, Sexism, Racism, others"
                    f"[, non-hate]) or a list of those names; got {_show(obj['target'])}",
                )
            elif groups == ["non-hate"] and record.get("toxic_type") == "hate" and _all_zero(obj["target"]):
                # The CSV writes an all-zero target on a few hate rows (ToxiCN_1.0.csv lines 957, 8967,
                # 9944) whose group the JSON release gives (Racism, Racism, Region + Racism): the CSV
                # cannot tell which, so the row is left out of the breakdown rather than called non-hate.
                untold.append(f"{source} line {line}")
            else:
                record["target_groups"] = groups
        topic = obj.get("topic")
        if isinstance(topic, str) and topic.strip():
            record["topic"] = topic.strip()
        split = default_split
        if obj.get("split") not in (None, ""):
            found = _SPLITS.get(str(obj["split"]).strip().lower())
            if found is None:
                fail("split", f"split must be train, dev or test; got {_show(obj['split'])}")
            else:
                split = found
        if not bad:
            yield split, record
