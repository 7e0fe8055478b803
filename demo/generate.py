"""Write the SYNTHETIC DEMO benchmark to ``data/demo/`` (``python -m demo.generate [--out DIR] [--seed N]``).

Output (all JSONL, UTF-8, one object per line, ``ensure_ascii=False``):

* ``varm/{train,dev,test}.jsonl`` – VARM-format records ``id, text, target, target_type,
  target_explicitness, stance, label, category, cot`` (all strings), 55/45 harmful/non-harmful per split;
* ``varm/subsets/<cue>.jsonl`` – copies of test rows (same ids) for the four lexical-cue subsets;
* ``{cold,toxicn,cntp}/{train,dev,test}.jsonl`` – ``{"id", "text", "label", ...breakdown fields}``;
* ``<track>/public/test_inputs.jsonl`` – ``{"id", "text"}`` only, for researchers (``dev.jsonl`` is public);
* ``varm/public/dev_subsets.json`` – ``{"<cue subset>": ["<dev id>", ...]}``: the public dev rows of each
  cue subset, by the same membership rule as ``varm/subsets/`` (the dev split itself has no subset field).

Determinism: one ``random.Random`` per track seeded from the string ``"<seed>:<track>"`` (string seeds are
hashed with SHA-512 by CPython, so they do not depend on ``PYTHONHASHSEED``), no iteration over sets, and
fixed key order; regenerating gives byte-identical files. Texts are unique per track and no two texts
reach RapidFuzz ``fuzz.ratio`` >= 95 on a normal form (across all rows, stricter than the split rule): for
VARM the authors' audit key (NFKC, lower case, letters and digits only), which ``check-references`` enforces;
for the ToxiTrace demos NFKC + lower case + whitespace removal. The generator re-validates everything it
wrote and fails loudly otherwise.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path

from demo import DEMO_SEED, toxitrace
from demo.checks import audit_key, cross_split_near_duplicates, is_near_duplicate, loose_key, record_problems
from demo.pieces import train_view
from demo.varm import HARMFUL_KINDS, NON_HARMFUL_KINDS, Case, harmful_case, non_harmful_case

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / "data" / "demo"
SPLITS = ("train", "dev", "test")
VARM_SIZES = {"train": 1100, "dev": 200, "test": 2000}
TOXITRACE_SIZES = {"train": 300, "dev": 100, "test": 1000}
HARMFUL_SHARE = 0.55
SUBSETS = ("demographic_identity", "social_status_role", "body_health_disability", "general_abuse")
MAX_ATTEMPTS = 400


def allocate(n: int, shares: dict) -> dict:
    """Split ``n`` into integer counts proportional to ``shares`` (largest remainder, ties by order)."""
    total = sum(shares.values())
    raw = {k: n * v / total for k, v in shares.items()}
    counts = {k: int(x) for k, x in raw.items()}
    order = sorted(shares, key=lambda k: (-(raw[k] - counts[k]), list(shares).index(k)))
    for k in order[: n - sum(counts.values())]:
        counts[k] += 1
    return counts


class Deduplicator:
    """Rejects a text that equals, or is a RapidFuzz near-duplicate of, any text already accepted, both
    compared on `key`."""

    def __init__(self, key: Callable[[str], str]) -> None:
        self.key = key
        self.pool: list[str] = []
        self.exact: dict[str, None] = {}

    def accept(self, text: str) -> bool:
        norm = self.key(text)
        if norm in self.exact or is_near_duplicate(norm, self.pool):
            return False
        self.exact[norm] = None
        self.pool.append(norm)
        return True


def _compose_unique(
    rng: random.Random, kinds: list, compose: Callable, dedup: Deduplicator, fallback: list
) -> list:
    """Compose one item per kind; a kind whose combinations are exhausted falls back to the next kind."""
    items = []
    for kind in kinds:
        candidates = [kind] + [k for k in fallback if k != kind]
        for candidate in candidates:
            for _ in range(MAX_ATTEMPTS):
                item = compose(rng, candidate)
                text = item.text if isinstance(item, Case) else item["text"]
                if dedup.accept(text):
                    items.append(item)
                    break
            else:
                continue
            break
        else:
            raise RuntimeError(f"could not compose a unique item of kind {kind!r}")
    return items


# ---- VARM --------------------------------------------------------------------------------------------
def build_varm(seed: int) -> dict[str, list[tuple[dict, str | None]]]:
    """Return {split: [(record, cue subset or None), ...]} for the VARM demo."""
    rng = random.Random(f"{seed}:varm")
    dedup = Deduplicator(audit_key)
    out = {}
    for split in SPLITS:
        n = VARM_SIZES[split]
        n_harmful = round(n * HARMFUL_SHARE)
        plan = [("h", k) for k, c in allocate(n_harmful, HARMFUL_KINDS).items() for _ in range(c)]
        plan += [("n", k) for k, c in allocate(n - n_harmful, NON_HARMFUL_KINDS).items() for _ in range(c)]
        rng.shuffle(plan)
        rows = []
        with train_view(split == "train"):  # train never sees the held-out quarter of each word bank
            for i, (side, kind) in enumerate(plan, start=1):
                compose = harmful_case if side == "h" else non_harmful_case
                fallback = list(HARMFUL_KINDS if side == "h" else NON_HARMFUL_KINDS)
                (case,) = _compose_unique(rng, [kind], compose, dedup, fallback)
                record = {
                    "id": f"varm-demo-{split}-{i:04d}",
                    "text": case.text,
                    **case.record,
                    "cot": case.cot,
                }
                rows.append((record, case.subset))
        out[split] = rows
    return out


# ---- ToxiTrace tracks --------------------------------------------------------------------------------
def _toxitrace_plan(track: str, n: int) -> tuple[list, Callable]:
    if track == "cold":
        return [
            k for k, c in allocate(n, toxitrace.COLD_FINE_SHARES).items() for _ in range(c)
        ], toxitrace.cold_row
    if track == "toxicn":
        return [
            k for k, c in allocate(n, toxitrace.TOXICN_KINDS).items() for _ in range(c)
        ], toxitrace.toxicn_row
    return [k for k, c in allocate(n, toxitrace.CNTP_KINDS).items() for _ in range(c)], toxitrace.cntp_row


def build_toxitrace(track: str, seed: int) -> dict[str, list[dict]]:
    """Return {split: rows} for one ToxiTrace-shaped demo track."""
    rng = random.Random(f"{seed}:{track}")
    dedup = Deduplicator(loose_key)
    out = {}
    for split in SPLITS:
        kinds, compose = _toxitrace_plan(track, TOXITRACE_SIZES[split])
        rng.shuffle(kinds)
        rows = []
        with train_view(split == "train"):
            for i, kind in enumerate(kinds, start=1):
                # No fallback across kinds here: each kind fixes the labels, so ratios must not drift.
                (row,) = _compose_unique(rng, [kind], compose, dedup, [kind])
                rows.append({"id": f"{track}-demo-{split}-{i:04d}", **row})
        out[split] = rows
    return out


# ---- writing and self-checks -------------------------------------------------------------------------
def dumps_jsonl(rows: list[dict]) -> bytes:
    """Canonical JSONL bytes: one object per line, key order as given, UTF-8, trailing newline."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def _write(path: Path, rows: list[dict], written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dumps_jsonl(rows))
    written.append(path)


