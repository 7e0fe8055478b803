"""Pure data factories for the UI tests and the UI benchmark (no store, no service, no doubles).

- `varm_result`, `toxi_result`, `make_entries`, `board_rows`: synthetic scorer results shaped exactly like
  ARCHITECTURE §2, turned into leaderboard rows by the pipeline's own `worker.leaderboard.build_rows`.
- `mixed_predictions`: a real predictions file of a chosen skill (gold rows mixed with a demo baseline's
  rows), for tests that submit or score through the real pipeline.
- `submission_view`: the dict `Service.submission(id)` returns for a published entry (its key set is
  checked against the real Service in tests/test_ui_api.py).
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scoring.protocol import FIELDS, FORMAT_ISSUES
from scoring.tracks import PRIMARY_METRICS, get_track, metric_spec
from worker.leaderboard import Entry, build_rows, metric
from worker.records import PUBLIC_FIELDS

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
PRIMARY = PRIMARY_METRICS  # scoring.tracks: said once
SUBSETS = ("body_health_disability", "demographic_identity", "general_abuse", "social_status_role")
XSS_NAME = "<img src=x onerror=alert(1)>"


def _ci(v: float, rng: random.Random) -> list[float]:
    w = rng.uniform(0.01, 0.04)
    return [max(0.0, v - w), min(1.0, v + w)]


def varm_result(rng: random.Random, skill: float) -> dict:
    """A plausible VARM result: labels easy, full records hard (the paper's central gap)."""
    acc = {
        "label": min(0.99, 0.75 + 0.24 * skill),
        "category": min(0.97, 0.6 + 0.3 * skill),
        "stance": 0.5 + 0.35 * skill,
        "target_type": 0.55 + 0.35 * skill,
        "target_explicitness": 0.45 + 0.35 * skill,
        "target": 0.35 + 0.4 * skill,
    }
    acc = {k: round(min(1.0, max(0.0, v + rng.uniform(-0.03, 0.03))), 6) for k, v in acc.items()}
    jrem = round(min(acc.values()) * rng.uniform(0.75, 0.92), 6)
    her_c = (acc["category"] - jrem) / acc["category"]
    her_l = (acc["label"] - jrem) / acc["label"]
    macro = {f: round(acc[f] - rng.uniform(0.0, 0.05), 6) for f in FIELDS[1:]}
    parse = round(min(1.0, 0.8 + 0.2 * skill + rng.uniform(-0.02, 0.02)), 6)
    metrics = {
        "field_accuracy": acc,
        "jrem": jrem,
        "her_c": her_c,
        "her_l": her_l,
        "macro_f1": macro,
        "t_f1": round(acc["target"] + 0.05, 6),
        "parse_success": parse,
        "anchor_schema_valid": parse,
    }
    subsets = {}
    for name in SUBSETS:
        h = min(1.0, jrem + rng.uniform(0.02, 0.2))
        nh = max(0.0, jrem - rng.uniform(0.05, 0.25))
        subsets[name] = {
            "rows": 100,
            "rows_harmful": 60,
            "rows_non_harmful": 40,
            "jrem": (h * 60 + nh * 40) / 100,
            "jrem_harmful": h,
            "jrem_non_harmful": nh,
            "jrem_gap": h - nh,
            "her_c": her_c,
            "her_l": her_l,
            "t_f1": metrics["t_f1"],
            "parse_success": parse,
            "anchor_schema_valid": parse,
            "field_accuracy": dict(acc),
            "macro_f1": dict(macro),
        }
    issues = {i: 0 for i in FORMAT_ISSUES}
    bad = int(round((1 - parse) * 400))
    for _ in range(bad):
        issues[rng.choice(FORMAT_ISSUES[:6])] += 1
    ci = {
        "jrem": _ci(jrem, rng),
        "macro_f1.label": _ci(macro["label"], rng),
        "macro_f1.category": _ci(macro["category"], rng),
        "parse_success": _ci(parse, rng),
    }
    ci.update({f"field_accuracy.{f}": _ci(acc[f], rng) for f in FIELDS})
    return {
        "track": "varm",
        "rows": 400,
        "metrics": metrics,
        "ci": ci,
        "format_issues": issues,
        "subsets": subsets,
    }


def toxi_result(track: str, rng: random.Random, skill: float) -> dict:
    p, r = 0.6 + 0.35 * skill * rng.uniform(0.9, 1.0), 0.6 + 0.35 * skill * rng.uniform(0.85, 1.0)
    f1 = 2 * p * r / (p + r)
    metrics: dict = {"accuracy": (f1 + 0.02), "precision": p, "recall": r, "f1": f1, "macro_f1": f1 - 0.01}
    ci = {"f1": _ci(f1, rng), "accuracy": _ci(f1 + 0.02, rng)}
    if track == "cntp":
        o = 0.3 + 0.5 * skill
        metrics["spans"] = {
            "overlap_precision": o,
            "overlap_recall": o + 0.05,
            "overlap_f1": o + 0.02,
            "recipe_overlap": o - 0.1,
            "char_precision": o,
            "char_recall": o,
            "char_f1": o,
            "iou": o - 0.05,
        }
        ci["spans.overlap_f1"] = _ci(o + 0.02, rng)
    fields = {
        "cold": {"topic": ("race", "gender", "region"), "fine_grained_label": ("0", "1", "2", "3")},
        "toxicn": {
            "expression": ("0", "1", "2", "3"),
            "target_groups": ("LGBTQ", "Region", "Sexism", "Racism", "others", "non-hate"),
        },
        "cntp": {},
    }[track]
    breakdowns = {
        fld: {
            v: {
                "rows": 50,
                "accuracy": f1 + rng.uniform(-0.1, 0.05),
                "precision": p,
                "recall": r,
                "f1": max(0.0, f1 + rng.uniform(-0.2, 0.05)),
                "macro_f1": f1 - 0.02,
            }
            for v in values
        }
        for fld, values in fields.items()
    }
    return {"track": track, "rows": 200, "metrics": metrics, "ci": ci, "breakdowns": breakdowns}


def make_entries(track: str, n: int, seed: int = 0, *, baselines: int = 3, xss: bool = False) -> list[Entry]:
    """`n` published (record, version, result) entries; the first `baselines` are baselines."""
    rng = random.Random(f"{track}-{seed}")
    base = datetime(2026, 11, 1, tzinfo=UTC)
    names = ["majority", "lexicon", "char-ngram"]
    orgs = ["THU", "NUAA", "DUT", "Acme AI", "OpenLab", ""]
    entries = []
    for i in range(n):
        skill = rng.random() if i >= baselines else (0.05, 0.2, 0.35)[i % 3]
        result = varm_result(rng, skill) if track == "varm" else toxi_result(track, rng, skill)
        sid = hashlib.sha256(f"{track}-{seed}-{i}".encode()).hexdigest()[:16]
        is_baseline = i < baselines
        name = names[i % 3] if is_baseline else f"model-{i:05d}"
        if xss and i == baselines:
            name = XSS_NAME
        created = (base + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")
        record = {
            "submission_id": sid,
            "track": track,
            "sha256": hashlib.sha256(sid.encode()).hexdigest(),
            "submitter": "baseline" if is_baseline else f"user{i % 50}",
            "is_baseline": is_baseline,
            "verified": i % 7 == 0,
            "created_at": created,
            "metadata": {
                "model_name": name,
                "organisation": "demo" if is_baseline else orgs[i % len(orgs)],
                "model_type": "" if is_baseline else ("open", "closed")[i % 2],
                "setting": "" if is_baseline else ("zero-shot", "taxonomy", "fine-tuned")[i % 3],
                "paper_url": "",
                "code_url": "",
                "description": "",
            },
        }
        version = {
            "version": 1,
            "scorer_version": "1.0.0",
            "references_sha256": "ab" * 32,
            "scored_at": created,
        }
        result["provenance"] = {
            "scorer_version": "1.0.0",
            "references_sha256": "ab" * 32,
            "predictions_sha256": record["sha256"],
        }
        result["scorer_version"] = "1.0.0"
        result["bootstrap"] = {"resamples": 1000, "seed": 0, "level": 0.95}
        entries.append(Entry(record, version, result))
    return entries


def board_rows(entries: list[Entry], track: str) -> list[dict]:
    primary = PRIMARY[track]

    def below(a: Entry, b: Entry) -> bool:
        # Stand-in for the paired bootstrap: more than 2 points behind the group leader.
        return (metric(a.result, primary) or 0) - (metric(b.result, primary) or 0) > 0.02

    return build_rows(entries, primary, below)


def submission_view(entry: Entry, status: str = "published") -> dict:
    """What `Service.submission(id)` returns for `entry` (public fields, lifecycle, latest result)."""
    record = entry.record
    created = record["created_at"]
    primary = get_track(record["track"]).primary_metric
    return {
        **{k: record.get(k) for k in PUBLIC_FIELDS},
        "status": status,
        "error": None,
        "report": None,
        "hidden": bool(record.get("hidden", False)),
        "private": False,
        "updated_at": entry.version["scored_at"],
        "history": [
            {"status": "received", "at": created, "note": "upload validated"},
            {"status": "queued", "at": created, "note": "waiting for a worker"},
            {"status": "scoring", "at": created, "note": "attempt 1"},
            {"status": "scored", "at": created, "note": "scored as version 1"},
            {"status": "published", "at": created, "note": "on the leaderboard as version 1"},
        ],
        "versions": [entry.version],
        "format_report": {"entries": [], "total": 0, "advice": []} if record["track"] == "varm" else None,
        "result": {"version": entry.version["version"], "result": entry.result},
        "released": True,
        "not_released": None,
        "primary_metric": primary,
        "primary_metric_label": metric_spec(record["track"], primary).header(),
    }


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def mixed_predictions(track: str, skill: float, seed: object = 0, base: str = "lexicon") -> bytes:
    """A valid predictions file for the demo test set: each row is the gold answer with probability
    `skill`, else the demo baseline `base`'s answer. Different seeds give different files (sha256)."""
    gold = _jsonl(DEMO / track / "test.jsonl")
    other = {row["id"]: row for row in _jsonl(DEMO / track / "baselines" / f"{base}.test.jsonl")}
    rng = random.Random(f"{track}-{skill}-{seed}")
    lines = []
    for ref in gold:
        if rng.random() < skill:
            if track == "varm":
                pred = {"id": ref["id"], "output": ref["cot"]}
            else:
                pred = {"id": ref["id"], "label": ref["label"]}
                if "spans" in ref:
                    pred["spans"] = ref["spans"]
        else:
            pred = other[ref["id"]]
        lines.append(json.dumps(pred, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode()


def public_slice_result(store, track: str, data: bytes, *, bootstrap: int = 1000) -> dict:
    """What the board shows for `data` on a private test (../shared/spec/disclosure.md §2-3), computed apart
    from the worker: the scorer's result on the track's public slice alone (the slice key read from the
    references area), every float rounded by the gate."""
    from scoring.disclosure import rounded
    from scoring.slices import parse_slice_key, public_mask
    from scoring.tracks import get_track

    snapshot = store.local_snapshot("references") / track
    scorer = get_track(track)
    subsets = snapshot / "subsets"
    refs = scorer.load_references(snapshot / "test.jsonl", subsets if subsets.is_dir() else None)
    key = parse_slice_key((snapshot / "slice_key.txt").read_text())
    keep = {refs.ids[k] for k, public in enumerate(public_mask(key, refs.ids, refs.strata())) if public}
    lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    part = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines if x["id"] in keep).encode()
    rows = [k for k, item_id in enumerate(refs.ids) if item_id in keep]
    return rounded(scorer.score(refs.restricted(rows), part, bootstrap=bootstrap, seed=0))
