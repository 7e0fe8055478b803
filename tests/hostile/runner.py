"""Drive the hostile corpus through the scorer in subprocesses (`probe.py`) and judge each answer.

Shared by `tests/test_hostile_scorer.py` (CI) and `bench/bench_hostile.py` (figures).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from . import corpus

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

# Bounds a hostile upload must stay within at the scorer (validation only, no gold involved).
LIGHT_SECONDS = 5.0
LIGHT_PY_PEAK = 96 * corpus.MiB  # tracemalloc peak for files up to ~3 MB
HEAVY_SECONDS = 30.0
HEAVY_RSS_OVER_FILE = 6  # peak RSS of the probe process ≤ base + 6 × file size
BASE_RSS = 256 * corpus.MiB
MAX_REPORT_BYTES = 256 * 1024  # a report is shown in a browser; 200 capped errors must stay small
MAX_MESSAGE_CHARS = 2_000


def synthetic_inputs(track: str, n: int = 120) -> list[dict]:
    """Public-input-shaped rows (no gold) for gold-independent validation."""
    return [{"id": f"{track}-{i:05d}", "text": f"第{i}条测试文本，内容用于结构校验。"} for i in range(n)]


def demo_inputs(track: str) -> list[dict] | None:
    """The demo bundle's public inputs when the demo data and the track exist, else None."""
    path = ROOT / "data" / "demo" / track / "test.jsonl"
    if not path.exists():
        return None
    from scoring.tracks import get_track

    tr = get_track(track)
    return tr.public_inputs(tr.load_references(path))


def available_tracks() -> list[str]:
    """Tracks whose scorer imports right now (the scorer is built in parallel)."""
    from scoring.tracks import TRACK_NAMES, get_track

    out = []
    for name in TRACK_NAMES:
        try:
            get_track(name)
        except (ValueError, ImportError):
            continue
        out.append(name)
    return out


@dataclass
class Verdict:
    track: str
    case: str
    expect: str
    held: bool
    why: str
    seconds: float
    py_peak: int | None
    rss: int | None
    bytes: int


def run_probe(
    items: list[dict], inputs: dict[str, list[dict]], tmp: Path, *, trace: bool = True, timeout: float = 120
) -> tuple[list[dict], int]:
    """Run probe.py on `items`; returns (per-item results, max RSS of the process)."""
    job = tmp / f"job-{os.getpid()}-{id(items)}.json"
    job.write_text(json.dumps({"inputs": inputs, "items": items, "tracemalloc": trace}))
    proc = subprocess.run(
        [PYTHON, "-m", "tests.hostile.probe", str(job)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    results = [x for x in lines if "case" in x]
    rss = next((x["max_rss_bytes"] for x in lines if "max_rss_bytes" in x), -1)
    if proc.returncode != 0 or len(results) != len(items):
        done = {(r["track"], r["case"]) for r in results}
        for item in items:
            if (item["track"], item["case"]) not in done:
                results.append(
                    {
                        "track": item["track"],
                        "case": item["case"],
                        "ok": False,
                        "seconds": 0.0,
                        "error": f"probe process died (rc {proc.returncode})",
                        "traceback": proc.stderr[-2000:],
                    }
                )
    return results, rss


def judge(case: corpus.FileCase, result: dict, rss: int | None, size: int) -> tuple[bool, str]:
    """Did the scorer's answer hold for this case?"""
    if not result.get("ok"):
        return False, f"exception: {result.get('error')}"
    heavy = case.heavy
    limit_s = HEAVY_SECONDS if heavy else LIGHT_SECONDS
    if result["seconds"] > limit_s:
        return False, f"took {result['seconds']:.1f} s (limit {limit_s:.0f} s)"
    if not heavy and result.get("py_peak_bytes", 0) > LIGHT_PY_PEAK:
        return False, f"tracemalloc peak {result['py_peak_bytes'] / corpus.MiB:.0f} MiB"
    if heavy and rss is not None and rss > BASE_RSS + HEAVY_RSS_OVER_FILE * size:
        return False, f"peak RSS {rss / corpus.MiB:.0f} MiB for a {size / corpus.MiB:.0f} MiB file"
    if not result.get("encodable", True):
        return False, "the report cannot be encoded as UTF-8 (lone surrogate copied into a message)"
    if result["report_bytes"] > MAX_REPORT_BYTES:
        return False, f"report is {result['report_bytes']:,} bytes"
    if result["max_message_chars"] > MAX_MESSAGE_CHARS:
        return False, f"a message is {result['max_message_chars']:,} characters"
    if case.expect == "accept" and not result["valid"]:
        return False, f"tolerated input rejected: {result['first']}"
    if case.expect == "reject":
        if result["valid"]:
            return False, "accepted (expected a validation error)"
        if result["errors_total"] < 1 or not result["first"] or not result["first"].get("message"):
            return False, "rejected without a message"
        if case.line_numbered and result["first"].get("line") is None:
            return False, f"first problem has no line number: {result['first']}"
    return True, "valid" if result["valid"] else f"rejected: {result['first']['message'][:90]}"


def run_cases(
    tracks: list[str],
    tmp: Path,
    *,
    heavy: bool,
    inputs: dict[str, list[dict]] | None = None,
    only: set[str] | None = None,
) -> list[Verdict]:
    """Write each case to `tmp`, probe it, judge it. Light cases share one process per track; heavy
    cases get a process each (so their RSS is theirs)."""
    inputs = inputs or {t: synthetic_inputs(t) for t in tracks}
    verdicts: list[Verdict] = []
    for track in tracks:
        cases = [c for c in corpus.file_cases(track, heavy=heavy) if only is None or c.name in only]
        batches = [[c] for c in cases] if heavy else [cases]
        for batch in batches:
            items, sizes = [], {}
            for case in batch:
                path = corpus.write_case(case, inputs[track], track, tmp / f"{track}-{case.name}.jsonl")
                sizes[case.name] = path.stat().st_size
                items.append(
                    {"track": track, "case": case.name, "path": str(path), "bytes": sizes[case.name]}
                )
            results, rss = run_probe(items, {track: inputs[track]}, tmp, trace=not heavy)
            for result in results:
                case = corpus.CASES[result["case"]]
                held, why = judge(case, result, rss if heavy else None, sizes[case.name])
                verdicts.append(
                    Verdict(
                        track,
                        case.name,
                        case.expect,
                        held,
                        why,
                        result.get("seconds", 0.0),
                        result.get("py_peak_bytes"),
                        rss if heavy else None,
                        sizes[case.name],
                    )
                )
            for item in items:
                Path(item["path"]).unlink(missing_ok=True)
    return verdicts
