"""Published breakdown cells leak less (issue 11, item 4): no cell under 30 rows, no precision/recall/F1 on a
group defined by the gold label, and the VARM harmful / non-harmful JREM under the same cell rule.

Each withheld cell is checked next to a cell just large enough (or mixed enough) that is still published,
so the rule cannot pass by withholding everything.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.api import score_file
from scoring.disclosure import DERIVED_CELL, LABEL_PURE, MIN_CELL_ROWS, SMALL_CELL, derived_small, disjoint
from scoring.toxitrace.tracks import COLD
from scoring.version import SCORER_VERSION

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
METRICS = ("accuracy", "precision", "recall", "f1", "macro_f1")


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _cold_bundle(tmp_path: Path, groups: list[tuple[str, str, int, int]]) -> tuple[Path, bytes]:
    """A COLD bundle: per (topic, fine_label, gold label, rows) that many rows; predictions alternate 0/1."""
    refs, preds = [], []
    for topic, fine, label, count in groups:
        for _ in range(count):
            rid = f"r{len(refs):05d}"
            refs.append({"id": rid, "text": f"文本{rid}", "label": label, "topic": topic, "fine_label": fine})
            preds.append({"id": rid, "label": len(preds) % 2})
    _write_jsonl(tmp_path / "test.jsonl", refs)
    return tmp_path, "".join(json.dumps(p) + "\n" for p in preds).encode()


def test_small_cells_are_withheld_and_cells_of_30_rows_are_published(tmp_path: Path) -> None:
    bundle, preds = _cold_bundle(
        tmp_path,
        [
            ("race", "attack_group", 1, 15),
            ("race", "other_non_offensive", 0, 15),  # race: 30 rows, mixed
            ("gender", "attack_group", 1, 15),
            ("gender", "other_non_offensive", 0, 15),  # gender: 30 rows, mixed
            ("health", "attack_group", 1, 20),
            ("health", "other_non_offensive", 0, 20),  # health: 40 rows, mixed
            ("region", "attack_individual", 1, 14),
            ("region", "anti_bias", 0, 15),
        ],  # region: 29 rows
    )
    cells = COLD.score(COLD.load_references(bundle), preds, bootstrap=0)["breakdowns"]["topic"]
    assert cells["region"]["rows"] == MIN_CELL_ROWS - 1
    assert all(cells["region"][m] is None for m in METRICS) and cells["region"]["withheld"] == SMALL_CELL
    # overall minus the others would give region back: the smallest published topic (gender, 30) goes too
    assert cells["gender"]["withheld"] == DERIVED_CELL and cells["gender"]["f1"] is None
    assert cells["race"]["rows"] == MIN_CELL_ROWS and cells["race"]["withheld"] is None
    assert all(isinstance(cells["race"][m], float) for m in METRICS)
    assert SMALL_CELL.startswith("n/a") and "30 rows" in SMALL_CELL


def test_a_complement_cell_is_never_small() -> None:
    assert derived_small({"a": 40, "b": 50}, 90) == set()  # a partition: nothing derivable is small
    assert derived_small({"a": 40, "b": 50}, 95) == {"a"}  # 5 rows in no group: a goes with them
    assert derived_small({"a": 40, "b": 50}, 130) == set()  # 40 rows in no group: published as derived
    assert derived_small({"a": 10, "b": 50, "c": 35}, 95) == {"a", "c"}
    assert disjoint([[1, 2], [3]]) and not disjoint([[1, 2], [2, 3]])


def test_the_varm_demo_rows_in_no_cue_subset_cannot_be_derived() -> None:
    """On the demo's first 400 test rows, 29 are in no cue subset: overall minus the four subsets would give
    them back, so the smallest subset is withheld with them, and the others stay published (positive
    control)."""
    subsets = _restricted("varm", lambda refs: np.arange(400))["subsets"]
    rows = {name: cell["rows"] for name, cell in subsets.items()}
    assert sum(rows.values()) == 400 - 29
    smallest = min(rows, key=lambda name: (rows[name], name))
    assert subsets[smallest]["withheld"] == DERIVED_CELL and subsets[smallest]["jrem"] is None
    others = [subsets[n] for n in rows if n != smallest]
    assert all(cell["withheld"] != DERIVED_CELL and cell["jrem"] is not None for cell in others)
    # With 38 rows in no subset (the first 500 rows), the derived cell may be published: nothing withheld.
    wider = _restricted("varm", lambda refs: np.arange(500))["subsets"]
    assert all(cell["withheld"] != DERIVED_CELL for cell in wider.values())


def test_label_defined_groups_show_accuracy_only(tmp_path: Path) -> None:
    bundle, preds = _cold_bundle(
        tmp_path,
        [("race", "attack_group", 1, 40), ("race", "anti_bias", 0, 40), ("gender", "anti_bias", 0, 35)],
    )
    result = COLD.score(COLD.load_references(bundle), preds, bootstrap=0)
    fine = result["breakdowns"]["fine_label"]
    for value in ("attack_group", "anti_bias"):  # fine_label is defined by the gold label: never P/R/F1
        assert fine[value]["accuracy"] is not None and fine[value]["withheld"] == LABEL_PURE
        assert all(fine[value][m] is None for m in ("precision", "recall", "f1", "macro_f1"))
    topic = result["breakdowns"]["topic"]
    # "gender" is a topic, but every one of its rows is gold 0: a label-pure group in fact, so accuracy only
    assert topic["gender"]["withheld"] == LABEL_PURE and topic["gender"]["precision"] is None
    assert topic["gender"]["accuracy"] is not None
    # "race" mixes both labels: every metric is published (the positive control)
    assert topic["race"]["withheld"] is None and all(topic["race"][m] is not None for m in METRICS)
    # The unpublished form keeps every value (local scoring of public data, conformance checks)
    raw = COLD.score(COLD.load_references(bundle), preds, bootstrap=0, disclose=False)["breakdowns"]
    assert raw["fine_label"]["attack_group"]["recall"] == 0.5 and raw["topic"]["gender"]["precision"] == 0.0


def test_varm_subset_cells_and_harmful_jrem_obey_the_cell_rule(tmp_path: Path) -> None:
    bundle = tmp_path / "varm"
    (bundle / "subsets").mkdir(parents=True)
    shutil.copy(DEMO / "varm" / "test.jsonl", bundle / "test.jsonl")
    lines = (DEMO / "varm" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    test = [json.loads(line) for line in lines]
    harmful = [r for r in test if r["label"] == "有害"]
    non_harmful = [r for r in test if r["label"] != "有害"]
    _write_jsonl(bundle / "subsets" / "tiny.jsonl", test[: MIN_CELL_ROWS - 1])
    _write_jsonl(bundle / "subsets" / "lopsided.jsonl", harmful[:40] + non_harmful[:10])
    _write_jsonl(bundle / "subsets" / "even.jsonl", harmful[:30] + non_harmful[:30])
    predictions = (DEMO / "varm" / "baselines" / "char-ngram.test.jsonl").read_bytes()
    result = score_file("varm", bundle, predictions, bootstrap=0)
    tiny, lopsided, even = (result["subsets"][n] for n in ("tiny", "lopsided", "even"))
    assert tiny["rows"] == 29 and tiny["jrem"] is None and tiny["field_accuracy"]["label"] is None
    assert tiny["withheld"] == SMALL_CELL and sum(tiny["format_issues"].values()) >= 0  # counts stay
    assert lopsided["jrem"] is not None and lopsided["jrem_harmful"] is not None
    assert lopsided["jrem_non_harmful"] is None and lopsided["jrem_gap"] is None
    assert lopsided["withheld"].startswith("non-harmful JREM n/a: fewer than 30 rows")
    assert even["withheld"] is None
    assert None not in (even["jrem_harmful"], even["jrem_non_harmful"], even["jrem_gap"])


def _restricted(track: str, pick, baseline: str = "lexicon") -> dict:
    """A baseline's published result on the demo test rows `pick(refs)` chose (ascending indices)."""
    from scoring.tracks import get_track

    scorer = get_track(track)
    subsets = DEMO / track / "subsets"
    refs = scorer.load_references(DEMO / track / "test.jsonl", subsets if subsets.is_dir() else None)
    rows = pick(refs)
    keep = {refs.ids[k] for k in rows}
    lines = (DEMO / track / "baselines" / f"{baseline}.test.jsonl").read_text().splitlines()
    part = "".join(line + "\n" for line in lines if line.strip() and json.loads(line)["id"] in keep)
    return scorer.score(refs.restricted(rows), part.encode(), bootstrap=0)


