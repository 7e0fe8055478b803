"""Seeded percentile bootstrap: determinism, vectorised == per-resample, paired comparisons."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.bootstrap import (
    bootstrap_ci,
    paired_bootstrap,
    percentile_ci,
    resample_count_table,
    resample_counts,
    resample_indices,
    resample_running_table,
    weighted_sums,
)
from scoring.protocol import parse_output
from scoring.varm import VARM_TRACK
from scoring.varm_metrics import (
    HEADLINE_CI_METRICS,
    RowOutcomes,
    metrics_for_rows,
    resampled_metrics,
    row_outcomes,
)
from tests.test_varm_metrics import GOLD, OUTPUTS, random_outcomes


def test_indices_are_deterministic_and_seeded() -> None:
    a = resample_indices(50, 20, seed=3)
    assert a.shape == (20, 50) and a.min() >= 0 and a.max() < 50
    assert np.array_equal(a, resample_indices(50, 20, seed=3))
    assert np.array_equal(a, np.random.default_rng(3).integers(0, 50, size=(20, 50)))
    assert not np.array_equal(a, resample_indices(50, 20, seed=4))


def test_no_resamples_or_no_rows() -> None:
    assert resample_indices(0, 10, 0).shape == (10, 0)
    assert resample_indices(10, 0, 0).shape == (0, 10)
    assert bootstrap_ci(lambda idx: idx.mean(axis=1), 10, resamples=0) is None


def test_counts_match_indices() -> None:
    idx = resample_indices(7, 30, seed=1)
    counts = resample_counts(idx, 7)
    assert counts.dtype == np.float64
    assert np.array_equal(counts.sum(axis=1), np.full(30, 7.0))
    for b in range(30):
        assert np.array_equal(counts[b], np.bincount(idx[b], minlength=7))


def test_weighted_sums_keep_the_matrix_product_for_whole_numbers_and_fix_the_order_otherwise() -> None:
    counts = resample_counts(resample_indices(300, 50, seed=2), 300)
    rng = np.random.default_rng(5)
    whole = rng.integers(0, 4, size=(300, 3)).astype(np.float64)
    fraction = rng.integers(0, 1000, size=300) / 997.0
    values = np.column_stack([whole, fraction])
    sums = weighted_sums(counts, values)
    assert np.array_equal(sums[:, :3], counts @ whole)  # exact either way
    # the fractional column: the exact sum rounded at most twice (its chunks' exact sums, added in order)
    for b in range(0, 50, 7):
        exact = sum(Fraction(int(c)) * Fraction(float(v)) for c, v in zip(counts[b], fraction, strict=True))
        assert abs(Fraction(float(sums[b, 3])) - exact) <= Fraction(np.spacing(sums[b, 3]))
    np.testing.assert_allclose(sums[:, 3], counts @ fraction, rtol=1e-13)
    assert np.array_equal(weighted_sums(counts, fraction), sums[:, 3])  # a vector gives a vector
    assert weighted_sums(np.zeros((0, 300)), fraction).shape == (0,)
    assert np.array_equal(weighted_sums(counts, -fraction), -sums[:, 3])  # signs are kept
    top = np.array([1.0 - 2.0**-52, 0.5, 2.0**-30])  # the first chunk of 1 - 2**-52 is 2**26 itself
    (got,) = weighted_sums(np.array([[3.0, 1.0, 2.0]]), top)
    exact = 3 * Fraction(top[0]) + Fraction(top[1]) + 2 * Fraction(top[2])
    assert abs(Fraction(float(got)) - exact) <= Fraction(np.spacing(got))


def test_weighted_sums_of_no_rows_are_zeros() -> None:
    """An empty public slice: resamples of no rows (the plain product gives zeros too)."""
    assert np.array_equal(weighted_sums(np.zeros((5, 0)), np.zeros((0, 3))), np.zeros((5, 3)))
    assert np.array_equal(weighted_sums(np.zeros((5, 0)), np.zeros(0)), np.zeros(5))


def test_weighted_sums_fall_back_to_the_pairwise_sum_where_three_chunks_cannot_hold_the_bits() -> None:
    counts = resample_counts(resample_indices(40, 300, seed=4), 40)  # > one block of resamples
    wide = np.where(np.arange(40) % 2 == 0, 1.0 / 3.0, 1e-30)  # 1e-30's bits sit ~100 bits below 1/3's
    tiny = np.full(40, 1e-305)  # a chunk's scale would be subnormal
    flushed = np.array([2.0**40 + 0.5, -(2.0**40 + 0.5), 5e-324, *[0.0] * 37])  # scaling down loses 5e-324
    for column in (wide, tiny, flushed, np.array([np.nan, *[0.5] * 39])):
        expected = np.array([np.sum(row * column) for row in counts])
        np.testing.assert_array_equal(weighted_sums(counts, column), expected)


def test_weighted_sums_over_runs_of_equal_rows_are_the_same_floats() -> None:
    """Rows sorted so that equal rows are adjacent (as a canonical order sorts outcomes) are summed once per
    run, weighted by the run's total from the running table: the same floats as row by row."""
    counts, running = resample_count_table(300, 50, 2), resample_running_table(300, 50, 2)
    assert running.shape == (50, 301) and np.array_equal(running[:, -1], counts.sum(axis=1))
    assert np.array_equal(np.diff(running, axis=1), counts)
    rng = np.random.default_rng(9)
    patterns = np.column_stack(
        [
            rng.integers(0, 2, size=(20, 3)),  # flags
            rng.integers(0, 1000, size=20) / 997.0,  # a fractional column (T-F1's kind): three chunks
            np.full(20, 2.0**50),  # whole, but too large for an exact product: the pairwise sum
        ]
    ).astype(np.float64)
    values = patterns[np.sort(rng.integers(0, 20, size=300))]  # 20 runs of equal rows
    plain = weighted_sums(counts, values)
    assert weighted_sums(counts, values, running).tobytes() == plain.tobytes()
    assert np.array_equal(plain[:, 4], np.array([np.sum(row * values[:, 4]) for row in counts]))
    # Positive control: the runs path does read `running` (doctored running sums change the result),
    doctored = running.copy()
    doctored[:, 2:-2] += 1.0  # the first run's weight grows by one
    assert not np.array_equal(weighted_sums(counts, values, doctored), plain)
    distinct = values + np.arange(300)[:, None]  # no two rows alike: no runs, `running` is not read
    assert np.array_equal(weighted_sums(counts, distinct, doctored), weighted_sums(counts, distinct))
    # ...and another table's running sums (another seed, another shape) are not taken for these weights'.
    assert np.array_equal(weighted_sums(counts, values, resample_running_table(300, 50, 3)), plain)
    assert np.array_equal(weighted_sums(counts, values, running[:, :-1]), plain)


