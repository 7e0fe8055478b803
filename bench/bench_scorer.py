"""Time the VARM scorer against a straightforward implementation on a 1,600-row synthetic test set.

    .venv/bin/python bench/bench_scorer.py [--resamples 1000] [--repeat 5]

Builds a synthetic reference (1,600 rows, 4 cue subsets) and a submission (mostly valid outputs with field
errors, some malformed), then times `VarmTrack.score` (read + parse + all metrics + subsets + bootstrap
CIs) and a naive version (per-row Python loops, scikit-learn metrics recomputed for every resample). Prints
both, the ratio, and whether their numbers agree. No assertions: figures only.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scoring.bootstrap import percentile_ci, resample_indices  # noqa: E402
from scoring.protocol import DISCRETE_FIELDS, FIELDS, parse_output  # noqa: E402
from scoring.varm import VARM_TRACK  # noqa: E402
from scoring.varm_metrics import HEADLINE_CI_METRICS, target_f1  # noqa: E402

N_ROWS = 1600
SUBSETS = ("identity", "status", "body_health", "general_abuse")
TARGETS = ("外地人", "楼主", "女司机", "程序员", "这个主播", "河南人", "胖子", "老师们", "那位网友", "男的")
HARMFUL_CATEGORIES = ("一般辱骂", "地域族群攻击", "性别攻击", "性少数攻击", "阶层职业攻击", "身心疾病攻击")
FILLER = "评论语境中的用词和指向都比较明确，需要结合上下文判断"


def _record(rng: random.Random) -> dict:
    if rng.random() < 0.1:
        return {
            "target": "无明确对象",
            "target_type": "无明确对象",
            "target_explicitness": "无明确对象",
            "stance": rng.choice(("中性提及", "引用或转述")),
            "label": "无害",
            "category": "非攻击",
        }
    harmful = rng.random() < 0.55
    return {
        "target": rng.choice(TARGETS),
        "target_type": rng.choice(("单一对象", "群体对象")),
        "target_explicitness": rng.choice(("明示", "隐含")),
        "stance": "攻击或认同" if harmful else rng.choice(("反对攻击", "引用或转述", "中性提及")),
        "label": "有害" if harmful else "无害",
        "category": rng.choice(HARMFUL_CATEGORIES) if harmful else "非攻击",
    }


def _output(r: dict) -> str:
    return (
        f"分析：这条评论针对的是[T:{r['target']}]，它属于[TY:{r['target_type']}]，"
        f"评论里的指向是[TT:{r['target_explicitness']}]，作者的态度为[S:{r['stance']}]，"
        f"综合判断该内容[L:{r['label']}]，类别归为[C:{r['category']}]，理由是{FILLER}。"
    )


def build(directory: Path, seed: int = 7) -> bytes:
    """Write test.jsonl + subsets/ into `directory`; return the submission bytes."""
    rng = random.Random(seed)
    gold, preds = [], []
    for i in range(N_ROWS):
        record = _record(rng)
        row_id = f"t{i:05d}"
        gold.append(
            {
                "id": row_id,
                "text": f"第{i}条评论：{record['target']}相关的内容",
                **record,
                "cot": _output(record),
            }
        )
        guess = dict(record)
        roll = rng.random()
        if roll < 0.25:
            guess["target"] = rng.choice(TARGETS)
        elif roll < 0.35:
            guess["target_explicitness"] = "隐含" if record["target_explicitness"] == "明示" else "明示"
        if rng.random() < 0.15:
            guess = _record(rng)
        out = _output(guess)
        roll = rng.random()
        if roll < 0.03:
            out = out.replace("[", "【").replace("]", "】")
        elif roll < 0.05:
            out = out.replace("分析：", "")
        elif roll < 0.06:
            out = out + "\n补充说明。"
        preds.append({"id": row_id, "output": out})
    (directory / "subsets").mkdir(parents=True, exist_ok=True)
    (directory / "test.jsonl").write_text("".join(json.dumps(g, ensure_ascii=False) + "\n" for g in gold))
    for k, name in enumerate(SUBSETS):
        rows = [g for i, g in enumerate(gold) if i % 4 == k or rng.random() < 0.05]
        (directory / "subsets" / f"{name}.jsonl").write_text(
            "".join(json.dumps(g, ensure_ascii=False) + "\n" for g in rows)
        )
    return "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds).encode()


# --- The straightforward implementation (per-row loops, scikit-learn per resample) -------------------


def naive_metrics(gold: list[dict], parsed: list, rows: list[int]) -> dict[str, float]:
    n = len(rows)
    correct = {name: 0 for name in FIELDS}
    jrem = 0
    t_f1_sum = 0.0
    valid = anchor_valid = 0
    gold_values = {name: [] for name in DISCRETE_FIELDS}
    pred_values = {name: [] for name in DISCRETE_FIELDS}
    for i in rows:
        out, ref = parsed[i], gold[i]
        ok = out.schema_valid
        valid += ok
        anchor_valid += out.anchor_schema_valid
        f1 = target_f1(out.record["target"], ref["target"]) if ok else 0.0
        t_f1_sum += f1
        row_correct = {"target": ok and f1 >= 0.5}
        for name in DISCRETE_FIELDS:
            row_correct[name] = ok and out.record[name] == ref[name]
            gold_values[name].append(ref[name])
            pred_values[name].append(out.record[name] if ok else "<invalid>")
        for name in FIELDS:
            correct[name] += row_correct[name]
        jrem += all(row_correct.values())
    result = {
        "jrem": jrem / n,
        "parse_success": valid / n,
        "anchor_schema_valid": anchor_valid / n,
        "t_f1": t_f1_sum / n,
    }
    for name in FIELDS:
        result[f"field_accuracy.{name}"] = correct[name] / n
    result["her_c"] = (correct["category"] - jrem) / correct["category"] if correct["category"] else 0.0
    result["her_l"] = (correct["label"] - jrem) / correct["label"] if correct["label"] else 0.0
    for name in DISCRETE_FIELDS:
        result[f"macro_f1.{name}"] = float(
            f1_score(
                gold_values[name],
                pred_values[name],
                labels=sorted(set(gold_values[name])),
                average="macro",
                zero_division=0,
            )
        )
    return result


def naive_score(directory: Path, data: bytes, resamples: int, seed: int) -> dict:
    gold = [json.loads(line) for line in (directory / "test.jsonl").read_text().splitlines() if line.strip()]
    preds = {obj["id"]: obj["output"] for obj in map(json.loads, data.decode().splitlines())}
    parsed = [parse_output(preds[g["id"]]) for g in gold]
    everything = list(range(len(gold)))
    result = {"metrics": naive_metrics(gold, parsed, everything), "subsets": {}}
    position = {g["id"]: i for i, g in enumerate(gold)}
    for name in SUBSETS:
        text = (directory / "subsets" / f"{name}.jsonl").read_text()
        rows = sorted(position[json.loads(line)["id"]] for line in text.splitlines() if line.strip())
        result["subsets"][name] = naive_metrics(gold, parsed, rows)
    indices = resample_indices(len(gold), resamples, seed)
    per_resample = [naive_metrics(gold, parsed, list(idx)) for idx in indices]
    result["ci"] = {
        key: percentile_ci(np.array([m[key] for m in per_resample])) for key in HEADLINE_CI_METRICS
    }
    return result


def _flat(d: dict, prefix: str = "") -> dict[str, float]:
    out = {}
    for key, value in d.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of the fast scorer (median shown)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        data = build(directory)
        start = time.perf_counter()
        refs = VARM_TRACK.load_references(directory)
        load_ms = (time.perf_counter() - start) * 1000
        VARM_TRACK.score(refs, data, bootstrap=args.resamples, seed=0)  # warm-up (imports, caches)
        times, cpu_times = [], []
        for _ in range(args.repeat):
            start, cpu = time.perf_counter(), time.process_time()
            fast = VARM_TRACK.score(refs, data, bootstrap=args.resamples, seed=0)
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu)
        fast_s, fast_cpu = statistics.median(times), statistics.median(cpu_times)
        start, cpu = time.perf_counter(), time.process_time()
        naive = naive_score(directory, data, args.resamples, seed=0)
        naive_s, naive_cpu = time.perf_counter() - start, time.process_time() - cpu

    fast_flat = _flat({"metrics": fast["metrics"]})
    naive_flat = {f"metrics.{k}": v for k, v in naive["metrics"].items()}
    agree_points = all(abs(fast_flat[k] - v) <= 1e-12 for k, v in naive_flat.items())
    agree_subsets = all(
        abs(_flat(fast["subsets"][s])[k] - v) <= 1e-12
        for s in SUBSETS
        for k, v in naive["subsets"][s].items()
    )
    agree_ci = all(np.allclose(fast["ci"][k], naive["ci"][k], atol=1e-12) for k in HEADLINE_CI_METRICS)
    print(
        f"rows={N_ROWS} subsets={len(SUBSETS)} resamples={args.resamples} "
        f"(references loaded once: {load_ms:.1f} ms)"
    )
    # CPU time is printed too: on a shared machine wall time also measures the neighbours.
    print(
        f"fast  VarmTrack.score : {fast_s * 1000:8.1f} ms wall, {fast_cpu * 1000:8.1f} ms CPU "
        f"(median of {args.repeat})"
    )
    print(f"naive loops + sklearn : {naive_s * 1000:8.1f} ms wall, {naive_cpu * 1000:8.1f} ms CPU")
    print(f"speed-up              : {naive_s / fast_s:8.1f}x wall, {naive_cpu / fast_cpu:6.1f}x CPU")
    print(
        f"results agree         : metrics={agree_points} subsets={agree_subsets} ci={agree_ci}  "
        f"(JREM {fast['metrics']['jrem']:.4f}, CI {fast['ci']['jrem']})"
    )


if __name__ == "__main__":
    main()
