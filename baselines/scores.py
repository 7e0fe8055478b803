"""Score the committed baseline predictions with the scorer CLI and print the README tables.

The last table shows the explanation metrics (spec §3; comprehensiveness, sufficiency and the flip rate in
percentage points of probability / of items, span counts and lengths as plain numbers) for the baselines
that give explanations: char-ngram with its own attributions, char-ngram-random with random ones.

``python -m baselines.scores [--data DIR]`` runs ``python -m scoring score`` (no bootstrap) for every
track, baseline and split and prints Markdown: the tables in ``data/demo/README.md`` are this output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from baselines import BASELINES, SPLITS, TRACKS
from baselines.data import DEFAULT_DATA, prediction_path

Scorer = Callable[[str, Path, Path | None, Path], dict]


def cli_scorer(track: str, references: Path, subsets: Path | None, predictions: Path) -> dict:
    """The scorer's result dict, obtained through its command line (as a participant would)."""
    cmd = [
        sys.executable,
        "-m",
        "scoring",
        "score",
        "--track",
        track,
        "--references",
        str(references),
        "--predictions",
        str(predictions),
        "--bootstrap",
        "0",
    ]
    if subsets is not None:
        cmd += ["--subsets", str(subsets)]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def collect(data: Path = DEFAULT_DATA, scorer: Scorer = cli_scorer) -> dict[tuple[str, str, str], dict]:
    """{(track, baseline, split): result} for every committed prediction file."""
    results = {}
    for track in TRACKS:
        for split in SPLITS:
            subsets = data / track / "subsets" if track == "varm" and split == "test" else None
            for baseline in (b for b in BASELINES if track in b.tracks):
                predictions = prediction_path(data, track, baseline.name, split)
                results[track, baseline.name, split] = scorer(
                    track, data / track / f"{split}.jsonl", subsets, predictions
                )
    return results


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"  # None: a cell the leaderboard withholds


def markdown(results: dict[tuple[str, str, str], dict]) -> str:
    """The three README tables (VARM, VARM cue subsets, ToxiTrace tracks), values in percent."""
    lines = [
        "| VARM | split | JREM | Label M-F1 | Category M-F1 | T-F1 | HER-C | HER-L | parse success |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (track, name, split), r in results.items():
        if track != "varm":
            continue
        m = r["metrics"]
        cells = [
            m["jrem"],
            m["macro_f1"]["label"],
            m["macro_f1"]["category"],
            m["t_f1"],
            m["her_c"],
            m["her_l"],
            m["parse_success"],
        ]
        lines.append(f"| {name} | {split} | " + " | ".join(_pct(v) for v in cells) + " |")
    lines += [
        "",
        "| VARM test cue subset | baseline | rows (harmful/non-harmful) | JREM harmful | "
        "JREM non-harmful | gap |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for (track, name, _split), r in results.items():
        for subset, s in sorted(r.get("subsets", {}).items()) if track == "varm" else []:
            lines.append(
                f"| {subset} | {name} | {s['rows']} ({s['rows_harmful']}/{s['rows_non_harmful']}) | "
                f"{_pct(s['jrem_harmful'])} | {_pct(s['jrem_non_harmful'])} | {_pct(s['jrem_gap'])} |"
            )
    lines += [
        "",
        "| track | baseline | split | accuracy | precision | recall | F1 | macro-F1 | span overlap F1 | "
        "span char F1 |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (track, name, split), r in results.items():
        if track == "varm":
            continue
        m = r["metrics"]
        cells = [_pct(m[k]) for k in ("accuracy", "precision", "recall", "f1", "macro_f1")]
        spans = m.get("spans")
        cells += [_pct(spans["overlap_f1"]), _pct(spans["char_f1"])] if spans else ["–", "–"]
        lines.append(f"| {track} | {name} | {split} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| explanations (§3) | baseline | split | attribution AUPRC | comprehensiveness | sufficiency | "
        "decision flip @20 % | spans per item | mean span length |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (track, name, split), r in results.items():
        e = r.get("explanations")
        if e is None:
            continue
        cells = [_pct(e["auprc"]) if "auprc" in e else "–"]
        cells += [_pct(e[k]) for k in ("comprehensiveness", "sufficiency", "decision_flip_20")]
        cells += [f"{e['spans_per_item']:.2f}", f"{e['mean_span_length']:.2f}"]
        lines.append(f"| {track} | {name} | {split} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m baselines.scores", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="demo data root (default: data/demo)")
    args = parser.parse_args(argv)
    sys.stdout.write(markdown(collect(args.data)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
