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