def _write_json(path: Path, obj: dict, written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((json.dumps(obj, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    written.append(path)


def _check_varm(splits: dict[str, list[tuple[dict, str | None]]]) -> None:
    for split, rows in splits.items():
        for record, _ in rows:
            problems = record_problems(record)
            if problems:
                raise AssertionError(f"{record['id']}: {problems}")
        harmful = sum(r["label"] == "有害" for r, _ in rows)
        if harmful != round(len(rows) * HARMFUL_SHARE):
            raise AssertionError(f"varm {split}: {harmful} harmful of {len(rows)}")
    texts = {s: [r["text"] for r, _ in rows] for s, rows in splits.items()}
    _check_near_duplicates("varm", texts, audit_key)


def _check_near_duplicates(track: str, texts: dict[str, list[str]], key: Callable[[str], str]) -> None:
    everything = [t for ts in texts.values() for t in ts]
    if len({key(t) for t in everything}) != len(everything):
        raise AssertionError(f"{track}: duplicate texts")
    pairs = cross_split_near_duplicates(texts, key)
    if pairs:
        raise AssertionError(f"{track}: cross-split near-duplicates, e.g. {pairs[0]}")


def generate(out: Path = DEFAULT_OUT, seed: int = DEMO_SEED) -> list[Path]:
    """Build, check and write every demo file under ``out``; return the written paths in order."""
    written: list[Path] = []
    varm = build_varm(seed)
    _check_varm(varm)
    for split in SPLITS:
        _write(out / "varm" / f"{split}.jsonl", [r for r, _ in varm[split]], written)
    for name in SUBSETS:
        rows = [r for r, subset in varm["test"] if subset == name]
        _write(out / "varm" / "subsets" / f"{name}.jsonl", rows, written)
    _write(
        out / "varm" / "public" / "test_inputs.jsonl",
        [{"id": r["id"], "text": r["text"]} for r, _ in varm["test"]],
        written,
    )
    # Public dev-split membership, by the same rule as the test subsets (the row's identity word/insult).
    dev_subsets = {name: [r["id"] for r, subset in varm["dev"] if subset == name] for name in SUBSETS}
    _write_json(out / "varm" / "public" / "dev_subsets.json", dev_subsets, written)
    for track in ("cold", "toxicn", "cntp"):
        splits = build_toxitrace(track, seed)
        _check_near_duplicates(track, {s: [r["text"] for r in rows] for s, rows in splits.items()}, loose_key)
        for split in SPLITS:
            _write(out / track / f"{split}.jsonl", splits[split], written)
        _write(
            out / track / "public" / "test_inputs.jsonl",
            [{"id": r["id"], "text": r["text"]} for r in splits["test"]],
            written,
        )
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m demo.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default: data/demo)")
    parser.add_argument("--seed", type=int, default=DEMO_SEED, help=f"random seed (default: {DEMO_SEED})")
    args = parser.parse_args(argv)
    for path in generate(args.out, args.seed):
        lines = path.read_bytes().count(b"\n")
        print(f"{lines:5d}  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
