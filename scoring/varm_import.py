"""Convert the VARM-Bench authors' release into a reference bundle (spec §1, "Release formats").

The authors' tools take a gold JSONL with exactly the 8 official keys and no `id`; the release has one
file per split (`train.jsonl`, `dev.jsonl`, `test.jsonl`, also `val`/`valid` for dev) or a single file.
``import_varm(path, out_dir)`` reads a single file (its split from the file name, else `test`) or the
split files directly inside a folder (plus `subsets/*.jsonl` and `subsets/q2/*.jsonl`, where the authors'
`evaluate_q2.py` looks, when present; the summary's `subsets_from` says which), and writes a bundle with
stable ids in file order (`varm-test-00001`, ...). A subset row must equal the test row with the same text
(an error naming both lines otherwise) and gets its id. Nothing is written unless every row is valid.

Blank gold targets (spec §1): kept as written unless ``fill_blank_targets`` is given; then rows whose
target is blank and whose target_type is 无明确对象 get target 无明确对象, and the summary says how many.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from . import bundle_info
from .problems import InputError, Problem
from .protocol import NO_TARGET
from .references import (
    SPLITS,
    BundleProblem,
    _gold_file,
    _in_file,
    _read_file,
    audit_key,
    blank_target_rows,
    cot_lacks_prefix,
    near_duplicate_pairs,
)

MAX_PAIRS_NAMED = 10  # a duplicate / leak warning names this many line pairs, then counts

SPLIT_NAMES = {
    "train": "train",
    "dev": "dev",
    "val": "dev",
    "valid": "dev",
    "validation": "dev",
    "test": "test",
}


def _split_of(path: Path) -> str | None:
    """The split a file's name names: `test.jsonl`, `varm_test.jsonl`, `dev.json` -> test, test, dev."""
    words = path.stem.lower().replace("-", "_").split("_")
    found = {SPLIT_NAMES[w] for w in words if w in SPLIT_NAMES}
    return found.pop() if len(found) == 1 else None


def _sources(path: Path) -> tuple[dict[str, Path], str]:
    if path.is_file():
        return {_split_of(path) or "test": path}, "a single gold file"
    if not path.is_dir():
        raise InputError([Problem(None, None, f"{path} does not exist")])
    files: dict[str, Path] = {}
    for file in sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in (".jsonl", ".json")):
        split = _split_of(file)
        if split is None:
            continue
        if split in files:
            raise InputError(
                [
                    Problem(
                        None,
                        None,
                        f"{files[split].name} and {file.name} both look like the {split} split; keep one",
                    )
                ]
            )
        files[split] = file
    if "test" not in files:
        raise InputError(
            [
                Problem(
                    None,
                    None,
                    f"{path} is a folder without a test split file: expected the "
                    "authors' split files (train/dev/test.jsonl) or one gold JSONL",
                )
            ]
        )
    return files, "a release folder"


def import_varm(path: Path, out_dir: Path, *, fill_blank_targets: bool = False) -> dict[str, Any]:  # noqa: C901
    path, out_dir = Path(path), Path(out_dir)
    sources, given = _sources(path)
    problems: list[Problem] = []
    splits: dict[str, list[dict[str, Any]]] = {}
    unprefixed: dict[str, list[int]] = {}  # lines whose gold cot lacks 分析： (accepted, as the authors do)
    lines_of: dict[str, list[int]] = {}  # per split, each row's line in its file
    for split in sorted(sources, key=SPLITS.index):
        records, found = _gold_file(sources[split], require_cot=True)
        problems += _in_file(found, sources[split].name)
        splits[split] = [dict(obj) for _, obj in records]
        unprefixed[split] = [line for line, obj in records if cot_lacks_prefix(obj)]
        lines_of[split] = [line for line, _ in records]
        if split == "test":
            test_lines = {id(row): line for row, (line, _) in zip(splits[split], records, strict=True)}
    if problems:
        raise InputError(problems[:200], total=len(problems))

    summary: dict[str, Any] = {
        "dataset": "varm",
        "given": given,
        "sources": {s: str(p) for s, p in sources.items()},
        "splits": {},
        "blank_targets": {},
        "filled_blank_targets": 0,
        "warnings": [],
        "files": [],
    }
    test_ids: dict[str, str] = {}
    line_of: dict[str, int] = {}  # test row id -> its line in the test file (named in subset errors)
    for split, rows in splits.items():
        summary["blank_targets"][split] = blank_target_rows(rows)
        for k, row in enumerate(rows, start=1):
            row.pop("id", None)
            row["id"] = f"varm-{split}-{k:05d}"
            if fill_blank_targets and not row["target"].strip() and row["target_type"] == NO_TARGET:
                row["target"] = NO_TARGET
                summary["filled_blank_targets"] += 1
            if split == "test":
                test_ids.setdefault(row["text"], row["id"])
                line_of[row["id"]] = test_lines[id(row)]
    test_name = sources["test"].name if "test" in sources else "test"
    subsets, used = _subsets(
        path if path.is_dir() else None,
        test_ids,
        splits.get("test", []),
        line_of,
        test_name,
        fill_blank_targets,
    )
    summary["subsets_from"] = used

    out_dir.mkdir(parents=True, exist_ok=True)
    for split, rows in splits.items():
        target = out_dir / f"{split}.jsonl"
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        summary["splits"][split] = len(rows)
        summary["files"].append(str(target))
    if subsets:
        shutil.rmtree(out_dir / "subsets", ignore_errors=True)
        (out_dir / "subsets").mkdir()
        for name, rows in subsets.items():
            target = out_dir / "subsets" / f"{name}.jsonl"
            target.write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
            )
            summary["files"].append(str(target))
    blank = sum(summary["blank_targets"].values())
    if blank and not fill_blank_targets:
        summary["warnings"].append(
            f"{blank:,} gold row(s) have a blank target; the official metrics count them as never "
            "target-correct (the authors' evaluate.py); --fill-blank-targets would write 无明确对象 for "
            "those whose target_type is 无明确对象 (the reference hash changes)"
        )
    elif summary["filled_blank_targets"]:
        summary["warnings"].append(
            f"filled {summary['filled_blank_targets']:,} blank gold target(s) with "
            f"{NO_TARGET} (asked for with --fill-blank-targets)"
        )
    summary["warnings"] += _overlap_warnings(splits, lines_of, sources)
    for split, lines in unprefixed.items():
        if lines:
            shown = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
            summary["warnings"].append(
                f"{sources[split].name}: {len(lines):,} gold cot(s) do not start with 分析： "
                f"(line(s) {shown}); accepted as the authors' validator accepts them, since the rest "
                "parses to the row's fields"
            )
    if "test" not in splits or not splits["test"]:
        summary["warnings"].append("no test split was written")
    # VARM-Bench's test labels are held by its maintainers: a private test (§1); --test-status at install
    # says otherwise for a set whose labels are out.
    summary["files"].append(
        str(bundle_info.write(out_dir, dataset="varm", test_status="private", source="varm"))
    )
    summary["test_status"] = "private"
    return summary


