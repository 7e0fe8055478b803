"""The service's processes run numpy with one BLAS thread (worker/process_env.py); results depend neither on
it nor on the CPU kernels BLAS and numpy pick (scoring.bootstrap.weighted_sums, scorer 4.0.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_rescore_bytes import PINNED

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


# Another host, simulated: OpenBLAS's SSE3 kernel (no FMA) and numpy's baseline SIMD loops instead of the
# kernels this CPU picks. Before 4.0.1 the public VARM T-F1 and CNTP IoU intervals differed in their last bits
# between OpenBLAS's AVX-512 and AVX2 kernels; an AVX2-only host then failed tests/test_rescore_bytes.py.
OTHER_HOST = {
    "OPENBLAS_CORETYPE": "Prescott",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
}
ACROSS_HOSTS = [("varm", "lexicon"), ("varm", "mixed"), ("cntp", "perturbed"), ("toxicn", "mixed")]
DIGESTS = f"""
import hashlib, json
import numpy as np
from scoring.bootstrap import resample_count_table
from tests.factories import DEMO
from tests.test_rescore_bytes import _file, _pinned, digest

values = np.random.default_rng(3).integers(0, 1000, 2000) / 997.0
blas = resample_count_table(2000, 1000, 11) @ values  # the control: a plain BLAS product of non-integers
out = {{"blas": hashlib.sha256(blas.tobytes()).hexdigest()}}
for track, name in {ACROSS_HOSTS!r}:
    out[f"{{track}}/{{name}}"] = digest(_pinned(track, DEMO / track, False), _file(track, None, name))
print(json.dumps(out))
"""
SET_BY_TESTS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", *OTHER_HOST)


def run(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in SET_BY_TESTS}
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


def test_public_results_are_the_same_bytes_with_another_hosts_blas_and_simd_kernels():
    here, there = json.loads(run(DIGESTS)), json.loads(run(DIGESTS, **OTHER_HOST))
    if here.pop("blas") == there.pop("blas"):  # the positive control: a plain product moves between them
        pytest.skip(
            "this host's BLAS kernel adds like the SSE3 one (an AVX-only CPU): no other host to simulate"
        )
    assert here == there
    for track, name in ACROSS_HOSTS:
        if (track, None, name) in PINNED:
            assert here[f"{track}/{name}"] == PINNED[(track, None, name)]["public"]
