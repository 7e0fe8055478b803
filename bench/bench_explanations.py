"""Explanation figures of the char-ngram baseline: real attributions against random ones (spec §3).

    .venv/bin/python bench/bench_explanations.py [--bootstrap 200]

Runs the documented commands end to end on the real COLD release (``<repo>/../shared/data/real/
COLDataset``, imported into a temporary folder, never copied into the project) and on the demo tracks:
``python -m scoring import``, ``python -m baselines --track ...``, ``python -m scoring score``. Prints the
explanation metrics of ``char-ngram`` (its own per-character logit shares), ``char-ngram-random``
(seeded random scores) and ``inverted`` (char-ngram's scores negated, its masked probabilities recomputed
on that ranking: the anti-faithful explanation, written to a temporary folder) on the test split, with
95 % bootstrap intervals, the wall/CPU time of each step, and whether the order spec §3 promises holds:
comprehensiveness real > random > inverted, sufficiency real < random.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLD = ROOT.parent / "shared" / "data" / "real" / "COLDataset" / "COLDataset"
DEMO = ROOT / "data" / "demo"
sys.path.insert(0, str(ROOT))  # the inverted variant runs the baseline model in this process
NAMES = ("char-ngram", "char-ngram-random", "inverted")
SHOWN = (
    "auprc",
    "comprehensiveness",
    "sufficiency",
    "decision_flip_20",
    "spans_per_item",
    "mean_span_length",
)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def step(label: str, *args: str) -> str:
    wall, cpu = time.perf_counter(), _cpu()
    done = subprocess.run([sys.executable, *args], cwd=ROOT, check=True, capture_output=True, text=True)
    print(f"  {label}: {time.perf_counter() - wall:.1f} s wall, {_cpu() - cpu:.1f} s CPU")
    return done.stdout


def inverted(data: Path, track: str, out: Path) -> Path:
    """The char-ngram model (fitted on the track's train split, as `python -m baselines` does) explaining
    the test split with its own scores negated, the masked probabilities its own on the texts that ranking
    masks: the top characters become the bottom ones, so a faithful metric must rank this file last."""
    from baselines.data import inputs, read_jsonl
    from baselines.ngram import ToxiNgram

    model = ToxiNgram(read_jsonl(data / track / "train.jsonl"))
    rows = inputs(read_jsonl(data / track / "test.jsonl"))
    predictions = model.explain_many(rows, track == "cntp", inverted=True)
    out.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in predictions), encoding="utf-8")
    return out


def score(track: str, data: Path, name: str, bootstrap: int, scratch: Path) -> dict:
    predictions = data / track / "baselines" / f"{name}.test.jsonl"
    if name == "inverted":
        predictions = inverted(data, track, scratch / f"{track}-inverted.test.jsonl")
    out = step(
        f"score {name}",
        "-m",
        "scoring",
        "score",
        "--track",
        track,
        "--references",
        str(data / track / "test.jsonl"),
        "--predictions",
        str(predictions),
        "--bootstrap",
        str(bootstrap),
    )
    return json.loads(out)


def report(track: str, data: Path, bootstrap: int, scratch: Path) -> None:
    results = {name: score(track, data, name, bootstrap, scratch) for name in NAMES}
    print(f"  {'metric':<20}" + "".join(f"{name:>40}" for name in NAMES))
    for key in SHOWN:
        cells = []
        for name in NAMES:
            value = results[name]["explanations"].get(key)
            ci = results[name]["ci"].get(f"explanations.{key}")
            interval = f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else ""
            cells.append("–" if value is None else f"{value:.4f}{interval}")
        print(f"  {key:<20}" + "".join(f"{c:>40}" for c in cells))
    print(f"  (F1 {results['char-ngram']['metrics']['f1']:.4f}, rows {results['char-ngram']['rows']})")
    real, rand, inv = (results[name]["explanations"] for name in NAMES)
    comp = real["comprehensiveness"] > rand["comprehensiveness"] > inv["comprehensiveness"]
    suff = real["sufficiency"] < rand["sufficiency"]
    print(
        f"  comprehensiveness real > random > inverted: {'yes' if comp else 'NO'}; "
        f"sufficiency real < random: {'yes' if suff else 'NO'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as scratch:
        if COLD.is_dir():
            data = Path(tmp)
            print(f"real COLD ({COLD}):")
            step("import", "-m", "scoring", "import", "--dataset", "cold", str(COLD), str(data / "cold"))
            step(
                "baselines (fit on train, dev+test, 4 systems)",
                "-m",
                "baselines",
                "--data",
                str(data),
                "--tracks",
                "cold",
            )
            report("cold", data, args.bootstrap, Path(scratch))
        else:
            print(f"real COLD absent ({COLD}); skipped")
        for track in ("cold", "toxicn", "cntp"):
            print(f"demo {track} (committed predictions):")
            report(track, DEMO, args.bootstrap, Path(scratch))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
