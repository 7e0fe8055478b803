"""Public/private slices of a private test (../shared/spec/disclosure.md §2): membership and slice scoring."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from scoring.slices import PUBLIC_SHARE, new_slice_key, parse_slice_key, public_mask, slice_rows
from scoring.tracks import get_track

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
KEY = bytes(range(32))


def _refs(track: str):
    bundle = DEMO / track
    subsets = bundle / "subsets"
    return get_track(track).load_references(bundle / "test.jsonl", subsets if subsets.is_dir() else None)


def test_membership_is_stratified_exactly_and_keyed():
    ids = [f"item-{k}" for k in range(1000)]
    strata = [("a" if k % 4 else "b", k % 3 == 0) for k in range(1000)]
    mask = public_mask(KEY, ids, strata)
    for stratum, size in Counter(strata).items():
        members = [k for k, s in enumerate(strata) if s == stratum]
        assert mask[members].sum() == round(PUBLIC_SHARE * size)
    assert np.array_equal(mask, public_mask(KEY, ids, strata))  # deterministic
    other = public_mask(bytes(32), ids, strata)  # positive control: another key draws other items
    assert not np.array_equal(mask, other)
    assert mask.sum() == other.sum()
    rows = slice_rows(mask)
    assert sorted([*rows["public"], *rows["private"]]) == list(range(1000))


def test_membership_does_not_depend_on_other_items():
    """An item's slice depends on the key, its id and its stratum's members only, not on file order."""
    ids = [f"x{k}" for k in range(300)]
    strata = [k % 2 for k in range(300)]
    mask = public_mask(KEY, ids, strata)
    order = np.random.default_rng(1).permutation(300)
    shuffled = public_mask(KEY, [ids[k] for k in order], [strata[k] for k in order])
    assert {ids[k] for k in order[shuffled]} == {ids[k] for k in np.flatnonzero(mask)}


def test_slice_key_round_trip_and_refusal():
    key = new_slice_key()
    assert parse_slice_key(key.hex()) == key and len(key) == 32
    with pytest.raises(ValueError):
        parse_slice_key("abcd")


@pytest.mark.parametrize("track", ["varm", "cold", "toxicn", "cntp"])
def test_slice_results_equal_scoring_the_slice_alone(track):
    """score_slices parses once; each slice's result and rows equal scoring that slice's references and
    predictions on their own, and "full" equals score_with_rows."""
    refs = _refs(track)
    scorer = get_track(track)
    data = (DEMO / track / "baselines" / "char-ngram.test.jsonl").read_bytes()
    mask = public_mask(KEY, refs.ids, refs.strata())
    slices = slice_rows(mask)
    out = scorer.score_slices(refs, data, slices, bootstrap=50, seed=0)
    assert out["full"] == scorer.score_with_rows(refs, data, bootstrap=50, seed=0)
    lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    for name, rows in slices.items():
        keep = {refs.ids[k] for k in rows}
        part = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines if x["id"] in keep)
        alone = scorer.score_with_rows(refs.restricted(rows), part.encode(), bootstrap=50, seed=0)
        assert out[name] == alone, name
        assert out[name][0]["rows"] == len(rows)
    assert out["public"][0] != out["private"][0]  # positive control: the slices are scored apart


def test_varm_strata_keep_every_subset_in_both_slices():
    refs = _refs("varm")
    mask = public_mask(KEY, refs.ids, refs.strata())
    assert abs(mask.mean() - PUBLIC_SHARE) < 0.01
    for name, members in refs.subsets.items():
        share = mask[members].mean()
        assert abs(share - PUBLIC_SHARE) < 0.05, (name, share)
    public = refs.restricted(np.flatnonzero(mask))
    assert {name: len(rows) for name, rows in public.subsets.items()} == {
        name: int(mask[rows].sum()) for name, rows in refs.subsets.items()
    }