SUBSET_FOLDERS = ("subsets", "subsets/q2")  # the authors' evaluate_q2.py looks in subsets/q2/ by default


def _subsets(  # noqa: C901
    folder: Path | None,
    test_ids: dict[str, str],
    test_rows: list[dict[str, Any]],
    line_of: dict[str, int],
    test_name: str,
    fill_blank_targets: bool = False,
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """The release's cue subsets from `subsets/*.jsonl` and `subsets/q2/*.jsonl`, and the folders used.

    Each row must equal the test row of the same text on every field: the authors score a subset file as
    it is, so a differing row is an error naming both lines, never silently replaced by the test row."""
    if folder is None:
        return {}, []
    by_id = {row["id"]: row for row in test_rows}
    out: dict[str, list[dict[str, Any]]] = {}
    where: dict[str, str] = {}
    used: list[str] = []
    problems: list[Problem] = []
    for sub in SUBSET_FOLDERS:
        files = sorted((folder / sub).glob("*.jsonl")) if (folder / sub).is_dir() else []
        if files:
            used.append(f"{sub}/")
        for file in files:
            shown = f"{sub}/{file.name}"
            if file.stem in out:
                problems.append(
                    BundleProblem(
                        None, None, f"a subset named {file.stem!r} is also in {where[file.stem]}; keep one"
                    )
                )
                continue
            records, found = _read_file(file, shown)
            problems += _in_file(list(found), shown)
            rows = []
            for line, obj in records:
                row_id = test_ids.get(obj.get("text") or "")
                if row_id is None:
                    problems.append(BundleProblem(line, "text", "no test row has this text", file=shown))
                    continue
                test_row = by_id[row_id]
                blank = isinstance(obj.get("target"), str) and not obj["target"].strip()
                if fill_blank_targets and blank and obj.get("target_type") == NO_TARGET:
                    obj = {**obj, "target": NO_TARGET}  # filled like its test row, not a difference
                keys = sorted((set(obj) | set(test_row)) - {"id"})
                differ = [k for k in keys if obj.get(k) != test_row.get(k)]
                if differ:
                    message = (
                        f"differs from {test_name} line {line_of[row_id]} (same text) in "
                        f"{', '.join(differ)}; the authors score the subset row as written, so fix one "
                        "of the two"
                    )
                    problems.append(BundleProblem(line, differ[0], message, file=shown))
                    continue
                rows.append(test_row)
            out[file.stem], where[file.stem] = rows, shown
    if problems:
        raise InputError(problems[:200], total=len(problems))
    return out, used


def _pairs_text(pairs: list[str]) -> str:
    more = f", ... ({len(pairs):,} pairs)" if len(pairs) > MAX_PAIRS_NAMED else ""
    return ", ".join(pairs[:MAX_PAIRS_NAMED]) + more


def _overlap_warnings(
    splits: dict[str, list[dict[str, Any]]], lines_of: dict[str, list[int]], sources: dict[str, Path]
) -> list[str]:
    """Duplicate texts within a split and texts shared across splits, on the authors' audit key (equal keys,
    or RapidFuzz ratio >= 95 across splits), with the line pairs: said at import, before `check-references`
    refuses the bundle."""
    warnings = []
    keys = {split: [audit_key(r["text"]) for r in rows] for split, rows in splits.items()}
    for split, values in keys.items():
        first: dict[str, int] = {}
        pairs = []
        for k, key in enumerate(values):
            if key in first:
                pairs.append(f"lines {lines_of[split][first[key]]} and {lines_of[split][k]}")
            first.setdefault(key, k)
        if pairs:
            warnings.append(
                f"{sources[split].name}: {len(pairs):,} duplicate text(s) on the authors' audit key "
                f"(NFKC, lower case, alphanumerics only): {_pairs_text(pairs)}"
            )
    names = list(keys)
    for i, left in enumerate(names):
        for right in names[i + 1 :]:
            found = near_duplicate_pairs(keys[left], keys[right])
            a_name, b_name = sources[left].name, sources[right].name
            pairs = [
                f"{a_name} line {lines_of[left][a]} ~ {b_name} line {lines_of[right][b]}" for a, b, _ in found
            ]
            if pairs:
                warnings.append(
                    f"{left}/{right}: {len(pairs):,} text(s) shared across splits (audit key equal or "
                    f"RapidFuzz ratio >= 95): {_pairs_text(pairs)}; check-references refuses such a bundle"
                )
    return warnings