def _public_slice(track: str) -> dict:
    """The demo board's result of the lexicon baseline: the scorer on the public slice alone (a fixed key)."""
    from scoring.slices import public_mask, slice_rows

    return _restricted(
        track, lambda refs: slice_rows(public_mask(bytes(range(32)), refs.ids, refs.strata()))["public"]
    )


def test_demo_board_shows_values_and_reasoned_na_cells() -> None:
    """The demo board (each test's public slice) shows numbers where allowed and says why not."""
    cold = _public_slice("cold")
    assert cold["scorer_version"] == SCORER_VERSION
    assert all(c["withheld"] is None for c in cold["breakdowns"]["topic"].values())  # ~100 rows, mixed
    assert all(
        c["withheld"] == LABEL_PURE and c["accuracy"] is not None
        for c in cold["breakdowns"]["fine_label"].values()
    )
    toxicn = _public_slice("toxicn")
    groups = toxicn["breakdowns"]["target_groups"]
    assert groups["Racism"]["withheld"] == SMALL_CELL and groups["non-hate"]["accuracy"] is not None
    assert all(c["withheld"] == LABEL_PURE for c in toxicn["breakdowns"]["toxic_type"].values())
    varm = _public_slice("varm")
    assert all(cell["rows"] >= 100 and cell["jrem_gap"] is not None for cell in varm["subsets"].values())


