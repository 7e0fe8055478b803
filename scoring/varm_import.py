"""Convert the VARM-Bench authors' release into a reference bundle (spec §1, "Release formats").

The authors' tools take a gold JSONL with exactly the 8 official keys and no `id`; the release has one
file per split (`train.jsonl`, `dev.jsonl`, `test.jsonl`, also `val`/`valid` for dev) or a single file.
``import_varm(path, out_dir)`` reads a single file (its split from the file name, else `test`) or the
split files directly inside a folder (plus `subsets/*.jsonl` when present), and writes a bundle with
stable ids in file order (`varm-test-00001`, ...). Subset rows get the id of the test row with the same
text. Nothing is written unless every row is valid.

Blank gold targets (spec §1): kept as written unless ``fill_blank_targets`` is given; then rows whose
target is blank and whose target_type is 无明确对象 get target 无明确对象, and the summary says how many.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from . import bundle_info
from .problems import InputError, Problem
from .protocol import NO_TARGET
from .references import SPLITS, BundleProblem, _gold_file, _in_file, _read_file, blank_target_rows

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


def import_varm(path: Path, out_dir: Path, *, fill_blank_targets: bool = False) -> dict:
    path, out_dir = Path(path), Path(out_dir)
    sources, given = _sources(path)
    problems: list[Problem] = []
    splits: dict[str, list[dict]] = {}
    for split in sorted(sources, key=SPLITS.index):
        records, found = _gold_file(sources[split], require_cot=True)
        problems += _in_file(found, sources[split].name)
        splits[split] = [dict(obj) for _, obj in records]
    if problems:
        raise InputError(problems[:200], total=len(problems))

    summary: dict = {
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
    subsets = _subsets(path if path.is_dir() else None, test_ids, splits.get("test", []))

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
    if "test" not in splits or not splits["test"]:
        summary["warnings"].append("no test split was written")
    # VARM-Bench's test labels are held by its maintainers: a private test (§1); --test-status at install
    # says otherwise for a set whose labels are out.
    summary["files"].append(
        str(bundle_info.write(out_dir, dataset="varm", test_status="private", source="varm"))
    )
    summary["test_status"] = "private"
    return summary


def _subsets(folder: Path | None, test_ids: dict[str, str], test_rows: list[dict]) -> dict[str, list[dict]]:
    """`subsets/*.jsonl` of the release, each row replaced by the test row of the same text (so it is an
    exact copy, with the test row's id)."""
    if folder is None or not (folder / "subsets").is_dir():
        return {}
    by_id = {row["id"]: row for row in test_rows}
    out: dict[str, list[dict]] = {}
    problems: list[Problem] = []
    for file in sorted((folder / "subsets").glob("*.jsonl")):
        records, found = _read_file(file, f"subsets/{file.name}")
        problems += _in_file(list(found), f"subsets/{file.name}")
        rows = []
        for line, obj in records:
            row_id = test_ids.get(obj.get("text"))
            if row_id is None:
                problems.append(
                    BundleProblem(line, "text", "no test row has this text", file=f"subsets/{file.name}")
                )
            else:
                rows.append(by_id[row_id])
        out[file.stem] = rows
    if problems:
        raise InputError(problems[:200], total=len(problems))
    return out
