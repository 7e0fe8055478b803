"""Private per-row outcomes stored packed (worker/gold/outcomes.py): exactly the same lists back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.parametrize("track", ["varm", "cold", "toxicn", "cntp"])
def test_packed_row_outcomes_unpack_to_exactly_the_same_lists(track: str) -> None:
    """Same values AND Python types, so every paired comparison (tie groups, Compare) is unchanged; the
    packed file is smaller; an older file of plain lists loads as it is."""
    from scoring.tracks import get_track
    from tests.factories import mixed_predictions
    from worker.gold.outcomes import pack, unpack, unpack_arrays
    from worker.submissions import dumps

    demo = Path(__file__).resolve().parents[1] / "data" / "demo" / track
    track_obj = get_track(track)
    refs = track_obj.load_references(demo / "test.jsonl", demo / "subsets" if track == "varm" else None)
    rows = track_obj.row_outcomes(refs, mixed_predictions(track, 0.4))
    stored = json.loads(dumps(pack(rows)))
    back = unpack(stored)
    assert back == rows

    def types(r: dict) -> dict:
        return {k: [type(x) for x in v] for k, v in r.items()}

    assert types(back) == types(rows)
    assert len(dumps(pack(rows))) < len(dumps(rows))
    assert unpack(json.loads(dumps(rows))) == rows  # the plain form of older files
    other = track_obj.row_outcomes(refs, mixed_predictions(track, 0.7))
    compare = track_obj.paired_compare
    assert compare(back, unpack(pack(other)), bootstrap=200, seed=0) == compare(
        rows, other, bootstrap=200, seed=0
    )
    # Tie groups prepare the stored columns as arrays (no lists in between): the same comparison.
    arrays = [track_obj.prepare_compare(unpack_arrays(json.loads(dumps(pack(r))))) for r in (rows, other)]
    expected = compare(rows, other, bootstrap=200, seed=0, metrics=[track_obj.primary_metric])
    assert repr(
        track_obj.paired_compare_prepared(*arrays, bootstrap=200, seed=0, metrics=[track_obj.primary_metric])
    ) == repr(expected)


@pytest.mark.parametrize("track", ["varm", "cold", "toxicn", "cntp"])
def test_score_with_rows_is_score_and_row_outcomes_from_one_parse(track: str) -> None:
    """The worker scores with `score_with_rows` (one parse instead of two): byte-identical to the two calls,
    for VARM, the ToxiTrace tracks, and ToxiTrace predictions with char_scores (explanations)."""
    from scoring.tracks import get_track
    from tests.factories import mixed_predictions
    from worker.submissions import dumps

    demo = Path(__file__).resolve().parents[1] / "data" / "demo" / track
    track_obj = get_track(track)
    refs = track_obj.load_references(demo / "test.jsonl", demo / "subsets" if track == "varm" else None)
    files = [mixed_predictions(track, 0.4), mixed_predictions(track, 0.9, seed=1)]
    if track != "varm":
        texts = {row["id"]: row["text"] for row in track_obj.public_inputs(refs)}
        lines = [json.loads(line) for line in files[0].splitlines()]
        files.append(
            b"".join(
                (
                    json.dumps(
                        {**row, "char_scores": [0.2 + 0.6 * (k % 2) for k in range(len(texts[row["id"]]))]},
                        ensure_ascii=False,
                    )
                    + "\n"
                ).encode()
                for row in lines
            )
        )
    for data in files:
        result, rows = track_obj.score_with_rows(refs, data, bootstrap=200, seed=3)
        assert dumps(result) == dumps(track_obj.score(refs, data, bootstrap=200, seed=3))
        assert dumps(rows) == dumps(track_obj.row_outcomes(refs, data))
    assert "explanations" in result or track == "varm"  # the char_scores file really was scored as such


def test_row_outcomes_as_arrays_pack_to_the_same_bytes_as_their_lists() -> None:
    """The worker packs VARM's row outcomes from arrays (`RowOutcomes.to_arrays`: no lists in between); the
    stored bytes are those of the lists, for every column, on a file with invalid rows and format issues.
    Positive control: the same values as floats (not 0/1 ints) pack differently."""
    import numpy as np

    from scoring.tracks import get_track
    from scoring.varm_metrics import row_outcomes
    from tests.factories import mixed_predictions
    from worker.gold.outcomes import pack
    from worker.submissions import dumps

    demo = Path(__file__).resolve().parents[1] / "data" / "demo" / "varm"
    varm = get_track("varm")
    refs = varm.load_references(demo / "test.jsonl", demo / "subsets")
    lines = [json.loads(line) for line in mixed_predictions("varm", 0.4).decode().splitlines()]
    for k in range(0, len(lines), 7):  # cut outputs: invalid rows, format issues
        lines[k]["output"] = lines[k]["output"][: len(lines[k]["output"]) // 2]
    data = "".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in lines).encode()
    checked = varm._check(data, varm.public_inputs(refs), advice=False)
    outcomes = row_outcomes(checked.parsed, refs.rows)
    assert outcomes.issues.any() and not outcomes.valid.all()  # the file exercises every column
    lists, arrays = outcomes.to_lists(), outcomes.to_arrays()
    assert list(lists) == list(arrays)
    for name in lists:
        assert dumps(pack({name: arrays[name]})) == dumps(pack({name: lists[name]})), name
    ids = list(refs.ids)
    assert dumps(pack({"id": ids, **arrays})) == dumps(pack({"id": ids, **lists}))
    assert dumps(pack({"valid": outcomes.valid.astype(float)})) != dumps(pack({"valid": lists["valid"]}))
    # An empty slice (a tiny test set's public slice): its lists are [] (float columns of shape [0]).
    from scoring.varm import _take

    empty = _take(outcomes, np.array([], dtype=np.int64))
    assert dumps(pack(empty.to_arrays())) == dumps(pack(empty.to_lists()))
    one = _take(outcomes, np.array([0]))
    assert dumps(pack(one.to_arrays())) == dumps(pack(one.to_lists()))
    assert np.array_equal(np.asarray(lists["issues"]), arrays["issues"])
