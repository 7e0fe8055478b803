"""Regenerate docs/RELIABILITY.md: run the reliability tests and benches, then tabulate what each proves.

    .venv/bin/python bench/reliability.py            # tests + bench_hostile + bench_load (~10 min)
    .venv/bin/python bench/reliability.py --quick    # tests + scorer-level bench_hostile only
    .venv/bin/python bench/reliability.py --tests-only  # tests; bench figures kept from the last run
    .venv/bin/python bench/reliability.py --no-run   # re-render from the last run's files in bench/out/

Tests write their figures to bench/out/figures/ (RELIABILITY_FIGURES_DIR), pytest its JUnit XML to
bench/out/reliability-junit.xml, the benches their JSON to bench/out/{hostile,load}.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
FIG = OUT / "figures"
JUNIT = OUT / "reliability-junit.xml"
DOC = ROOT / "docs" / "RELIABILITY.md"
TEST_FILES = [
    "tests/test_hostile_scorer.py",
    "tests/test_hostile_rest.py",
    "tests/test_hostile_openapi.py",
    "tests/test_leakage.py",
    "tests/test_faults.py",
    "tests/test_fault_isolation.py",
    "tests/test_torn_objects.py",
    "tests/test_http_limits.py",
    "tests/test_disk_full.py",
    "tests/test_store_unavailable.py",
]

# (test id prefix "file::function", what it proves, figures key or None)
ROWS: list[tuple[str, str, str | None]] = [
    (
        "test_hostile_scorer.py::test_corpus_has_at_least_40_crafted_uploads",
        "The generator yields ≥ 40 crafted uploads per track (plus hostile metadata).",
        "corpus",
    ),
    (
        "test_hostile_scorer.py::test_light_case_held",
        "Every light crafted file gets the expected clean answer from `check_predictions` (reject with a "
        "line-numbered problem / accept tolerated quirks), in a subprocess, < 5 s, tracemalloc < 96 MiB, "
        "report < 256 KiB and UTF-8 encodable.",
        "hostile_scorer_light",
    ),
    (
        "test_hostile_scorer.py::test_heavy_case_held",
        "A single 50 MB line, a 64 MiB + 1 byte file and 10 million lines are refused in bounded time "
        "and RSS.",
        "hostile_scorer_heavy",
    ),
    (
        "test_hostile_scorer.py::test_cli_validate_rejects_cleanly",
        "`python -m scoring validate` answers hostile files with exit ≠ 0, a message, no traceback.",
        None,
    ),
    (
        "test_hostile_rest.py::test_hostile_upload_answered_cleanly",
        "`POST /api/v1/submissions` of the running service answers each crafted file with 413/422 + JSON "
        "line-numbered errors (or 202 for tolerated quirks), no traceback, health still 200.",
        "hostile_rest",
    ),
    (
        "test_hostile_rest.py::test_rejected_uploads_stored_nothing",
        "No submission record appears for any rejected upload.",
        None,
    ),
    (
        "test_hostile_rest.py::test_hostile_metadata_refused_or_inert",
        "Model names/URLs with HTML/JS, `..`, separators, control characters, 10 KB, `javascript:`/`data:` "
        "are refused (422) or stored inert under a 16-hex id, never granting verified/baseline.",
        None,
    ),
    (
        "test_hostile_rest.py::test_probing_request_refused",
        "Probing requests (path traversal, gold file names, bad identities, lying Content-Length, bad "
        "multipart) get 4xx.",
        None,
    ),
    (
        "test_hostile_rest.py::test_service_still_healthy_and_no_traceback_logged",
        "After all hostile cases the service is healthy and its log holds no traceback.",
        None,
    ),
    (
        "test_hostile_openapi.py::test_openapi_fuzz_has_no_server_errors",
        "schemathesis fuzzing of every OpenAPI operation finds no 5xx.",
        "openapi_fuzz",
    ),
    (
        "test_leakage.py::test_needle_scanner_finds_a_planted_leak",
        "The leak scanner is not vacuous: planted gold is found.",
        None,
    ),
    (
        "test_leakage.py::test_results_area_holds_only_public_files_and_no_gold",
        "Every published file is of a public kind and holds no hidden gold (rationales, implicit targets, "
        "label sequences); envelopes expose only public record fields.",
        "leakage_results_area",
    ),
    (
        "test_leakage.py::test_api_responses_carry_no_gold",
        "Leaderboards, submission pages, public files, validation/rejection reports, UI page and OpenAPI "
        "carry no hidden gold.",
        "leakage_api",
    ),
    (
        "test_leakage.py::test_logs_carry_no_gold",
        "No log line of seed, workers or web process carries hidden gold.",
        "leakage_logs",
    ),
    (
        "test_leakage.py::test_static_file_routes_do_not_serve_gold",
        "Gradio file routes and odd paths do not serve the demo gold, the store's references, tokens or "
        "system files.",
        None,
    ),
    (
        "test_leakage.py::test_web_process_cannot_open_references",
        "The web process's store has no references area and space/ has no code path to it.",
        None,
    ),
    (
        "test_leakage.py::test_quota_holds_across_renames_and_identity_case",
        "The daily quota holds when the model is renamed or the identity's case changes (429 + Retry-After).",
        None,
    ),
    (
        "test_leakage.py::test_maintainer_actions_refused_to_other_identities",
        "The UI's re-score and moderation endpoints refuse non-maintainers.",
        None,
    ),
    (
        "test_leakage.py::test_service_maintainer_check_is_exact_up_to_case",
        "Maintainer check matches exactly (case-insensitive), no prefix/lookalike.",
        None,
    ),
    (
        "test_leakage.py::test_worker_refuses_pickle_messages",
        "A pickle-serialised task is refused by the workers and never unpickled (payload would create a "
        "sentinel).",
        None,
    ),
    (
        "test_faults.py::test_pool_child_sigkill_mid_scoring_scores_exactly_once",
        "SIGKILL of a busy prefork child: every submission still ends with exactly one version and result.",
        "faults_pool_child_sigkill",
    ),
    (
        "test_faults.py::test_whole_worker_sigkill_mid_scoring_is_re_sent_once_its_heartbeat_stops",
        "SIGKILL of a whole worker (main process and child) mid-scoring, default settings: the record names "
        "the worker's heartbeat, and once it stops another worker's reconciler re-sends it (no 6.6-minute "
        "wait for the time limit); published once.",
        "faults_whole_worker_sigkill",
    ),
    (
        "test_faults.py::test_redis_restart_under_load_loses_nothing",
        "redis-server killed and restarted (no persistence) mid-burst: nothing lost, nothing duplicated; the "
        "reconciler re-sends.",
        "faults_redis_restart",
    ),
    (
        "test_faults.py::test_hub_faults_publish_once_and_never_half_written",
        "Fake Hub answering 412/429/500/lost-answer/slow on the results repo: each result published once, "
        "every revision self-consistent (leaderboard.json, parquet, result files).",
        "faults_hub",
    ),
    (
        "test_faults.py::test_web_process_killed_mid_upload_is_all_or_nothing",
        "Web process SIGKILLed mid-upload and restarted: each upload fully stored (bytes = sha256) or "
        "absent.",
        "faults_web_killed_mid_upload",
    ),
    (
        "test_faults.py::test_embedded_worker_dies_with_web_process",
        "Embedded default: SIGKILL of `python -m space` does not orphan its Celery worker (gone in 15 s).",
        "faults_embedded_worker_orphaned",
    ),
    (
        "test_faults.py::test_embedded_worker_sigkill_restarts_it_and_health_goes_red_meanwhile",
        "Embedded default: SIGKILL of the Celery worker; health goes red (503) at once, the web process "
        "restarts the worker with back-off, and a new upload is published (bound 90 s).",
        "faults_embedded_worker_sigkill",
    ),
    (
        "test_faults.py::test_sigterm_ends_the_embedded_service_fast_and_loses_no_work",
        "SIGTERM with scoring in flight: web process and worker gone (issue's bound 5 s; asserted < 8 s); "
        "the in-flight submissions are published after the next start, exactly once.",
        "faults_sigterm",
    ),
    (
        "test_faults.py::test_validate_flood_keeps_memory_bounded_and_health_answering",
        "32 concurrent 63 MB `POST /api/v1/validate` (no token): web RSS peak < 1 GiB (asserted), the "
        "excess gets 503 + Retry-After, health keeps answering.",
        "faults_validate_flood",
    ),
    (
        "test_faults.py::test_redis_outage_uploads_answer_fast_and_publish_after_it",
        "Redis down: uploads and a hide answer at once (issue: < 2 s; asserted < 5 s); after Redis returns "
        "(empty) everything is published exactly once and the hide applied (issue: < 60 s; asserted < 90 s).",
        "faults_redis_outage",
    ),
    (
        "test_faults.py::test_corrupt_record_leaves_other_submissions_and_tracks_publishing",
        "A half-written submission record: the others (both tracks) publish, the record is logged once "
        "per process and listed by `python -m worker quarantine`.",
        "faults_corrupt_record",
    ),
    (
        "test_faults.py::test_worker_survives_a_redis_outage_with_unacked_messages",
        "redis-server SIGKILLed for 20 s while a worker (gossip and mingle on, as deployed) holds "
        "unacknowledged messages: the same worker process reconnects by itself and every submission is "
        "published once.",
        "faults_redis_outage_worker_survives",
    ),
    (
        "test_faults.py::test_sigterm_mid_scoring_requeues_at_once_without_the_reconciler",
        "SIGTERM (remapped to cold shutdown, soft-shutdown window 1 s) to a worker in a 12 s task: it exits "
        "within the window, the message is requeued, the next worker scores it, published once, no beat.",
        "faults_sigterm_soft_shutdown",
    ),
    (
        "test_faults.py::test_the_image_entrypoint_restarts_a_worker_that_died",
        "`ROLE=worker` under `docker/entrypoint.sh`: the whole Celery worker SIGKILLed is restarted with "
        'back-off, health says "restarting" meanwhile, uploads are published with no manual step; SIGTERM '
        "ends every worker process.",
        "faults_entrypoint_worker_restart",
    ),
    (
        "test_disk_full.py::test_a_full_disk_for_20_s_loses_nothing_and_the_worker_waits",
        "Embedded default, `DATA_DIR` on a tmpfs filled to the last byte for 20 s with uploads queued and "
        "being scored: an upload gets 507, health names the disk, the worker does not exit, < 10 log lines "
        "(asserted), every queued upload published once after space returns.",
        "faults_disk_full",
    ),
    (
        "test_store_unavailable.py::test_a_hub_storm_gets_fast_answers_and_loses_nothing",
        "The fake Hub answers everything 429 (Retry-After 5) for 30 s, then 503 for 30 s, during uploads, "
        "status reads and health checks, default retry settings: health names the store within 10 s, every "
        "answer < 2 s (uploads 202 or 503 store_unavailable, never busy), web + worker < 1 Hub request/s "
        "(asserted), every accepted upload scored after.",
        "faults_hub_storm",
    ),
    (
        "test_torn_objects.py::",
        "A record object torn on disk: that id answers 404, the owner's list and `quarantine` go on (it is "
        "listed with its reason), the reconciler re-sends the same track's other records.",
        None,
    ),
    (
        "test_http_limits.py::",
        "Real uvicorn with `space/http_limits.py`: half-sent headers (first or keep-alive request) are cut "
        "off at the deadline; a complete request is answered.",
        None,
    ),
    (
        "test_fault_isolation.py::",
        "In-process: Hub auth cache bounded, 429 not cached as invalid; disk full → JSON 507 and health "
        "degraded; upload slots and memory budget; reconcile per track/record; a hide lost with the "
        "broker is republished; refused UI calls log one line.",
        None,
    ),
]


def run(cmd: list[str], env: dict | None = None) -> int:
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def run_all(quick: bool, tests_only: bool = False) -> dict[str, int]:
    shutil.rmtree(FIG, ignore_errors=True)
    FIG.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "RELIABILITY_FIGURES_DIR": str(FIG)}
    py = sys.executable
    codes = {
        "pytest": run(
            [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={JUNIT}", *TEST_FILES], env
        )
    }
    if tests_only:
        return codes
    hostile = [py, "bench/bench_hostile.py", "--json", str(OUT / "hostile.json")]
    codes["bench_hostile"] = run(hostile + (["--no-rest"] if quick else []))
    if not quick:
        codes["bench_load"] = run([py, "bench/bench_load.py", "--json", str(OUT / "load.json")])
    return codes


def junit_results() -> dict[str, dict[str, int]]:
    """{"file::function": {"passed", "failed", "skipped", "xfailed", "seconds"}} from the JUnit XML."""
    out: dict[str, dict] = defaultdict(lambda: defaultdict(float))
    if not JUNIT.exists():
        return {}
    for case in ET.parse(JUNIT).getroot().iter("testcase"):
        file = case.get("classname", "").split(".")[-1] + ".py"
        func = case.get("name", "").split("[")[0]
        key = f"{file}::{func}"
        kids = {child.tag for child in case}
        skipped = case.find("skipped")
        if "failure" in kids or "error" in kids:
            state = "failed"
        elif skipped is not None:
            state = "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
        else:
            state = "passed"
        out[key][state] += 1
        out[key]["seconds"] += float(case.get("time") or 0)
    return {k: dict(v) for k, v in out.items()}


def _whole_file(results: dict[str, dict], prefix: str) -> dict | None:
    """The summed results of every test whose id starts with `prefix` (a row for a whole file)."""
    found = [v for k, v in results.items() if k.startswith(prefix)]
    if not found:
        return None
    keys = {k for v in found for k in v}
    return {k: sum(v.get(k, 0) for v in found) for k in keys}


def _load(name: str) -> dict:
    path = OUT / name
    return json.loads(path.read_text()) if path.exists() else {}


def _when(name: str) -> str:
    path = OUT / name
    return (
        time.strftime(" (run %Y-%m-%d %H:%M UTC)", time.gmtime(path.stat().st_mtime)) if path.exists() else ""
    )


def figures_text(key: str | None, figs: dict[str, dict]) -> str:
    if key is None:
        return ""
    if key == "corpus":
        from tests.hostile import corpus

        return f"{len(corpus.CASES)} file cases, {len(corpus.META_CASES)} metadata cases"
    if key == "hostile_scorer_heavy":
        parts = [
            f"{v['mib']:.0f} MiB: {v['seconds']:.2f} s, RSS {v['peak_rss_mib']} MiB"
            for k, v in sorted(figs.items())
            if k.startswith(key)
        ]
        return "; ".join(parts)
    f = figs.get(key)
    if not f:
        return "(no figures recorded)"
    skip = {"name", "at"}
    return ", ".join(f"{k} {v}" for k, v in f.items() if k not in skip)


def status_text(res: dict | None) -> str:
    if not res:
        return "not run"
    parts = [f"{int(res[s])} {s}" for s in ("passed", "failed", "xfailed", "skipped") if res.get(s)]
    return ", ".join(parts) + f" ({res.get('seconds', 0):.0f} s)"


def render(codes: dict[str, int] | None) -> str:
    results = junit_results()
    figs = {}
    if FIG.exists():
        for p in FIG.glob("*.json"):
            figs[p.stem] = json.loads(p.read_text())
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    lines = [
        "# Reliability: load, faults, hostile input and leakage",
        "",
        "Generated by `.venv/bin/python bench/reliability.py` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, working tree on commit {commit or '?'}). "
        "Do not edit by hand: change the tests or benches and regenerate.",
        "",
        "The CI tests run with the rest of the suite (`scripts/test`); the benches "
        "(`bench/bench_hostile.py`, `bench/bench_load.py`) are longer and only run here. Every process a "
        "test starts (private redis-server, Celery workers, `python -m space`, fake Hub) listens on "
        "127.0.0.1 only.",
        "",
        "## Tests",
        "",
        "| Test | What it proves | Latest result | Latest figures |",
        "|---|---|---|---|",
    ]
    for test_id, proves, key in ROWS:
        res = results.get(test_id) if not test_id.endswith("::") else _whole_file(results, test_id)
        lines.append(f"| `{test_id}` | {proves} | {status_text(res)} | {figures_text(key, figs)} |")
    hostile = _load("hostile.json")
    load = _load("load.json")
    lines += ["", "## Benches", "", "| Bench | What it proves | Latest figures |", "|---|---|---|"]
    if hostile:
        s = hostile["scorer"]
        heavy = "; ".join(
            f"{h['track']}/{h['case']} {h['mib']:.0f} MiB {h['seconds']:.2f} s RSS {h['rss_mib']:.0f} MiB"
            for h in s["heavy"]
        )
        text = (
            f"scorer: tried {s['tried']}, held {s['held']} ({', '.join(s['tracks'])}); light max "
            f"{s['light_max_seconds'] * 1000:.0f} ms, tracemalloc ≤ {s['light_max_py_peak_mib']:.1f} MiB; "
            f"{heavy}"
        )
        rest = hostile.get("rest") or {}
        if rest and "tried" in rest:
            text += (
                f". REST: tried {rest['tried']}, held {rest['held']}, max {rest['max_seconds']:.2f} s, "
                f"health always 200: {rest['health_always_ok']}, tracebacks in logs "
                f"{rest.get('tracebacks_in_logs')}"
            )
        if s["failed"] or (rest and rest.get("failed")):
            text += ". FAILED: " + "; ".join(
                f"{f.get('track', '')}/{f['case']}: {f['why']}"
                for f in s["failed"] + (rest.get("failed") or [])
            )
        lines.append(
            f"| `bench/bench_hostile.py`{_when('hostile.json')} | The whole corpus, every track, heavy files "
            f"included, at the scorer and through REST. | {text} |"
        )
    if load:
        v = load["viewers"]
        text = (
            f"{load['submissions']} submissions / {load['clients']} clients / {load['workers']} workers: "
            f"accepted {load['accepted']}, published {load['published']}, lost {load['lost']}, duplicated "
            f"{load['duplicated']}, mis-scored {load['mis_scored']} of {load['compared_with_cli']} compared "
            f"with `python -m scoring score`; throughput {load['throughput_per_min']}/min; POST p50 "
            f"{load['post_p50_ms']} ms p95 {load['post_p95_ms']} ms; POST→published p50 "
            f"{load['to_published_p50_s']} s p95 {load['to_published_p95_s']} s. {v['viewers']} viewers: "
            f"{v['requests']} requests, {v['errors']} errors, GET / p50 {v['/']['p50_ms']} ms p95 "
            f"{v['/']['p95_ms']} ms, GET /api/v1/leaderboard p50 {v['/api/v1/leaderboard']['p50_ms']} ms "
            f"p95 {v['/api/v1/leaderboard']['p95_ms']} ms"
        )
        lines.append(
            f"| `bench/bench_load.py`{_when('load.json')} | Throughput and latency under concurrent "
            f"submitters and viewers; 0 lost/duplicated/mis-scored. | {text} |"
        )
    if codes:
        lines += ["", "Exit codes of this run: " + ", ".join(f"{k} {v}" for k, v in codes.items()) + "."]
    lines += [
        "",
        "Figures depend on the machine and its load (2 cores, shared with other test runs, when "
        "generated); bounds asserted by the tests are in `tests/hostile/runner.py`, "
        "`tests/hostile/rest.py` and `tests/test_faults.py`.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="skip bench_load and the REST part of bench_hostile"
    )
    parser.add_argument("--tests-only", action="store_true", help="run the tests, keep the bench figures")
    parser.add_argument("--no-run", action="store_true", help="only re-render from bench/out/")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    codes = None if args.no_run else run_all(args.quick, args.tests_only)
    DOC.write_text(render(codes))
    print(f"wrote {DOC.relative_to(ROOT)}")
    return 0 if not codes or not any(codes.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
