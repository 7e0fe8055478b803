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
    out = scorer.score_slices(refs, data, slices, bootstrap={"full": 50, "public": 50, "private": 50}, seed=0)
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


# -- the worker: the key at install, the public slice staged, the private and full results sealed ----------


def _submit(store, service, track: str, name: str) -> str:
    from tests.conftest_pipeline import baseline_file

    out = service.submit(
        identity="alice", track=track, data=baseline_file(track, name), metadata={"model_name": name}
    )
    return out["submission_id"]


def test_install_keys_the_slices_and_the_worker_stages_only_the_public_slice(local_store, tmp_path):
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.config import Config
    from worker.gold.install import install
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.gold.sealed import unseal
    from worker.service import Service
    from worker.store import layout

    store = local_store
    install(store, "varm", DEMO / "varm", kind="demo")
    key = parse_slice_key(store.read("references", layout.slice_key("varm")).decode())
    assert not any("slice" in path for path in store.list("results", ""))  # never published
    service = Service(Config(data_dir=tmp_path / "data"), store, RecordingEnqueuer())
    sid = _submit(store, service, "varm", "lexicon")
    assert score_submission(store, ReferenceCache(store).get, "varm", sid, time_limit=300) == "scored"

    refs = _refs("varm")
    mask = public_mask(key, refs.ids, refs.strata())
    staged = json.loads(store.read("submissions", layout.staged_result_path("varm", sid, 1)))
    assert staged["slice"] == "public" and staged["rows"] == int(mask.sum())
    assert service.submission(sid, viewer="alice")["result"] is None  # not before the Ladder's publish
    Publisher(store).publish("varm")
    view = service.submission(sid, viewer="alice")  # what the web process (the owner too) can see
    assert view["result"]["result"]["rows"] == int(mask.sum())

    sealed_bytes = store.read("submissions", layout.sealed_result_path("varm", sid, 1))
    assert b"jrem" not in sealed_bytes  # encrypted: the web process reads this area
    sealed = unseal(key, sealed_bytes)
    data = (DEMO / "varm" / "baselines" / "lexicon.test.jsonl").read_bytes()
    scorer = get_track("varm")
    full, _ = scorer.score_with_rows(refs, data)
    assert sealed["full"]["metrics"] == full["metrics"] and sealed["full"]["rows"] == len(refs)
    assert sealed["private"]["rows"] == int((~mask).sum())
    with pytest.raises(ValueError):  # positive control: another key does not open it
        unseal(bytes(32), sealed_bytes)


