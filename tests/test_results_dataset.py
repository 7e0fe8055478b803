"""The public results repo is a dataset that `datasets.load_dataset` and pandas read directly.

Published through the pipeline's own code, then read back with the real `datasets` library: from a
local snapshot of the LocalStore, and over HTTP from the fake Hub (the allowed boundary).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from datasets import load_dataset

from tests.conftest_ui import publish_demo_board


@pytest.mark.parametrize("track", ["varm", "cold"])
def test_load_dataset_reads_the_published_board(store, store_config, track, tmp_path):
    ids = publish_demo_board(store, track, 2)
    board = json.loads(store.read("results", f"{track}/leaderboard.json"))
    primary = board["primary_metric"]

    if store_config.store == "hub":
        source = store_config.hf_results_repo  # resolved against HF_ENDPOINT, the fake Hub
    else:
        source = str(store.local_snapshot("results"))
    dataset = load_dataset(source, track, split="test", cache_dir=str(tmp_path / "datasets-cache"))

    frame = dataset.to_pandas()
    assert sorted(frame["submission_id"]) == sorted(ids)
    assert list(frame["submission_id"]) == [r["submission_id"] for r in board["rows"]]
    assert frame[primary].tolist() == [r[primary] for r in board["rows"]]
    # pandas straight from the parquet file gives the same rows.
    parquet = pd.read_parquet(store.local_snapshot("results") / track / "leaderboard.parquet")
    assert parquet["submission_id"].tolist() == frame["submission_id"].tolist()
    # A 0 that is not a measurement travels with its reason (text); the value column stays numeric.
    named = {r["submission_id"]: r.get("undefined.precision") for r in board["rows"]}
    if track == "cold":
        loaded = [None if pd.isna(v) else v for v in frame["undefined.precision"]]
        assert loaded == [named[s] for s in frame["submission_id"]]
        assert dataset.features["undefined.precision"].dtype in ("string", "large_string")
        assert named[ids[0]].startswith("TP + FP = 0")  # ids[0]: the majority baseline
        assert sum(v is not None for v in named.values()) == 1  # systems that predict positives: none
    else:
        assert "undefined.precision" not in frame.columns