def test_ui_shows_withheld_cells_as_na_with_the_reason() -> None:
    from space.ui import figures
    from space.ui.i18n import t
    from space.ui.submission import WITHHELD_COLUMN, breakdowns_table, subsets_table

    note = t(WITHHELD_COLUMN, "en")

    toxicn = _public_slice("toxicn")
    table = breakdowns_table(toxicn, "en").set_index(["Field", "Value"])
    racism = table.loc[("target_groups", "Racism")]
    assert racism["Accuracy ↑"] == "n/a" and racism[note] == SMALL_CELL
    non_toxic = table.loc[("toxic_type", "non_toxic")]
    assert isinstance(non_toxic["Accuracy ↑"], float) and non_toxic["F1 ↑"] == "n/a"
    assert non_toxic[note] == LABEL_PURE
    # toxic_type publishes accuracy only, so its chart draws accuracy and names the reason
    rows = [{"submission_id": "a" * 16, "model_name": "lexicon"}]
    fig = figures.breakdown_bars(rows, [toxicn], "toxic_type", lang="en", track="toxicn")
    assert "Accuracy" in fig.layout.title.text and None not in fig.data[0].y
    groups = figures.breakdown_bars(rows, [toxicn], "target_groups", lang="en", track="toxicn")
    assert "n/a" in [c[1] for c in groups.data[0].customdata]
    assert SMALL_CELL.split(" (")[0] in groups.layout.title.text.replace("<br>", " ")  # said under the title

    varm = _restricted("varm", lambda refs: np.arange(300))  # a small test: general_abuse has 29 non-harmful
    subsets = subsets_table(varm, "en").set_index("Subset")  # by display name
    assert subsets.loc["General abuse", "JREM non-harmful ↑"] == "n/a"
    assert "fewer than 30 rows" in subsets.loc["General abuse", note]
    assert isinstance(subsets.loc["General abuse", "JREM harmful ↑"], float)
    chinese = subsets_table(varm, "zh").set_index("子集")
    assert "少于 30 条" in chinese.loc["一般辱骂", t(WITHHELD_COLUMN, "zh")]  # said in the page language
    heat = figures.cue_heatmap(rows, [varm], "en")
    column = sorted(varm["subsets"]).index("general_abuse")
    assert heat.data[1].text[0][column] == "n/a" and heat.data[0].text[0][column] != "n/a"