def test_the_key_survives_a_reinstall_and_a_new_set_gets_a_new_one(local_store, tmp_path):
    import shutil

    from worker.gold.install import install
    from worker.store import layout

    store = local_store
    install(store, "cold", DEMO / "cold", kind="demo")
    first = store.read("references", layout.slice_key("cold"))
    install(store, "cold", DEMO / "cold", kind="demo")  # the same set: nothing changes
    assert store.read("references", layout.slice_key("cold")) == first
    # A store installed before slices existed gets a key on the next install run.
    store.commit("references", {}, [layout.slice_key("cold")], "drop the key (an older store)")
    install(store, "cold", DEMO / "cold", kind="demo")
    legacy = store.read("references", layout.slice_key("cold"))
    assert legacy and legacy != first
    other = tmp_path / "other"
    shutil.copytree(DEMO / "cold", other, ignore=shutil.ignore_patterns("baselines"))
    lines = (other / "test.jsonl").read_text().splitlines()
    (other / "test.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    install(store, "cold", other, kind="demo")
    assert store.read("references", layout.slice_key("cold")) not in (first, legacy)


def _floats(value):
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _floats(item)
    elif isinstance(value, list):
        for item in value:
            yield from _floats(item)


def test_the_gate_rounds_every_staged_number_of_a_private_test_and_none_of_a_public_one(local_store):
    from worker.gold.install import install
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import compute

    store = local_store
    install(store, "cntp", DEMO / "cntp", kind="demo")
    data = (DEMO / "cntp" / "baselines" / "char-ngram.test.jsonl").read_bytes()
    result, _, sealed = compute(ReferenceCache(store).get("cntp"), data)
    floats = list(
        _floats({k: result[k] for k in ("metrics", "ci", "breakdowns", "explanations") if k in result})
    )
    assert floats and all(x == round(x, 3) for x in floats)
    # Positive control: the sealed full result keeps full precision (the gate rounds, nothing else does).
    assert any(x != round(x, 3) for x in _floats(sealed["full"]["metrics"]))

    manifest = json.loads(store.read("references", "cntp/reference_set.json"))
    store.commit(
        "references",
        {"cntp/reference_set.json": json.dumps({**manifest, "test_status": "public"}).encode()},
        [],
        "mark the set public",
    )
    public, _, none = compute(ReferenceCache(store).get("cntp"), data)
    assert none is None and "slice" not in public and public["rows"] == sealed["full"]["rows"]
    assert public["metrics"] == sealed["full"]["metrics"]  # a public test: full and exact (spec §5)


def test_compare_takes_only_submissions_on_the_board(local_store, tmp_path):
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.config import Config
    from worker.records import PUBLISHED, on_board
    from worker.service import Service

    store = local_store
    from worker.gold.install import install

    install(store, "varm", DEMO / "varm", kind="demo")
    enqueuer = RecordingEnqueuer()
    service = Service(Config(data_dir=tmp_path / "data"), store, enqueuer)
    a, b = _submit(store, service, "varm", "lexicon"), _submit(store, service, "varm", "majority")
    with pytest.raises(ValueError, match="on the board"):
        service.compare(a, b)  # queued, not published: no comparison
    record = {"status": PUBLISHED, "hidden": False, "versions": [{"version": 1}]}
    assert on_board(record)  # positive control
    assert not on_board({**record, "hidden": True}) and not on_board({**record, "status": "held"})


def test_an_auprc_window_probe_on_a_private_item_moves_no_public_number():
    """Issue 22: the full-float CNTP attribution AUPRC decoded an item's gold-span characters (a 16-character
    window per submission): score one character high and every other low, and the AUPRC tells whether that
    character is gold. Now an item of the private slice moves nothing published: the public slice's result,
    in the gate's rounded form, is byte-identical for every character probed. Positive controls: the same
    probes move the full-test AUPRC (the probe works where the sealed results see it), and on a public item
    they move the public slice's unrounded AUPRC."""
    from scoring.disclosure import rounded

    refs, scorer = _refs("cntp"), get_track("cntp")
    mask = public_mask(KEY, refs.ids, refs.strata())
    slices = slice_rows(mask)
    lines = [json.loads(line) for line in (DEMO / "cntp" / "baselines" / "char-ngram.test.jsonl").open()]

    def spanned(public: bool) -> int:
        """An item with gold spans predicted toxic (the AUPRC reads the predicted class's scores)."""
        return next(
            k
            for k, spans in enumerate(refs.spans)
            if spans
            and lines[k]["label"] == 1
            and len(lines[k]["char_scores"]) >= 20
            and bool(mask[k]) is public
        )

    def probe(item: int) -> dict[str, list]:
        """Per slice name, the AUPRC-bearing results of every window probe on `item`."""
        length = len(lines[item]["char_scores"])
        seen: dict[str, list] = {"full": [], "public": [], "public, rounded": []}
        for probed in range(min(length, 16)):
            scores = [5.0 if c == probed else -5.0 for c in range(length)]
            edited = [dict(row, char_scores=scores) if k == item else row for k, row in enumerate(lines)]
            data = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in edited).encode()
            out = scorer.score_slices(refs, data, slices, bootstrap={"full": 0, "public": 0, "private": 0})
            seen["full"].append(out["full"][0]["explanations"])
            seen["public"].append(out["public"][0]["explanations"])
            seen["public, rounded"].append(json.dumps(rounded(out["public"][0]), sort_keys=True))
        return seen

    hidden = probe(spanned(public=False))
    assert len(hidden["full"]) >= 3
    assert len({json.dumps(e, sort_keys=True) for e in hidden["full"]}) > 1  # the probe reads the full test
    assert len(set(hidden["public, rounded"])) == 1  # ... and nothing published moves
    shown = probe(spanned(public=True))
    assert len({json.dumps(e, sort_keys=True) for e in shown["public"]}) > 1  # positive control


@pytest.mark.parametrize("track", ["varm", "cold"])  # the demo's private sets have a slice key
def test_the_reference_cache_loads_a_revision_once(tmp_path, monkeypatch, track):
    """A worker loads a track's references once per revision, not once per scoring (a slice key once
    took the cache entry's key: every scoring re-read and re-parsed the whole test set)."""
    from tests.conftest_pipeline import seed_store
    from worker.config import Config
    from worker.gold.references import ReferenceCache
    from worker.store import open_store

    config = Config(data_dir=tmp_path)
    seed_store(config, DEMO)
    scorer = get_track(track)
    loads = Counter()
    load = type(scorer).load_references
    monkeypatch.setattr(
        type(scorer), "load_references", lambda self, *a: loads.update([self.name]) or load(self, *a)
    )
    cache = ReferenceCache(open_store(config))
    first = cache.get(track)
    assert cache.get(track) is first and cache.get(track, first.revision) is first
    assert loads[track] == 1 and first.slices is not None  # positive control: loaded, and sliced


def test_an_empty_public_slice_is_scored_with_zero_intervals() -> None:
    """A test set whose strata each hold one row has no public rows (round(0.3 * 1) = 0): its public result
    resamples no rows, as the plain matrix product did (an empty slice once raised in the exact sums)."""
    refs = _refs("varm")
    data = (DEMO / "varm" / "baselines" / "lexicon.test.jsonl").read_bytes()
    scored = get_track("varm").score_slices(
        refs, data, {"public": np.array([], dtype=int)}, bootstrap={"full": 20, "public": 20}
    )
    public = scored["public"][0]  # (result, row outcomes)
    assert public["rows"] == 0
    assert public["ci"] and all(bounds == [0.0, 0.0] for bounds in public["ci"].values())
