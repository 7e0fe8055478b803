"""Library settings by environment, set before the libraries are first imported (imported first by
`worker` and `space`). An operator's own setting of any of them wins.

- One BLAS thread per process. The scorer's matrix products are small (at most resamples x rows).
  OpenBLAS's default pool, one thread per core, makes them no faster and spins for as much CPU again, which
  two scoring processes on two cores cannot spare: a re-scored file took 57.6 ms of CPU with the pool and
  32.1 ms without, at the same wall time (bench/bench_pipeline.py's re-score, 400 test rows). Results are
  byte-identical with any thread count (tests/test_blas_threads.py).
- Files the Hub keeps in LFS (`*.bin`: fingerprints, sealed results; anything over 10 MB: large prediction
  files, exports) are uploaded over the Hub's LFS batch API, not Xet (`HF_HUB_DISABLE_XET`): that is the
  path tests/fakehub.py emulates and the test suite runs (a Xet upload needs the Hub's CAS service, which
  no offline test can stand in for), and a store file is at most a few tens of MB, where Xet's chunk
  deduplication saves little. "Uploads from legacy / non-Xet-aware clients still follow the standard Git LFS
  path, even if the repo is already Xet-backed" (https://huggingface.co/docs/hub/xet/legacy-git-lfs), and
  downloads of Xet-backed files come through the Hub's LFS bridge as one URL.
"""

import os

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

for _name in BLAS_THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
