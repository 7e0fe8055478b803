"""The service's processes run numpy with one BLAS thread (worker/process_env.py); results do not
depend on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo" / "varm"

BLAS_THREADS = """
import ctypes, pathlib, numpy
lib = next((pathlib.Path(numpy.__file__).parent.parent / "numpy.libs").glob("libscipy_openblas*.so"))
print(ctypes.CDLL(str(lib)).scipy_openblas_get_num_threads64_())
"""

SCORE = f"""
import hashlib, json, pathlib
from scoring.api import score_file
demo = pathlib.Path({str(DEMO)!r})
data = (demo / "baselines" / "char-ngram.test.jsonl").read_bytes()
result = score_file("varm", demo / "test.jsonl", data, subsets_dir=demo / "subsets", bootstrap=1000)
print(hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest())
"""


def run(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: the default pool is one thread already")
def test_worker_and_web_processes_start_numpy_with_one_blas_thread():
    assert int(run(BLAS_THREADS)) == os.cpu_count()  # positive control: numpy's own default, one per core
    assert run("import worker\n" + BLAS_THREADS) == "1"
    assert run("import space\n" + BLAS_THREADS) == "1"
    assert (
        run("import worker\n" + BLAS_THREADS, OPENBLAS_NUM_THREADS="2") == "2"
    )  # an operator's setting wins


def test_results_are_byte_identical_with_any_blas_thread_count():
    digests = {run(SCORE, OPENBLAS_NUM_THREADS=str(n)) for n in (1, 2, 4)}
    assert len(digests) == 1
