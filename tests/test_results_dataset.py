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
