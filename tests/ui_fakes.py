"""Synthetic leaderboards and an in-memory Service double for the UI tests and the UI benchmark.

Rows are built with the pipeline's own `worker.leaderboard.build_rows` from result dicts shaped exactly
like ARCHITECTURE §2, so the UI is exercised on the real row format. Validation uses the real scorer
against the committed demo public inputs.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from worker.leaderboard import Entry, build_rows, metric, to_parquet

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
PRIMARY = {"varm": "jrem", "cold": "f1", "toxicn": "f1", "cntp": "spans.overlap_f1"}
FIELDS = ("target", "target_type", "target_explicitness", "stance", "label", "category")
SUBSETS = ("body_health_disability", "demographic_identity", "general_abuse", "social_status_role")
FORMAT_ISSUES = (
    "anchor_sequence_or_value_invalid",
    "anchors_not_naturally_integrated",
    "multiple_paragraphs",
    "missing_analysis_prefix",
    "length_out_of_range",
    "insufficient_reasoning_text",
    "forbidden_wrapper",
    "placeholder_value",
    "label_category_inconsistent",
    "no_target_fields_inconsistent",
    "stance_label_inconsistent",
)
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


class FakeStore:
    """Just enough of the Store protocol for the UI: a results area held in memory."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.rev = 0
        self.lock = threading.Lock()

    def head(self, area: str) -> str:
        return f"rev{self.rev}"

    def read(self, area: str, path: str, revision: str | None = None) -> bytes | None:
        return self.files.get(path)

    def list(self, area: str, prefix: str = "") -> list[str]:
        return sorted(p for p in self.files if p.startswith(prefix))

    def commit(
        self, area: str, add: dict[str, bytes], delete: list[str], message: str, parent: str | None = None
    ) -> str:
        with self.lock:
            self.files.update(add)
            for p in delete:
                self.files.pop(p, None)
            self.rev += 1
            return f"rev{self.rev}"


@dataclass
class FakeConfig:
    maintainers: tuple[str, ...] = ("boss",)
    data_dir: Path = Path("data")
    store: str = "local"


class QuotaExceeded(Exception):
    def __init__(self, next_slot_at: str) -> None:
        super().__init__(f"quota reached; next slot {next_slot_at}")
        self.next_slot_at = next_slot_at