def test_percentile_ci_is_numpy_linear_percentile() -> None:
    values = np.arange(101, dtype=float)
    assert percentile_ci(values) == [2.5, 97.5]
    assert percentile_ci(values, level=0.9) == [5.0, 95.0]
    assert all(type(x) is float for x in percentile_ci(values))


def test_vectorised_and_loop_paths_agree() -> None:
    data = np.random.default_rng(0).random(40)
    fast = bootstrap_ci(lambda idx: data[idx].mean(axis=1), 40, resamples=200, seed=5)
    slow = bootstrap_ci(lambda row: float(data[row].mean()), 40, resamples=200, seed=5, vectorised=False)
    assert np.allclose(fast, slow, rtol=0, atol=1e-12)


def test_resampled_varm_metrics_equal_recomputation_on_each_resample() -> None:
    """The matrix-product path gives, per resample, the metrics of the explicitly resampled rows."""
    parsed = [parse_output(o) for o in OUTPUTS]
    outcomes = row_outcomes(parsed, GOLD)
    idx = resample_indices(outcomes.n, 25, seed=11)
    fast = resampled_metrics(outcomes, resample_counts(idx, outcomes.n))
    for b in range(25):
        rows = idx[b]
        explicit = row_outcomes([parsed[i] for i in rows], [GOLD[i] for i in rows])
        slow = metrics_for_rows(explicit)
        for name in HEADLINE_CI_METRICS:
            assert abs(fast[name][b] - slow[name]) <= 1e-12, (b, name)


@settings(max_examples=30, deadline=None)
@given(random_outcomes(min_rows=2))
def test_paired_bootstrap_of_a_submission_with_itself(o: RowOutcomes) -> None:
    lists = {"id": [str(i) for i in range(o.n)], **o.to_lists()}
    result = VARM_TRACK.paired_compare(lists, lists, bootstrap=100, seed=1)
    assert set(result) == set(VARM_TRACK.headline_metrics)
    for entry in result.values():
        assert entry["diff"] == 0.0 and entry["ci"] == [0.0, 0.0] and entry["significant"] is False


def test_paired_bootstrap_detects_a_clear_difference() -> None:
    rng = np.random.default_rng(0)
    n = 300
    good = rng.random(n) < 0.9
    bad = rng.random(n) < 0.5
    idx = resample_indices(n, 500, seed=2)
    result = paired_bootstrap(
        {"acc": good.mean()},
        {"acc": bad.mean()},
        {"acc": good[idx].mean(axis=1)},
        {"acc": bad[idx].mean(axis=1)},
    )
    entry = result["acc"]
    assert entry["diff"] == float(good.mean() - bad.mean())
    assert entry["significant"] and entry["ci"][0] > 0


def test_paired_bootstrap_without_resamples_claims_nothing() -> None:
    result = paired_bootstrap({"m": 0.9}, {"m": 0.1}, {"m": np.array([])}, {"m": np.array([])})
    assert result["m"]["ci"] is None and result["m"]["significant"] is False


