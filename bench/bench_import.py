"""Import times on real-sized releases: COLD (the real files) and ToxiCN JSON vs CSV.

    .venv/bin/python bench/bench_import.py [--repeat 5]

- COLD: `import_dataset("cold", ../shared/data/real/COLDataset/COLDataset, OUT)` (37,480 rows, 3 CSV files);
  skipped with a message when the real release is not there.
- ToxiCN: the real release is not on disk, so 12,011 rows are synthesised in the release's JSON shape (the
  keys and value types of `ToxiCN_ex/ToxiCN/data/test.json`), written as ONE-LINE JSON array as released, and
  the same rows as `ToxiCN_1.0.csv` (`content, toxic, toxic_type, expression, target` with the six-place
  multi-hot string). Prints both medians and the JSON/CSV ratio (issue 12's target: at most 2).
No assertions: figures only.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scoring.toxitrace.importers import import_dataset  # noqa: E402

COLD = ROOT.parent / "shared" / "data" / "real" / "COLDataset" / "COLDataset"
TOXICN_ROWS = 12_011
WORDS = (
    "地域",
    "男的",
    "女的",
    "黑人",
    "同性恋",
    "河南人",
    "老师",
    "网友",
    "真的",
    "不行",
    "支持",
    "笑死",
    "哈哈",
)


def toxicn_rows(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        toxic = rng.random() < 0.53
        toxic_type = rng.choice((1, 2)) if toxic else 0
        expression = rng.choice((1, 2, 3)) if toxic_type == 2 else 0
        target = [int(toxic_type == 2 and rng.random() < 0.3) for _ in range(5)]
        content = "".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30))) + f"{i}"
        rows.append(
            {
                "platform": rng.choice(("zhihu", "tieba")),
                "topic": rng.choice(("race", "gender", "region", "lgbt")),
                "content": content,
                "toxic": int(toxic),
                "toxic_one_hot": [int(not toxic), int(toxic)],
                "toxic_type": toxic_type,
                "toxic_type_one_hot": [int(toxic_type == 1), int(toxic_type == 2)],
                "expression": expression,
                "expression_one_hot": [int(expression == k) for k in (1, 2, 3)],
                "target": target,
                "length": len(content),
            }
        )
    return rows


def toxicn_csv(rows: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["content", "toxic", "toxic_type", "expression", "target"])
    for r in rows:
        six = [*r["target"], int(not any(r["target"]))]
        writer.writerow([r["content"], r["toxic"], r["toxic_type"], r["expression"], json.dumps(six)])
    return out.getvalue()


def timed(dataset: str, source: Path, repeat: int) -> tuple[float, dict]:
    times, summary = [], {}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            summary = import_dataset(dataset, source, Path(out))
            times.append(time.perf_counter() - start)
    return statistics.median(times), summary


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    if (COLD / "test.csv").is_file():
        seconds, summary = timed("cold", COLD, args.repeat)
        rows = sum(summary["splits"].values())
        size = sum(p.stat().st_size for p in COLD.glob("*.csv")) / 2**20
        print(
            f"COLD (real release, {size:.1f} MiB, {rows:,} rows: {summary['splits']}): "
            f"median {seconds * 1000:.0f} ms over {args.repeat} runs ({rows / seconds:,.0f} rows/s)"
        )
        print(f"  warnings: {len(summary['warnings'])} (first: {summary['warnings'][0]})")
    else:
        print(f"COLD: skipped, the real release is not at {COLD}")

    rows = toxicn_rows(TOXICN_ROWS)
    with tempfile.TemporaryDirectory() as tmp:
        json_dir, csv_dir = Path(tmp) / "json", Path(tmp) / "csv"
        json_dir.mkdir()
        csv_dir.mkdir()
        (json_dir / "test.json").write_text(
            json.dumps(rows, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
        )
        (csv_dir / "test.csv").write_text(toxicn_csv(rows), encoding="utf-8")
        json_s, json_summary = timed("toxicn", json_dir / "test.json", args.repeat)
        csv_s, csv_summary = timed("toxicn", csv_dir / "test.csv", args.repeat)
    assert json_summary["splits"] == csv_summary["splits"] == {"test": TOXICN_ROWS}
    print(
        f"ToxiCN, {TOXICN_ROWS:,} synthetic rows in the release's shape: one-line JSON median "
        f"{json_s * 1000:.0f} ms, CSV median {csv_s * 1000:.0f} ms, JSON/CSV ratio {json_s / csv_s:.2f} "
        "(target <= 2)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
