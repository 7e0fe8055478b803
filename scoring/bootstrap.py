"""Seeded percentile bootstrap over rows, single and paired.

Resamples are drawn once as an index matrix `(resamples, n)` from `numpy.random.default_rng(seed)`, so a
given seed and row count always give the same resamples. Metric functions receive that whole matrix and
return one value per resample; `resample_counts` turns it into a row-weight matrix so that any count-based
metric becomes a matrix product (one BLAS call for all resamples instead of a Python loop). `weighted_sums`
is that product with the same floats on every CPU.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_LEVEL",
    "MetricFn",
    "bootstrap_ci",
    "paired_bootstrap",
    "percentile_ci",
    "percentile_cis",
    "resample_count_table",
    "resample_counts",
    "resample_indices",
    "resample_running_table",
    "resample_table",
    "weighted_sums",
]

DEFAULT_LEVEL = 0.95
MetricFn = Callable[[np.ndarray], np.ndarray]  # (resamples, n) index matrix -> (resamples,) values


def resample_indices(n: int, resamples: int, seed: int) -> np.ndarray:
    """The bootstrap index matrix: row `b` lists the n rows (with repetition) of resample `b`."""
    if n <= 0 or resamples <= 0:
        return np.zeros((max(resamples, 0), max(n, 0)), dtype=np.int64)
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n), dtype=np.int64)


@functools.lru_cache(maxsize=4)
def resample_table(n: int, resamples: int, seed: int) -> np.ndarray:
    """`resample_indices(n, resamples, seed)`, built once per (n, resamples, seed) and shared read-only:
    every submission of a track is resampled with the same table (tie groups compare hundreds of pairs)."""
    table = resample_indices(n, resamples, seed)
    table.flags.writeable = False
    return table


@functools.lru_cache(maxsize=2)
def resample_count_table(n: int, resamples: int, seed: int) -> np.ndarray:
    """`resample_counts` of `resample_table(n, resamples, seed)`, built once and shared read-only."""
    counts = resample_counts(resample_table(n, resamples, seed), n)
    counts.flags.writeable = False
    return counts


@functools.lru_cache(maxsize=2)
def resample_running_table(n: int, resamples: int, seed: int) -> np.ndarray:
    """The running sums of `resample_count_table(n, resamples, seed)` along each resample, after a column of
    zeros: `(resamples, n + 1)`, so the weight of rows i..j-1 in resample b is `t[b, j] - t[b, i]` (whole
    numbers, exact). Built once and shared read-only, for `weighted_sums(..., running=...)`."""
    counts = resample_count_table(n, resamples, seed)
    running = np.zeros((counts.shape[0], counts.shape[1] + 1))
    np.cumsum(counts, axis=1, out=running[:, 1:])
    running.flags.writeable = False
    return running


def resample_counts(indices: np.ndarray, n: int) -> np.ndarray:
    """How often each row occurs in each resample, as float64 `(resamples, n)` (ready for matmul)."""
    resamples = indices.shape[0]
    offsets = (np.arange(resamples, dtype=np.int64) * n)[:, None]
    flat = np.bincount((indices + offsets).ravel(), minlength=resamples * n)
    return flat.reshape(resamples, n).astype(np.float64)


def weighted_sums(weights: np.ndarray, values: np.ndarray, running: np.ndarray | None = None) -> np.ndarray:
    """`weights @ values` for a non-negative `(resamples, n)` count matrix and `(n,)` or `(n, k)` values: the
    same floats on every CPU.

    A BLAS product adds in an order its CPU kernel chooses (OpenBLAS's AVX-512 and AVX2 kernels gave other
    last bits for the VARM T-F1 intervals). Whole-number sums below 2**53 are exact in any order, so the
    product is taken over whole numbers only: a fractional column is split into three whole-number chunks
    (`fixed_point_chunks`), whose sums are exact, and recombined in a fixed order. A column three chunks
    cannot hold (a range of magnitudes over 78 bits, inf, nan) is summed by numpy's pairwise sum instead,
    whose order is fixed by n alone.

    `running` (optional): the running sums of `weights` along each resample after a column of zeros, as
    `resample_running_table` gives them. With it, adjacent rows of `values` that are equal (a canonical
    order sorts equal outcome rows together: ~140 distinct rows of 600 in a VARM slice) are summed as one,
    weighted by their run's total weight: the same whole numbers, so the same floats, for a product a
    fraction the size.
    """
    weights = np.ascontiguousarray(weights, dtype=np.float64)  # the pairwise sum's order follows the layout
    values = np.asarray(values, dtype=np.float64)
    columns = values if values.ndim == 2 else values[:, None]
    tops = np.abs(columns).max(axis=0, initial=0.0)
    whole = np.flatnonzero(np.all(columns == np.round(columns), axis=0))
    # One product over whole numbers: a column of ones (each resample's weight, to bound the partial sums),
    # the whole columns, and the chunks of the others. plans: (column, first part, scales), or
    # (column, None, None) for the pairwise sum.
    parts: list[np.ndarray] = [np.ones((columns.shape[0], 1)), columns[:, whole]]
    first = 1 + whole.size
    plans: list[tuple[int, int | None, list[float] | None]] = []
    for j in np.setdiff1d(np.arange(columns.shape[1]), whole):
        split = fixed_point_chunks(columns[:, j])
        if split is None:
            plans.append((j, None, None))
            continue
        plans.append((j, first, split[1]))
        parts.append(np.column_stack(split[0]))
        first += len(split[0])
    sums = _whole_products(weights, np.hstack(parts), columns, running)
    most = float(sums[:, 0].max(initial=0.0))  # no partial sum of a column exceeds most * its max |value|
    out = np.empty((weights.shape[0], columns.shape[1]))
    exact = most * tops[whole] < 2.0**53
    out[:, whole[exact]] = sums[:, 1 + np.flatnonzero(exact)]
    plans += [(j, None, None) for j in whole[~exact]]
    for j, start, scales in plans:
        if start is None or scales is None or not most * 2.0**CHUNK_BITS < 2.0**53:
            out[:, j] = _pairwise_sums(weights, columns[:, j])
            continue
        total = sums[:, start] * scales[0]
        for k, scale in enumerate(scales[1:], start=1):  # in a fixed order, one rounding per chunk
            total = total + sums[:, start + k] * scale
        out[:, j] = total
    return out if values.ndim == 2 else out[:, 0]


# The product is taken over runs of equal rows when there are fewer runs than this share of the rows.
GROUPED_BELOW = 0.75


def _whole_products(
    weights: np.ndarray, parts: np.ndarray, rows: np.ndarray, running: np.ndarray | None
) -> np.ndarray:
    """`weights @ parts` for whole-number `parts` (exact, so the same in any order and grouping): over the
    runs of equal adjacent rows of `rows` when `running` is given and the runs are few enough."""
    n = rows.shape[0]
    if running is not None and n > 1 and _runs_weights(running, weights):
        change = np.flatnonzero(np.any(rows[1:] != rows[:-1], axis=1)) + 1
        if change.size + 1 < GROUPED_BELOW * n:
            starts = np.concatenate(([0], change))
            ends = np.append(change, n)
            return np.asarray((running[:, ends] - running[:, starts]) @ parts[starts])
    return np.asarray(weights @ parts)


def _runs_weights(running: np.ndarray, weights: np.ndarray) -> bool:
    """Can `running` be the running sums of `weights` (its shape, first and last steps: a cheap guard against
    another table's), with every running sum a whole number below 2**53 (exact)?"""
    return (
        running.shape == (weights.shape[0], weights.shape[1] + 1)
        and np.array_equal(running[:, 1] - running[:, 0], weights[:, 0])
        and np.array_equal(running[:, -1] - running[:, -2], weights[:, -1])
        and float(running[:, -1].max(initial=0.0)) < 2.0**53
    )


def _pairwise_sums(weights: np.ndarray, column: np.ndarray) -> np.ndarray:
    """Each resample's sum of `weights[b] * column` by numpy's pairwise sum (its order fixed by n), a block
    of resamples at a time so the temporary array stays bounded."""
    out = np.empty(weights.shape[0])
    for start in range(0, weights.shape[0], PAIRWISE_BLOCK):
        out[start : start + PAIRWISE_BLOCK] = (weights[start : start + PAIRWISE_BLOCK] * column).sum(axis=1)
    return out


CHUNK_BITS = 26
PAIRWISE_BLOCK = 128  # resamples per elementwise product on the pairwise path (each row sums alone)


def fixed_point_chunks(column: np.ndarray) -> tuple[list[np.ndarray], list[float]] | None:
    """Whole-number chunks of at most 26 bits and their power-of-two scales, with
    `column == sum(chunk * scale)` exactly; None when three chunks cannot hold every value's bits."""
    top = float(np.abs(column).max(initial=0.0))
    if not math.isfinite(top):
        return None
    exponent = math.frexp(top)[1]  # every |value| < 2**exponent
    if exponent - 3 * CHUNK_BITS < sys.float_info.min_exp:  # the last scale would be subnormal
        return None
    rest = np.ldexp(column, CHUNK_BITS - exponent)  # |rest| < 2**26; a power-of-two scaling is exact...
    if not np.array_equal(np.ldexp(rest, exponent - CHUNK_BITS), column):  # ...unless it flushed a tiny value
        return None
    chunks, scales = [], []
    for k in range(3):
        whole = np.round(rest)
        chunks.append(whole)
        scales.append(math.ldexp(1.0, exponent - CHUNK_BITS * (k + 1)))
        rest = np.ldexp(rest - whole, CHUNK_BITS)  # the fraction is exact: it keeps a subset of the bits
    return (chunks, scales) if not np.any(rest) else None


def percentile_ci(values: np.ndarray, level: float = DEFAULT_LEVEL) -> list[float]:
    """Percentile interval `[low, high]` of the resampled values (numpy's default linear interpolation)."""
    # Rounded so that level=0.95 asks for exactly the 2.5th and 97.5th percentiles (no 2.5000000000000018).
    lower = round(50.0 * (1.0 - level), 12)
    low, high = np.percentile(np.asarray(values, dtype=np.float64), [lower, 100.0 - lower])
    return [float(low), float(high)]


def percentile_cis(values: Mapping[str, np.ndarray], level: float = DEFAULT_LEVEL) -> dict[str, list[float]]:
    """`{name: percentile_ci(v, level)}` for equally long value arrays, in one numpy call (a result has ~17
    intervals: one call instead of 17 is ~10x faster). The same floats: each row's order statistics and
    interpolation are computed exactly as for the row alone."""
    names = list(values)
    rows = [np.asarray(values[name], dtype=np.float64) for name in names]
    if not rows or len({row.shape for row in rows}) != 1 or rows[0].ndim != 1 or rows[0].size == 0:
        return {name: percentile_ci(row, level) for name, row in zip(names, rows, strict=True)}
    lower = round(50.0 * (1.0 - level), 12)
    low, high = np.percentile(np.stack(rows), [lower, 100.0 - lower], axis=1)
    return {name: [float(lo), float(hi)] for name, lo, hi in zip(names, low, high, strict=True)}


def bootstrap_ci(
    metric: MetricFn | Callable[[np.ndarray], float],
    n: int,
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
    vectorised: bool = True,
) -> list[float] | None:
    """Percentile CI of one metric; None when there is nothing to resample.

    With `vectorised=True`, `metric` gets the whole index matrix and returns one value per resample;
    otherwise it is called once per resample with a 1-D index array (the slow, generic path).
    """
    indices = resample_indices(n, resamples, seed)
    if indices.size == 0:
        return None
    if vectorised:
        values = np.asarray(metric(indices), dtype=np.float64)
    else:
        values = np.array([metric(row) for row in indices], dtype=np.float64)
    return percentile_ci(values, level)


def paired_bootstrap(
    values_a: Mapping[str, float],
    values_b: Mapping[str, float],
    resampled_a: Mapping[str, np.ndarray],
    resampled_b: Mapping[str, np.ndarray],
    *,
    level: float = DEFAULT_LEVEL,
) -> dict[str, dict[str, Any]]:
    """Compare two submissions metric by metric from values computed on the SAME resamples.

    `values_*` are the point estimates, `resampled_*` the per-resample values (same index matrix for
    both). `significant` means the percentile CI of the difference excludes 0; `se` is the standard deviation
    of the resampled differences (the bootstrap standard error of a − b).
    """
    out: dict[str, dict[str, Any]] = {}
    for name in values_a:
        diff = np.asarray(resampled_a[name], dtype=np.float64) - np.asarray(resampled_b[name], np.float64)
        ci = percentile_ci(diff, level) if diff.size else None  # no resamples: no interval, no claim
        out[name] = {
            "a": float(values_a[name]),
            "b": float(values_b[name]),
            "diff": float(values_a[name] - values_b[name]),
            "ci": ci,
            "significant": bool(ci is not None and (ci[0] > 0.0 or ci[1] < 0.0)),
            "se": float(np.std(diff))
            if diff.size
            else None,  # the Ladder's release margin (scoring/ladder.py)
        }
    return out