@pytest.mark.parametrize("track", ["varm", "cold", "cntp"])
def test_intervals_depend_on_outcome_counts_not_on_which_rows(track: str, tmp_path: Path) -> None:
    """The same test set in another row order gives byte-identical published intervals; resampled in test
    order (scorer 1.0.0) they differed, so an interval told which rows a submission got right."""
    import numpy as np

    from scoring.bootstrap import percentile_ci, resample_indices
    from scoring.toxitrace.classification import bootstrap_metrics

    source = DEMO / track
    bundle = tmp_path / track
    shutil.copytree(source, bundle, ignore=shutil.ignore_patterns("baselines", "train.jsonl", "dev.jsonl"))
    lines = (source / "test.jsonl").read_text(encoding="utf-8").splitlines()
    order = np.random.default_rng(5).permutation(len(lines))
    (bundle / "test.jsonl").write_text("".join(lines[k] + "\n" for k in order), encoding="utf-8")
    predictions = (source / "baselines" / "lexicon.test.jsonl").read_bytes()
    first = score_file(track, source, predictions, bootstrap=300, seed=0)
    again = score_file(track, bundle, predictions, bootstrap=300, seed=0)
    assert first["ci"] and first["ci"] == again["ci"]
    spans = first["metrics"].pop("spans", {})  # a mean of per-row floats (iou) may differ in the last bit
    assert again["metrics"].pop("spans", {}) == pytest.approx(spans, rel=1e-12)
    assert first["metrics"] == again["metrics"]
    if track == "cold":  # the control: the old test-order bootstrap does tell the two orders apart
        gold = np.array([json.loads(x)["label"] for x in lines])
        pred = np.array([json.loads(x)["label"] for x in predictions.decode().splitlines()])
        idx = resample_indices(len(gold), 300, 0)
        old = percentile_ci(bootstrap_metrics(gold, pred, idx)["f1"])
        assert old != percentile_ci(bootstrap_metrics(gold[order], pred[order], idx)["f1"])


@pytest.mark.parametrize("track", ["varm", "cold"])
def test_paired_comparisons_do_not_depend_on_which_rows(track: str) -> None:
    """The public Compare tab and the tie groups use a paired bootstrap: the same two submissions over the
    same test set in another row order give the same comparison (pairs kept, row identity dropped)."""
    import numpy as np

    from scoring.tracks import get_track

    scorer = get_track(track)
    refs = scorer.load_references(DEMO / track)
    a = scorer.row_outcomes(refs, (DEMO / track / "baselines" / "lexicon.test.jsonl").read_bytes())
    b = scorer.row_outcomes(refs, (DEMO / track / "baselines" / "char-ngram.test.jsonl").read_bytes())
    order = np.random.default_rng(3).permutation(len(a["id"]))

    def permuted(side: dict) -> dict:
        return {key: [values[k] for k in order] for key, values in side.items()}

    first = scorer.paired_compare(a, b, bootstrap=300, seed=0)
    again = scorer.paired_compare(permuted(a), permuted(b), bootstrap=300, seed=0)
    assert first and first == again
    assert any(entry["ci"] and entry["ci"][0] != entry["ci"][1] for entry in first.values())


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 30),
    st.integers(0, 140),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["bool", "flags", "flags-and-floats", "small-ints", "nan"]),
)
def test_unlinked_rows_is_the_plain_lexicographic_sort(n, k, seed, kind) -> None:
    """`unlinked_rows` packs runs of 0/1 columns into integer keys: exactly the permutation of a stable sort
    on every column (ties, long runs past one key, floats, NaN and -0.0 included)."""
    from scoring.disclosure import unlinked_rows

    rng = np.random.default_rng(seed)
    table = rng.integers(0, 2, (n, k)).astype(np.float64)
    if kind == "bool":
        table = table.astype(bool)
    elif kind == "small-ints":
        table = rng.integers(-1, 3, (n, k)).astype(np.int8)
    elif kind in ("flags-and-floats", "nan") and k:
        cols = rng.integers(0, k, 3)
        table[:, cols] = rng.random((n, 3)).round(1)
        if kind == "nan" and n:
            table[0, cols[0]], table[-1, cols[-1]] = np.nan, -0.0
    plain = np.lexsort(table.T[::-1]) if table.size else np.arange(n)
    assert np.array_equal(unlinked_rows(table), plain)
    assert np.array_equal(
        unlinked_rows(table[:, 0] if k else np.zeros(n)),
        np.argsort(table[:, 0] if k else np.zeros(n), kind="stable"),
    )
