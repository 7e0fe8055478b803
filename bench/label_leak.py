"""How much a label-probing attacker still learns per submission, and what a recovered label costs.

    .venv/bin/python bench/label_leak.py [--quota 5] [--trials 3]

The figures of docs/SECURITY.md ("Label probing"), per track at the real test sizes (COLD 5,323; ToxiCN
2,411; CNTP 2,533; VARM-Bench 1,600), with the disclosure rules of scorer 3.0.0 and the near-copy guard.

Method (printed again with the figures):
1. Bits per submission. Given their own predictions, a submitter learns from a published number only the
   count it is made of (TP for the binary tracks: accuracy, precision, recall, F1 and macro-F1 all follow
   from it once the gold positive total is known). A count over m rows takes at most m + 1 values, so a
   submission reveals at most  log2(n + 1) + sum over published cells c of log2(n_c + 1)  bits. Cells are
   the breakdown cells still published (>= 30 rows; a label-defined cell still gives its accuracy count).
   COLD cell sizes come from the real release (../shared/data/real/COLDataset) when present; ToxiCN, CNTP and
   VARM cell sizes are not available here, so their bound uses the overall count only (stated per row).
2. Per day: that bound times QUOTA_PER_DAY (per identity and track).
3. Submissions per recovered label, three attackers:
   a. one-flip probe (the issue's reproduction: flip one row of an earlier submission, read the change):
      before: 1 submission per label (1/c with c published cells whose membership the attacker can guess);
      now: the upload differs in 1 < max(10, 1 %) rows, so it is held unscored — no label, quota spent.
   b. adaptive splitting with counts (group testing): start from a base model with error rate e (the
      published headline accuracy of each track); flip a group of rows and read how many of them the base
      got wrong (the TP change); split mixed groups in halves until every group is all-right or all-wrong.
      Each query is padded with rows of already known effect (earlier groups whose counts are known) up to
      the near-copy limit, with a fresh padding each time, so no query is a near-copy: the guard costs this
      attacker nothing. Simulated (best first-round group size, mean of --trials runs).
   c. coin weighing without a base model (Lindström 1965; Cantor & Mills 1966): n unknown 0/1 labels are
      determined by about 2 n / log2 n subset-sum queries over subsets of about n/2 rows (far from every
      earlier submission, so not near-copies); the information bound is n / log2(n + 1).
   Lower bound for any attacker with a base model: n · H(e) / bits per submission.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.disclosure import MIN_CELL_ROWS  # noqa: E402
from worker.config import Config  # noqa: E402
from worker.nearcopy import max_differing, near_copy_limit  # noqa: E402

REAL_COLD = ROOT.parent / "shared" / "data" / "real" / "COLDataset" / "COLDataset"
# (track, test rows, error rate of the base model the attacker starts from, where that rate comes from)
TRACKS = (
    ("cold", 5323, 1 - 0.8384, "COLD test accuracy 83.84 (toxitrace-protocol.md)"),
    ("toxicn", 2411, 1 - 0.8387, "ToxiCN test accuracy 83.87 (toxitrace-protocol.md)"),
    ("cntp", 2533, 1 - 0.8384, "no published CNTP label accuracy; COLD's assumed"),
    ("varm", 1600, 0.024, "label Macro-F1 97.6 (GPT-5.5 zero-shot, varm-protocol.md)"),
)


def cold_cells() -> dict[str, list[int]] | None:
    """Published COLD breakdown cell sizes per field (cells of >= 30 rows), from the real release."""
    if not (REAL_COLD / "test.csv").is_file():
        return None
    from scoring.toxitrace.importers import import_dataset

    with tempfile.TemporaryDirectory() as tmp:
        import_dataset("cold", REAL_COLD, Path(tmp))
        text = (Path(tmp) / "test.jsonl").read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines()]
    return {
        field: sorted(
            n
            for n in Counter(r[field] for r in rows if r.get(field) is not None).values()
            if n >= MIN_CELL_ROWS
        )
        for field in ("topic", "fine_label")
    }


def bits_per_submission(n: int, cells: list[int]) -> float:
    return math.log2(n + 1) + sum(math.log2(c + 1) for c in cells)


def ci_tells_rows_apart(n: int, group: int, alternatives: int, seed: int = 1) -> tuple[float, float]:
    """Share of equal-count alternatives whose intervals differ from the truth's: (rows resampled in test
    order, as scorer 1.0.0 did; as published now, by `COLD.score`).

    A query flips `group` rows of a base model (16 % wrong); every alternative moves which rows of the group
    are wrong while keeping TP, FP, FN and TN — so every published point metric is equal — and the test is
    whether the seeded bootstrap interval (1,000 resamples, seed 0) still differs."""
    from dataclasses import replace

    from scoring.bootstrap import DEFAULT_LEVEL, percentile_ci, resample_indices
    from scoring.toxitrace.classification import bootstrap_metrics
    from scoring.toxitrace.references import ToxiReferences
    from scoring.toxitrace.tracks import COLD

    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, n).astype(np.int8)
    query = gold ^ (rng.random(n) < 0.16).astype(np.int8)
    flipped = rng.choice(n, group, replace=False)
    query[flipped] ^= 1
    ids = [f"r{k:05d}" for k in range(n)]
    refs = ToxiReferences(ids=ids, texts=ids, labels=gold, spans=None)
    lines = (json.dumps({"id": i, "label": int(v)}) + "\n" for i, v in zip(ids, query, strict=True))
    data = "".join(lines).encode()
    idx = resample_indices(n, 1000, 0)

    def test_order(g: np.ndarray) -> tuple:
        resampled = bootstrap_metrics(g, query, idx).values()
        return tuple(tuple(percentile_ci(v, DEFAULT_LEVEL)) for v in resampled)

    def published(g: np.ndarray) -> dict:
        return COLD.score(replace(refs, labels=g), data, bootstrap=1000, seed=0)["ci"]

    truth_old, truth_new = test_order(gold), published(gold)
    right = [int(i) for i in flipped if query[i] == gold[i]]
    wrong = [int(i) for i in flipped if query[i] != gold[i]]
    # r (right) takes w's (wrong) confusion cell and back: TP, FP, FN, TN and the gold totals all stay
    pairs = [(r, w) for r in right for w in wrong if gold[r] != gold[w]][:alternatives]
    old = new = 0
    for r, w in pairs:
        other = gold.copy()
        other[[r, w]] ^= 1
        old += test_order(other) != truth_old
        new += published(other) != truth_new
    return old / max(1, len(pairs)), new / max(1, len(pairs))


def entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def splitting_queries(wrong: np.ndarray, first: int, rng: np.random.Generator) -> int:
    """Queries (= submissions) for adaptive splitting with counts to find every row the base got wrong."""
    order = rng.permutation(len(wrong))
    groups = [order[k : k + first] for k in range(0, len(order), first)]
    queries = len(groups) - 1  # the base submission's own score gives the total, so the last group is free
    stack = [(g, int(wrong[g].sum())) for g in groups]
    while stack:
        group, errors = stack.pop()
        if errors in (0, len(group)):
            continue
        left, right = group[: len(group) // 2], group[len(group) // 2 :]
        queries += 1
        left_errors = int(wrong[left].sum())
        stack += [(left, left_errors), (right, errors - left_errors)]
    return queries


def best_splitting(n: int, error: float, trials: int) -> tuple[float, int]:
    """(mean queries per row at the best first-round group size, that size)."""
    best = (math.inf, 0)
    for first in (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256):
        costs = []
        for trial in range(trials):
            rng = np.random.default_rng(trial)
            wrong = rng.random(n) < error
            costs.append(splitting_queries(wrong, first, rng) / n)
        best = min(best, (float(np.mean(costs)), first))
    return best


def boosting_attack(
    n: int, submissions: int, seed: int, *, ladder: bool, share: float = 0.3
) -> tuple[float, float, float]:
    """Blum & Hardt (2015, §5): submit random label files, keep those the board says improved, submit their
    majority vote. Returns (the public-slice score the board shows for the attacker at the end, the final
    file's public-slice accuracy, its private-slice accuracy). Gold labels are coin flips, so chance is 0.5
    on both slices; every published score is rounded to 0.001 (the gate).

    Without the Ladder the board shows each file's public score: the attacker keeps the files scoring
    above 0.5. With the Ladder (scoring/ladder.py) it learns only "released" or not (a file beats the
    released best by more than the paired SE), keeps the released ones, and the board shows the best
    released score."""
    from scoring.ladder import per_row_margin

    rng = np.random.default_rng(seed)
    public_n = round(share * n)
    gold_public, gold_private = rng.integers(0, 2, public_n), rng.integers(0, 2, n - public_n)
    kept_public, kept_private = [], []
    best_rows, shown = None, 0.0
    for _ in range(submissions - 1):
        guess_public, guess_private = rng.integers(0, 2, public_n), rng.integers(0, 2, n - public_n)
        rows = (guess_public == gold_public).astype(float)
        score = round(float(rows.mean()), 3)
        if not ladder:
            keep = score > 0.5
            shown = max(shown, score)
        elif best_rows is None or per_row_margin(rows, best_rows).released:
            keep, best_rows, shown = True, rows, score
        else:
            keep = False
        if keep:
            kept_public.append(guess_public)
            kept_private.append(guess_private)
    if not kept_public:
        return shown, 0.5, 0.5
    vote_public = (np.mean(kept_public, axis=0) > 0.5).astype(int)
    vote_private = (np.mean(kept_private, axis=0) > 0.5).astype(int)
    rows = (vote_public == gold_public).astype(float)
    public_acc, private_acc = float(rows.mean()), float((vote_private == gold_private).mean())
    if not ladder or best_rows is None or per_row_margin(rows, best_rows).released:
        shown = max(shown, round(public_acc, 3))
    return shown, public_acc, private_acc


def boosting_table(n: int, trials: int) -> None:
    se = math.sqrt(0.25 / round(0.3 * n))
    print(
        f"\nBoosting attack (Blum & Hardt 2015, §5) on a COLD-sized private test: {n} rows, public slice "
        f"{round(0.3 * n)} (chance 0.500, one SE of chance = {se:.4f}); mean of {trials} runs"
    )
    header = (
        f"{'submissions':>12}{'shown, no Ladder':>18}{'private':>9}"
        f"{'shown, Ladder':>15}{'vote, public':>14}{'private':>9}"
    )
    print(header)
    print("-" * len(header))
    for k in (50, 100, 200, 400, 800):
        plain = np.mean([boosting_attack(n, k, t, ladder=False) for t in range(trials)], axis=0)
        laddered = np.mean([boosting_attack(n, k, t, ladder=True) for t in range(trials)], axis=0)
        print(
            f"{k:>12}{plain[0]:>18.3f}{plain[2]:>9.3f}{laddered[0]:>15.3f}{laddered[1]:>14.3f}{laddered[2]:>9.3f}"
        )
    print(
        "shown = the public-slice score the live board shows for the attacker (its best); vote, public = "
        "the boosted majority vote's own public-slice accuracy (with the Ladder it is not released: it does "
        "not beat the best by an SE); private = the vote's accuracy on the private slice. Without the Ladder "
        "the shown score climbs while the private one stays at chance; with it the shown score stays near "
        "chance."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quota", type=int, default=Config().quota_per_day, help="QUOTA_PER_DAY")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--alternatives", type=int, default=100, help="equal-count alternatives (CI test)")
    parser.add_argument("--boosting-only", action="store_true", help="only the Ladder's boosting attack")
    args = parser.parse_args()
    if args.boosting_only:
        boosting_table(TRACKS[0][1], args.trials)
        return
    cold = cold_cells()
    print(__doc__.split("Method", 1)[1].split("\n", 1)[1])
    print(f"QUOTA_PER_DAY = {args.quota}; cells under {MIN_CELL_ROWS} rows publish nothing.")
    if cold is None:
        print(f"(real COLD release not found at {REAL_COLD}: COLD uses the overall count only)")
    print()
    header = (
        f"{'track':<7}{'rows':>6}{'held if k <':>12}{'bits/sub':>10}{'bits/day':>10}"
        f"{'one-flip before':>17}{'one-flip now':>14}{'splitting':>11}{'coin weighing':>15}"
        f"{'info bound':>12}{'days, 1 identity':>18}"
    )
    print(header)
    print("-" * len(header))
    notes = []
    for track, n, error, source in TRACKS:
        fields = cold if track == "cold" and cold else {}
        cells = [size for sizes in fields.values() for size in sizes]
        bits = bits_per_submission(n, cells)
        per_label, first = best_splitting(n, error, args.trials)
        # Topic cells (mixed labels, every metric) run one query each per submission: a COLD row's topic
        # (race / gender / region) is easy to guess from its public text. fine_label membership is the label.
        parallel = max(1, len(fields.get("topic", [])))
        splitting = per_label / parallel
        coin = 2 / math.log2(n)
        bound = entropy(error) / bits
        before = 1 / parallel
        days = n * min(splitting, coin) / args.quota
        print(
            f"{track:<7}{n:>6}{near_copy_limit(n):>12.4g}{bits:>10.1f}{bits * args.quota:>10.0f}"
            f"{before:>17.2f}{'held (none)':>14}{splitting:>11.3f}{coin:>15.3f}{bound:>12.4f}{days:>18.0f}"
        )
        notes.append(
            f"{track}: base error {error:.3f} ({source}); splitting best first-round group "
            f"{first} rows, {per_label:.3f} queries/label overall"
            + (f", {parallel} cells in parallel" if parallel > 1 else "")
            + f"; near-copy limit {max_differing(n)} rows"
            + (f"; published cells {fields}" if fields else "; overall count only")
        )
    print()
    print("columns: submissions per recovered label (lower = cheaper for the attacker), but bits and days;")
    print("'days, 1 identity' = rows x the cheaper of splitting and coin weighing / QUOTA_PER_DAY.")
    for note in notes:
        print(" -", note)
    print("'bits/day' = bits/sub x QUOTA_PER_DAY, per identity and track.")
    n = TRACKS[0][1]
    before, now = ci_tells_rows_apart(n, max_differing(n) + 1, args.alternatives)
    flip = max_differing(n) + 1
    print(
        f"\nThe intervals: flipping {flip} rows of a COLD-sized base, alternatives with the same counts "
        "(so the same point metrics) but other rows wrong"
    )
    print(
        f"gave a different 95 % interval in {before:.0%} of cases with rows resampled in test order "
        "(scorer 1.0.0: the interval told WHICH rows were wrong)"
    )
    print(
        f"and in {now:.0%} as published now (outcomes resampled in canonical order: the interval is a "
        "function of the counts, adding no bits)."
    )
    boosting_table(TRACKS[0][1], args.trials)


if __name__ == "__main__":
    main()