def test_paired_compare_aligns_rows_by_id_and_is_deterministic() -> None:
    outcomes = row_outcomes([parse_output(o) for o in OUTPUTS], GOLD)
    a = {"id": [f"r{i}" for i in range(5)], **outcomes.to_lists()}
    worse = row_outcomes([parse_output("x")] * 5, GOLD)
    b = {"id": [f"r{i}" for i in range(5)], **worse.to_lists()}
    reversed_b = {key: values[::-1] for key, values in b.items()}
    first = VARM_TRACK.paired_compare(a, b, bootstrap=200, seed=9)
    assert first == VARM_TRACK.paired_compare(a, reversed_b, bootstrap=200, seed=9)
    # the hand-worked case of test_varm_metrics: JREM 1/5 (its blank gold target is never correct, spec §1)
    assert first["jrem"]["a"] == 0.2 and first["jrem"]["b"] == 0.0 and first["jrem"]["diff"] == 0.2


def _reference_compare(a: dict, b: dict, bootstrap: int, seed: int, metrics: list[str] | None) -> dict:
    """The comparison as first written (lists reordered and decoded per pair), the reference for the prepared
    path that tie groups use."""
    from scoring.bootstrap import paired_bootstrap, resample_count_table
    from scoring.disclosure import unlinked_rows
    from scoring.varm import _needed_columns
    from scoring.varm_metrics import metric_arrays

    if a["id"] != b["id"]:
        position = {row_id: k for k, row_id in enumerate(b["id"])}
        b = {key: [values[position[row_id]] for row_id in a["id"]] for key, values in b.items()}
    in_a, in_b = RowOutcomes.from_lists(a), RowOutcomes.from_lists(b)
    order = unlinked_rows(np.hstack([in_a.indicator_matrix(), in_b.indicator_matrix()]))
    out_a, out_b = (RowOutcomes.from_lists({k: [v[i] for i in order] for k, v in d.items()}) for d in (a, b))
    names = metrics or [m for m in VARM_TRACK.headline_metrics if m in HEADLINE_CI_METRICS]
    counts = resample_count_table(in_a.n, bootstrap, seed)

    def resampled(outcomes: RowOutcomes) -> dict:
        if metrics is None:
            return resampled_metrics(outcomes, counts, names)
        x, cols = outcomes.indicator_matrix(), _needed_columns(names)
        sums = np.zeros((counts.shape[0], x.shape[1]))
        sums[:, cols] = weighted_sums(counts, x[:, cols])
        values = metric_arrays(sums, counts.sum(axis=1))
        return {m: values[m] for m in names}

    point_a, point_b = metrics_for_rows(in_a), metrics_for_rows(in_b)
    return paired_bootstrap(
        {m: point_a[m] for m in names}, {m: point_b[m] for m in names}, resampled(out_a), resampled(out_b)
    )


@settings(max_examples=40, deadline=None)
@given(
    random_outcomes(min_rows=2),
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.sampled_from([None, ["jrem"], ["t_f1", "her_c"], ["macro_f1.label", "parse_success"]]),
)
def test_prepared_comparisons_equal_the_reference_exactly(first, seed, shuffled, metrics) -> None:
    """Tie groups compare prepared (decoded once) row outcomes: the same floats as comparing the lists,
    also when b's rows come in another order; and a prepared side's matrix is exactly the indicator matrix."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(first.n)
    second = RowOutcomes(
        **{
            **first.__dict__,
            "valid": first.valid[order],
            "correct": first.correct[order],
            "target_f1": first.target_f1[order],
            "pred": first.pred[order],
        }
    )
    ids = [f"r{i}" for i in range(first.n)]
    a, b = {"id": ids, **first.to_lists()}, {"id": ids, **second.to_lists()}
    if shuffled:
        b = {key: [values[k] for k in order] for key, values in b.items()}
    prepared_a, prepared_b = VARM_TRACK.prepare_compare(a), VARM_TRACK.prepare_compare(b)
    assert np.array_equal(prepared_a.matrix(), first.indicator_matrix())
    got = VARM_TRACK.paired_compare_prepared(prepared_a, prepared_b, bootstrap=97, seed=5, metrics=metrics)
    expected = _reference_compare(a, b, 97, 5, metrics)
    assert repr(got) == repr(expected)  # repr: every float to the last bit
    assert VARM_TRACK.paired_compare(a, b, bootstrap=97, seed=5, metrics=metrics) == got


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 20),
    st.integers(1, 300),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.95, 0.9, 0.5]),
    st.booleans(),
)
def test_percentile_cis_equal_one_percentile_ci_per_metric(metrics, resamples, seed, level, coarse) -> None:
    """A result's intervals come from one batched numpy call: the same floats as one call per metric (ties
    and constant rows included)."""
    from scoring.bootstrap import percentile_cis

    rng = np.random.default_rng(seed)
    values = rng.random((metrics, resamples))
    if coarse:
        values = values.round(1)
        values[0] = 0.25
    named = {f"m{k}": row for k, row in enumerate(values)}
    got = percentile_cis(named, level)
    assert list(got) == list(named)
    assert repr(got) == repr({name: percentile_ci(row, level) for name, row in named.items()})
