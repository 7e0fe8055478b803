"""Hostile uploads against the scorer's gold-independent validation (level a of issue 7).

Every crafted file from `tests/hostile/corpus.py` goes through `get_track(t).check_predictions(data,
inputs)` in a subprocess (so a crash, a RecursionError or a memory blow-up is data, not a dead runner),
timed and measured (tracemalloc peak for the light files, ru_maxrss for the 30–65 MB ones). A case holds
when the answer is the expected one (reject with a line-numbered message / accept / clean either way),
within the time and memory bounds, and the report stays small and UTF-8 encodable.
Also: the `python -m scoring validate` CLI answers the same files with a non-zero exit and no traceback.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from scoring.tracks import TRACK_NAMES
from tests.hostile import corpus, figures, runner

# Known failures (teammates' code), written as strict xfails so the fix flips them.
KNOWN: dict[str, str] = {}

_AVAILABLE = runner.available_tracks()


HEAVY_CI_TRACKS = ("varm", "cold")  # one reader serves every track; bench_hostile.py runs all four


def _params(heavy: bool) -> list:
    out = []
    for track in HEAVY_CI_TRACKS if heavy else TRACK_NAMES:
        for case in corpus.file_cases(track, heavy=heavy):
            marks = []
            if track not in _AVAILABLE:
                marks.append(pytest.mark.skip(reason=f"track {track!r} not available in scoring yet"))
            elif case.name in KNOWN:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[case.name]))
            out.append(pytest.param(track, case.name, id=f"{track}-{case.name}", marks=marks))
    return out


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], runner.Verdict]:
    """All light cases of every available track, probed once (one subprocess per track)."""
    tmp = tmp_path_factory.mktemp("hostile")
    return {(v.track, v.case): v for v in runner.run_cases(_AVAILABLE, tmp, heavy=False)}


def test_corpus_has_at_least_40_crafted_uploads() -> None:
    assert len(corpus.CASES) + len(corpus.META_CASES) >= 40
    for track in TRACK_NAMES:
        assert len(corpus.file_cases(track)) >= 40, track


@pytest.mark.parametrize(("track", "case"), _params(heavy=False))
def test_light_case_held(verdicts: dict, track: str, case: str) -> None:
    verdict = verdicts[(track, case)]
    assert verdict.held, f"{track}/{case}: {verdict.why}"


def test_record_scorer_figures(verdicts: dict) -> None:
    """Counts for docs/RELIABILITY.md (light cases; heavy ones record their own)."""
    values = list(verdicts.values())
    figures.record(
        "hostile_scorer_light",
        tracks=sorted({v.track for v in values}),
        tried=len(values),
        held=sum(v.held for v in values),
        max_ms=round(max(v.seconds for v in values) * 1000),
        max_tracemalloc_mib=round(max(v.py_peak or 0 for v in values) / 2**20, 1),
    )


@pytest.mark.parametrize(("track", "case"), _params(heavy=True))
def test_heavy_case_held(tmp_path: Path, track: str, case: str) -> None:
    """50 MB line, 64 MiB + 1 file, ten million lines: bounded time and RSS, clean rejection."""
    (verdict,) = runner.run_cases([track], tmp_path, heavy=True, only={case})
    figures.record(
        f"hostile_scorer_heavy_{track}_{case}",
        held=verdict.held,
        mib=round(verdict.bytes / 2**20, 1),
        seconds=round(verdict.seconds, 2),
        peak_rss_mib=round((verdict.rss or 0) / 2**20),
    )
    assert verdict.held, f"{track}/{case}: {verdict.why}"


_CLI_CASES = [
    "empty_file",
    "gbk_encoded",
    "invalid_json_line",
    "deep_nested_array",
    "huge_int_digits",
    "gzip_bomb",
    "duplicate_ids",
    "nul_byte_in_line",
    "lone_surrogate_escape",
    "single_50mb_line",
    "ten_million_lines",
]


def _cli_available() -> bool:
    return (runner.ROOT / "scoring" / "__main__.py").exists()


@pytest.mark.skipif(not _cli_available(), reason="scoring/__main__.py (the CLI) not written yet")
@pytest.mark.parametrize("case", _CLI_CASES)
def test_cli_validate_rejects_cleanly(tmp_path: Path, case: str) -> None:
    """`python -m scoring validate --track T --inputs I --predictions P`: exit != 0, message, no traceback."""
    track = next(t for t in ("varm", "cold") if t in _AVAILABLE)
    inputs = runner.synthetic_inputs(track)
    inputs_path = tmp_path / "inputs.jsonl"
    inputs_path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in inputs))
    pred = corpus.write_case(corpus.CASES[case], inputs, track, tmp_path / "pred.jsonl")
    cmd = [
        runner.PYTHON,
        "-m",
        "scoring",
        "validate",
        "--track",
        track,
        "--inputs",
        str(inputs_path),
        "--predictions",
        str(pred),
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=runner.ROOT, capture_output=True, timeout=60)
    seconds = time.perf_counter() - start
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    assert seconds < runner.HEAVY_SECONDS, f"CLI took {seconds:.1f} s"
    assert out.strip(), "the CLI said nothing"
    assert "Traceback" not in out, out[-2000:]
    assert proc.returncode not in (0,), out[-500:]
    assert proc.returncode < 64 or proc.returncode == 2, f"rc {proc.returncode}: {out[-500:]}"