@dataclass
class FakeService:
    """In-memory Service double: submissions advance one lifecycle step per status poll."""

    n: int = 12
    xss: bool = True
    config: FakeConfig = field(default_factory=FakeConfig)
    quota_limit: int = 5
    parquet: bool = True  # publish leaderboard.parquet too, as the real pipeline does

    def __post_init__(self) -> None:
        self.store = FakeStore()
        self.entries = {t: make_entries(t, self.n, xss=self.xss) for t in PRIMARY}
        self.subs: dict[str, dict] = {}
        self.moderations: list[dict] = []
        self.publish()

    def publish(self) -> None:
        add = {}
        for track, entries in self.entries.items():
            visible = [e for e in entries if not e.record.get("hidden")]
            rows = board_rows(visible, track)
            add[f"{track}/leaderboard.json"] = json.dumps(
                {
                    "track": track,
                    "generated_at": "2026-12-02T12:00:00Z",
                    "scorer_version": "1.0.0",
                    "rows": rows,
                }
            ).encode()
            if self.parquet and rows:
                add[f"{track}/leaderboard.parquet"] = to_parquet(rows)
            for e in entries:
                sid = e.record["submission_id"]
                add[f"{track}/results/{sid}/v1.json"] = json.dumps(
                    {"submission": e.record, "version": 1, "result": e.result}
                ).encode()
        self.store.commit("results", add, [], "publish")

    # -- Service API -------------------------------------------------------------------------------------
    def is_maintainer(self, identity: str) -> bool:
        return identity.casefold() in {m.casefold() for m in self.config.maintainers}

    def leaderboard(self, track: str) -> dict:
        raw = self.store.read("results", f"{track}/leaderboard.json")
        return json.loads(raw) if raw else {"track": track, "rows": []}

    def public_file(self, track: str, name: str) -> bytes | None:
        path = DEMO / track / ("public/test_inputs.jsonl" if name == "test_inputs.jsonl" else name)
        return path.read_bytes() if name in ("test_inputs.jsonl", "dev.jsonl") and path.is_file() else None

    def validate(self, track: str, data: bytes) -> dict:
        from scoring.tracks import get_track

        inputs = [
            json.loads(x) for x in self.public_file(track, "test_inputs.jsonl").splitlines() if x.strip()
        ]
        return get_track(track).check_predictions(data, inputs).as_dict()

    def quota(self, identity: str, track: str) -> dict:
        used = sum(1 for s in self.subs.values() if s["submitter"] == identity and s["track"] == track)
        return {
            "limit": self.quota_limit,
            "used": used,
            "remaining": max(0, self.quota_limit - used),
            "next_slot_at": None if used < self.quota_limit else "2026-12-03T00:00:00Z",
        }

    def submit(self, *, identity: str, track: str, data: bytes, metadata: dict) -> dict:
        report = self.validate(track, data)
        q = self.quota(identity, track)
        if not report["valid"]:
            return {
                "submission_id": None,
                "status": "rejected",
                "report": report,
                "duplicate": False,
                "quota": q,
            }
        if q["remaining"] <= 0:
            raise QuotaExceeded("2026-12-03T00:00:00Z")
        sid = secrets.token_hex(8)
        self.subs[sid] = {
            "submission_id": sid,
            "track": track,
            "submitter": identity,
            "metadata": metadata,
            "status": "queued",
            "history": [],
            "versions": [],
            "is_baseline": False,
            "verified": False,
            "created_at": "2026-12-02T12:00:00Z",
            "error": None,
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        return {
            "submission_id": sid,
            "status": "queued",
            "report": report,
            "duplicate": False,
            "quota": self.quota(identity, track),
        }

    def submission(self, submission_id: str) -> dict | None:
        sub = self.subs.get(submission_id)
        if sub is not None:
            steps = ("queued", "scoring", "scored", "published")
            i = steps.index(sub["status"]) if sub["status"] in steps else 3
            if i < 3:
                sub["status"] = steps[i + 1]
                sub["history"].append({"status": sub["status"], "at": "2026-12-02T12:00:01Z", "note": ""})
                if sub["status"] == "published":
                    rng = random.Random(submission_id)
                    result = (
                        varm_result(rng, 0.9)
                        if sub["track"] == "varm"
                        else toxi_result(sub["track"], rng, 0.9)
                    )
                    version = {
                        "version": 1,
                        "scorer_version": "1.0.0",
                        "references_sha256": "ab" * 32,
                        "scored_at": "2026-12-02T12:00:02Z",
                    }
                    sub["versions"] = [version]
                    sub["result"] = {"version": 1, "result": result}
                    self.entries[sub["track"]].append(Entry(dict(sub), version, result))
                    self.publish()
            return dict(sub)
        for entries in self.entries.values():
            for e in entries:
                if e.record["submission_id"] == submission_id:
                    return {
                        **e.record,
                        "status": "published",
                        "error": None,
                        "history": [],
                        "versions": [e.version],
                        "result": {"version": 1, "result": e.result},
                    }
        return None

    def compare(self, a_id: str, b_id: str) -> dict:
        a, b = self.submission(a_id), self.submission(b_id)
        if not a or not b:
            raise ValueError("unknown submission id")
        ra, rb = a["result"]["result"]["metrics"], b["result"]["result"]["metrics"]
        out = {}
        for key in ("jrem", "her_c", "t_f1") if "jrem" in ra else ("f1", "accuracy"):
            d = ra[key] - rb[key]
            out[key] = {
                "a": ra[key],
                "b": rb[key],
                "diff": d,
                "ci": [d - 0.02, d + 0.02],
                "significant": abs(d) > 0.02,
            }
        return out

    def rescore(self, track: str, dry_run: bool, actor: str) -> dict:
        """Writes a report shaped like worker.rescore.report at once (the real one comes from a worker)."""
        subs = []
        for rank, e in enumerate(self.entries[track][:2], start=1):
            old = {"jrem": 0.5, "her_c": 0.3} if track == "varm" else {"f1": 0.5}
            new = {k: v + 0.01 for k, v in old.items()}
            subs.append(
                {
                    "submission_id": e.record["submission_id"],
                    "model_name": e.record["metadata"]["model_name"],
                    "old": old,
                    "new": new,
                    "delta": {k: 0.01 for k in old},
                    "old_rank": rank,
                    "new_rank": rank,
                    "skipped": False,
                    "error": None,
                }
            )
        report = {
            "track": track,
            "run": "20261202T120000Z",
            "actor": actor,
            "dry_run": dry_run,
            "scorer_version": "1.0.1",
            "summary": {"submissions": 2, "rank_changes": 0},
            "submissions": subs,
        }
        path = f"rescore/{track}/20261202T120000Z" + ("/report.json" if dry_run else ".json")
        self.store.commit(
            "submissions" if dry_run else "results", {path: json.dumps(report).encode()}, [], "rescore"
        )
        return {"task_id": "t-1", "track": track, "dry_run": dry_run}

    def moderate(
        self, submission_id: str, *, actor: str, hidden=None, verified=None, is_baseline=None, reason: str
    ) -> dict:
        self.moderations.append({"id": submission_id, "actor": actor, "hidden": hidden, "reason": reason})
        for entries in self.entries.values():
            for e in entries:
                if e.record["submission_id"] == submission_id:
                    if hidden is not None:
                        e.record["hidden"] = hidden
                    self.publish()
                    return {"submission_id": submission_id, "hidden": e.record.get("hidden", False)}
        raise ValueError("unknown submission id")
