"""One BLAS thread per process, set before numpy is first imported (imported by `worker` and `space`).

The scorer's matrix products are small (at most resamples x rows). OpenBLAS's default pool, one thread per
core, makes them no faster and spins for as much CPU again, which two scoring processes on two cores cannot
spare: a re-scored file took 57.6 ms of CPU with the pool and 32.1 ms without, at the same wall time
(bench/bench_pipeline.py's re-score, 400 test rows). Results are byte-identical with any thread count
(tests/test_blas_threads.py). An operator's own setting wins.
"""

import os

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

for _name in BLAS_THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")
