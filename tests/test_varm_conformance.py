"""Differential conformance of the VARM scorer against a plain reading of the spec.

The oracle is `tests/spec_reference_varm.py` (written from shared/spec/varm-protocol.md only). Each test feeds
the same adversarial raw outputs / gold bundles to the project's scorer and to the oracle and demands:

* per output: record, anchor_schema_valid, schema_valid and the ordered format issues, exactly;
* per dataset (through `scoring.api.score_file` and the `varm` track): every metric, the format issue
  counts and every cue-subset block; official metrics (field accuracy, JREM, HER-C, HER-L) with exact float
  equality, extensions within 1e-12; Macro-F1 also against scikit-learn's `f1_score`;
* per row (`Track.row_outcomes`) and per invalid output (`Report.format_report`).

Generated inputs come from one builder driven by a "chooser": Hypothesis drives it in the @given tests (so
failures shrink), a seeded `random.Random` drives it in the bulk sweeps (many more examples, cheaply).
"""

from __future__ import annotations

import json
import random
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from scoring.api import score_file
from scoring.disclosure import MIN_CELL_ROWS, SMALL_CELL
from scoring.protocol import parse_output
from scoring.tracks import get_track
from scoring.varm_metrics import target_f1 as scorer_target_f1
from tests import spec_reference_varm as ref

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo" / "varm"

OFFICIAL = (
    "field_accuracy.target",
    "field_accuracy.target_type",
    "field_accuracy.target_explicitness",
    "field_accuracy.stance",
    "field_accuracy.label",
    "field_accuracy.category",
    "jrem",
    "her_c",
    "her_l",
)
EXTENSION_TOLERANCE = 1e-12
SENTINEL = "\x00<invalid>"  # for scikit-learn: a string that equals no class

SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
DATASET_SETTINGS = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


# --- choosers -------------------------------------------------------------------------------------


class HypothesisChooser:
    """Draws through Hypothesis; every choice shrinks towards 'no mutation' / the first option."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def pick(self, options):
        return self.data.draw(st.sampled_from(list(options)))

    def integer(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))

    def chance(self, p: float) -> bool:
        return self.data.draw(st.integers(0, 999)) >= 1000 - round(p * 1000)


class RandomChooser:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, options):
        return self.rng.choice(list(options))

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p


# --- building blocks ------------------------------------------------------------------------------

NO_TARGET = ref.NO_TARGET
NAMES = ref.REQUIRED_SEQUENCE
FIELD_OF = ref.FIELD_OF_ANCHOR

BRACKETS = [("【", "】"), ("［", "］"), ("〔", "〕"), ("[", "】"), ("【", "]"), ("[", "］")]
NAME_SPACES = [" ", "\u3000", "\t", "  "]
VALUE_SPACES = [" ", "\u3000", "\t", "\xa0", "\x1c", "\u2028"]
WEIRD_NAMES = ["T", "TY", "TT", "S", "L", "C", "t", "Ty", "TX", "T ", " T", "TTY", "SL", "ＴＹ"]
WEIRD_VALUES = [
    *ref.PLACEHOLDERS,
    "",
    " ",
    "\u3000",
    "有害 ",
    " 有 害",
    "harmful",
    "Harmful",
    NO_TARGET,
    "无明确对象 ",
    "单一对象",
    "群体对象",
    "明示",
    "隐含",
    "非攻击",
    "一般辱骂",
    "攻击或认同",
    "中性提及",
    "无害",
    "有害",
    "a]b",
    "x\ny",
    "x\rz",
    "[T:楼主",
    "楼主]",
    "单一",
    "性别攻击。",
    "ＡＢＣ",
    "\U00020000",
    "〇",
    "[",
    ":",
    "…分析",
    "主要对象 ",
    " ...",
]
CJK_FILLERS = [
    "这条评论针对的是",
    "它属于",
    "评论里的指向是",
    "作者的态度为",
    "综合判断该内容",
    "类别归为",
    "理由是评论语境中的用词和指向都比较明确",
    "是",
    "为",
    "即",
    "结论",
    "且对象为",
    "所以属于",
]
ODD_FILLERS = [
    "",
    "",
    "，",
    "、",
    "〇",
    " ",
    "and",
    "：",
    "——",
    "\u33ff",
    "\u3400",
    "\u9fff",
    "\ua000",
    "\U00020000",
    "\uf900",
    "。",
    "\n",
    "\r",
    "\r\n",
    "ｘ",
    "1",
    "\u3000",
    "]",
    "[",
    "[T:",
    "T:楼主]",
    "\u2028",
    "(",
    "）",
]
PREFIXES = ["分析："] * 8 + [
    "分析:",
    "",
    "分析",
    "分析 ：",
    "分 析：",
    "分析：\n",
    "Analysis:",
    "\ufeff分析：",
    "分析︰",
    "分析：[T:x]",
    "結論：",
]
WRAPPERS = ["{", "[", "```", "#", "- ", "-", "```json\n", "# ", "—", "【", "``", "-\t", "*"]
CLOSERS = ["}", "]", "```", "", "\n```"]
EDGE_SPACE = [
    "",
    "",
    "",
    " ",
    "\n",
    "\t",
    "\u3000",
    "\r\n",
    "\xa0",
    "\x1c",
    "\x85",
    "\u2028",
    "\ufeff",
    "\u200b",
    " \n\t",
]
PADS = ["很", "x", "。", "\U00020000", "\u3400", "\u9fff", "\ua000", "，"]
RANDOM_ALPHABET = list("[]【】［］TYSLC:：分析很是x{#-` \n\r，。") + ["\U00020000", "\u3400", "\u9fff"]


def consistent_record(c) -> dict:
    """A record obeying the three consistency rules of spec §2.3."""
    if c.chance(0.25):
        target, ty, tt = NO_TARGET, NO_TARGET, NO_TARGET
    else:
        target = c.pick(["外地人", "楼主", "女司机", "程序员", "ABC", "Boss", "我那个室友", "a b", "某某"])
        ty = c.pick(["单一对象", "群体对象"])
        tt = c.pick(["明示", "隐含"])
    label = c.pick(["有害", "无害"])
    if label == "有害":
        stance = "攻击或认同"
        category = c.pick(ref.ALLOWED_VALUES["category"][1:])
    else:
        stance = c.pick(["反对攻击", "引用或转述", "中性提及"])
        category = "非攻击"
    return {
        "target": target,
        "target_type": ty,
        "target_explicitness": tt,
        "stance": stance,
        "label": label,
        "category": category,
    }


def any_record(c) -> dict:
    """Mostly consistent; sometimes every value independent (breaks consistency rules)."""
    record = consistent_record(c)
    if c.chance(0.2):
        for field in ref.DISCRETE_FIELD_NAMES:
            record[field] = c.pick(ref.ALLOWED_VALUES[field])
        record["target"] = c.pick([NO_TARGET, "楼主", "外地人"])
    return record


def render_anchor(c, name: str, value: str, m: float) -> str:
    opening, closing = c.pick(BRACKETS) if c.chance(0.08 * m) else ("[", "]")
    colon = "：" if c.chance(0.06 * m) else ":"
    before = c.pick(NAME_SPACES) if c.chance(0.05 * m) else ""
    after = c.pick(NAME_SPACES) if c.chance(0.05 * m) else ""
    value_before = c.pick(VALUE_SPACES) if c.chance(0.1 * m) else ""
    value_after = c.pick(VALUE_SPACES) if c.chance(0.1 * m) else ""
    return f"{opening}{before}{name}{after}{colon}{value_before}{value}{value_after}{closing}"


def filler(c, m: float) -> str:
    if c.chance(0.12 * m):
        return c.pick(ODD_FILLERS)
    return c.pick(CJK_FILLERS)


def mutate_anchors(c, anchors: list[list[str]], m: float) -> list[list[str]]:
    anchors = [list(pair) for pair in anchors]
    if c.chance(0.06 * m) and anchors:  # drop
        del anchors[c.integer(0, len(anchors) - 1)]
    if c.chance(0.06 * m) and anchors:  # duplicate (maybe with another value)
        k = c.integer(0, len(anchors) - 1)
        copy = list(anchors[k])
        if c.chance(0.5):
            copy[1] = c.pick(WEIRD_VALUES)
        anchors.insert(c.integer(0, len(anchors)), copy)
    if c.chance(0.06 * m) and len(anchors) >= 2:  # reorder
        i, j = c.integer(0, len(anchors) - 1), c.integer(0, len(anchors) - 1)
        anchors[i], anchors[j] = anchors[j], anchors[i]
    if c.chance(0.05 * m) and anchors:  # swap names T/TY/TT/...
        anchors[c.integer(0, len(anchors) - 1)][0] = c.pick(WEIRD_NAMES)
    for pair in anchors:
        if c.chance(0.04 * m):
            pair[1] = c.pick(WEIRD_VALUES)
    return anchors


def build_output(c, record: dict | None = None) -> str:
    """A rationale for `record` (a drawn one when None), then mutated towards the parser's edges.

    `m` scales every mutation probability: 0 gives a clean rationale, so valid outputs stay common.
    """
    if c.chance(0.04):  # free text from a small, anchor-rich alphabet
        return "".join(c.pick(RANDOM_ALPHABET) for _ in range(c.integer(0, 60)))
    m = c.pick([0.0, 0.0, 0.3, 1.0, 1.5])
    record = any_record(c) if record is None else record
    anchors = mutate_anchors(c, [[name, record[FIELD_OF[name]]] for name in NAMES], m)
    parts = [c.pick(PREFIXES) if c.chance(0.6 * m) else "分析："]
    if c.chance(0.05 * m):
        parts.insert(0, c.pick(WRAPPERS))
    parts.append(filler(c, m))
    for name, value in anchors:
        parts.append(render_anchor(c, name, value, m))
        parts.append(filler(c, m))
    if c.chance(0.7):
        parts.append("理由是评论语境中的用词和指向都比较明确")
    parts.append(c.pick(["。", "", "！"]))
    if c.chance(0.04 * m):
        parts.append(c.pick(CLOSERS))
    core = "".join(parts)
    if c.chance(0.35):  # aim the stripped length at a boundary of 80–180 (or anywhere near it)
        goal = c.pick([79, 80, 180, 181, c.integer(60, 200)])
        stripped = core.strip()
        if len(stripped) < goal:
            pad = c.pick(PADS)
            where = c.pick(["end", "start_of_reason"])
            extra = pad * (goal - len(stripped))
            if where == "end" or "理由是" not in stripped:
                stripped += extra
            else:
                stripped = stripped.replace("理由是", "理由是" + extra, 1)
        elif c.chance(0.5):
            stripped = stripped[:goal]
        core = stripped
    if c.chance(0.05 * m):  # a stray line break somewhere
        k = c.integer(0, len(core))
        core = core[:k] + c.pick(["\n", "\r", "\r\n", "\u2028", "\x85"]) + core[k:]
    if c.chance(0.4 * m):
        return c.pick(EDGE_SPACE) + core + c.pick(EDGE_SPACE)
    return core


# --- per-output comparison ------------------------------------------------------------------------


def compare_parse(raw: str) -> dict:
    expected = ref.parse(raw)
    got = parse_output(raw)
    observed = {
        "record": dict(got.record),
        "anchor_schema_valid": got.anchor_schema_valid,
        "schema_valid": got.schema_valid,
        "format_issues": list(got.format_issues),
    }
    assert observed == expected, f"raw={raw!r}"
    return expected


@SETTINGS
@given(st.data())
def test_parser_matches_reference_on_adversarial_outputs(data) -> None:
    compare_parse(build_output(HypothesisChooser(data)))


@SETTINGS
@given(st.text(alphabet=st.sampled_from(RANDOM_ALPHABET + ["1", "a", "\t", "\u3000"]), max_size=200))
def test_parser_matches_reference_on_free_text(raw: str) -> None:
    compare_parse(raw)


BULK_OUTPUTS = 20_000


def test_parser_bulk_sweep_matches_reference_and_reaches_every_rule() -> None:
    """Seeded bulk run of the same builder; also shows it reaches every issue and valid outputs."""
    chooser = RandomChooser(20261202)
    seen = {name: 0 for name in ref.ISSUE_NAMES}
    valid = anchor_valid = 0
    lengths = set()
    for _ in range(BULK_OUTPUTS):
        raw = build_output(chooser)
        expected = compare_parse(raw)
        for issue in expected["format_issues"]:
            seen[issue] += 1
        valid += expected["schema_valid"]
        anchor_valid += expected["anchor_schema_valid"]
        lengths.add(len(raw.strip()))
    assert all(count > 0 for count in seen.values()), seen
    assert valid > BULK_OUTPUTS // 10 and anchor_valid > valid
    assert {79, 80, 180, 181} <= lengths


def demo_outputs() -> list[str]:
    outputs = []
    for path in sorted(DEMO.glob("*.jsonl")) + sorted((DEMO / "baselines").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                obj = json.loads(line)
                outputs.append(obj.get("output", obj.get("cot")))
    return [o for o in outputs if isinstance(o, str)]


@pytest.mark.skipif(not DEMO.is_dir(), reason="demo bundle absent")
def test_parser_matches_reference_on_demo_cots_and_baselines() -> None:
    outputs = demo_outputs()
    assert len(outputs) > 1000
    for raw in outputs:
        compare_parse(raw)


# --- datasets -------------------------------------------------------------------------------------

GOLD_TARGETS = [
    "外地人",
    "楼主",
    "女司机",
    "程序员",
    "ABC",
    "Boss",
    " 外地 人 ",
    "a b",
    "Ab",
    "abc",
    "ab",
    "ＡＢＣ",
    "abcdefghijklm",
    "abcdefghijklmnopqrst",
    "İstanbul",
    "我那个室友",
]
NO_TARGET_GOLD = [NO_TARGET, "", "  ", "\u3000", "\t\n"]
# Predicted targets whose F1 with the gold is exactly 0.5 in exact arithmetic (see the hand-written tests).
HALF_PAIRS = {
    "abc": ["a", "A", " a "],
    "ab": ["bc", "ac", "B C"],
    "abcdefghijklm": ["abcdefXYZUV"],
    "abcdefghijklmnopqrst": ["abcdefgZ"],
}


def gold_record(c) -> dict:
    record = consistent_record(c)
    if record["target_type"] == NO_TARGET:
        record["target"] = c.pick(NO_TARGET_GOLD)
    else:
        record["target"] = c.pick(GOLD_TARGETS)
    return record


def predicted_target(c, gold: dict) -> str:
    g = ref.gold_target(gold)
    options = [
        g,
        g,
        g.upper(),
        g.lower(),
        g.swapcase(),
        " ".join(g),
        g.replace(" ", "\u3000"),
        g + "们",
        g[: max(1, len(g) // 2)],
        "某人",
        NO_TARGET,
        "无",
        g[::-1],
        "Ａ" + g,
    ]
    options += HALF_PAIRS.get(g.strip(), [])
    return c.pick(options)


def rationale(record: dict) -> str:
    r = record
    text = (
        f"分析：这条评论针对的是[T:{r['target']}]，它属于[TY:{r['target_type']}]，"
        f"评论里的指向是[TT:{r['target_explicitness']}]，作者的态度为[S:{r['stance']}]，"
        f"综合判断该内容[L:{r['label']}]，类别归为[C:{r['category']}]，理由是"
    )
    return text + "评论语境中的用词和指向都比较明确" + "很" * max(0, 80 - len(text) - 17) + "。"


def output_for(c, gold: dict) -> str:
    mode = c.pick(["exact", "exact", "perturbed", "perturbed", "adversarial"])
    record = {field: gold[field] for field in ref.FIELD_NAMES}
    record["target"] = predicted_target(c, gold)
    if mode == "exact":
        return rationale(record)
    if mode == "perturbed":
        for _ in range(c.integer(1, 3)):
            field = c.pick(ref.DISCRETE_FIELD_NAMES)
            record[field] = c.pick(ref.ALLOWED_VALUES[field])
        if c.chance(0.3):  # re-derive a consistent record so that wrong-but-valid predictions are common
            record = consistent_record(c)
            record["target"] = predicted_target(c, gold)
        return rationale(record)
    return build_output(c, record)


SUBSET_NAMES = ["demographic_identity", "general_abuse", "z"]


def build_dataset(c) -> dict:
    n = c.integer(1, 12) if not c.chance(0.15) else c.integer(13, 60)
    with_ids = c.chance(0.7)
    gold_rows = []
    for i in range(n):
        row = {"text": f"第{i}条评论" + c.pick(["", "。", " "])}
        if with_ids:
            row["id"] = f"r{i:03d}"
        row.update(gold_record(c))
        if c.chance(0.2):  # the gold's own cot: never read by the scorer
            row["cot"] = rationale({**row, "target": ref.gold_target(row)})
        gold_rows.append(row)
    outputs = [output_for(c, row) for row in gold_rows]
    subsets = {}
    for name in SUBSET_NAMES[: c.integer(0, len(SUBSET_NAMES))]:
        chosen = sorted({c.integer(0, n - 1) for _ in range(c.integer(1, n))})
        rows = []
        for k in chosen:
            copy = dict(gold_rows[k])
            if "id" in copy and c.chance(0.2):
                del copy["id"]  # matched by exact text then
            rows.append(copy)
        if c.chance(0.5):
            rows.reverse()
        subsets[name] = rows
    lines = []
    for k, row in enumerate(gold_rows):
        line = {"id": row["id"]} if with_ids and not c.chance(0.2) else {"text": row["text"]}
        line["output"] = outputs[k]
        if c.chance(0.1):
            line["note"] = "unknown keys are ignored"
        if c.chance(0.1):  # pre-parsed fields are unknown keys too (spec §4): only `output` counts
            line.update({field: gold_rows[k][field] for field in ref.FIELD_NAMES})
        lines.append(line)
    if c.chance(0.5):
        lines.reverse()
    bom = c.chance(0.1)
    return {"gold": gold_rows, "outputs": outputs, "subsets": subsets, "lines": lines, "bom": bom}


def jsonl_bytes(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def flatten(block: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in block.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def sklearn_macro(gold: list[str], pred: list) -> float:
    pred = [SENTINEL if p is ref.INVALID_PREDICTION else p for p in pred]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(f1_score(gold, pred, labels=sorted(set(gold)), average="macro", zero_division=0))


def assert_metric_block(
    observed: dict, expected: dict, gold_rows: list[dict], scored: list[dict], where: str, sklearn: bool
) -> None:
    """Every metric of one block (overall or a subset): key set, values, and Macro-F1 vs scikit-learn."""
    expected = dict(expected)
    expected_issues = expected.pop("format_issues")
    flat = flatten(observed)
    # spec §3: the count of each format issue (every name, zeros included), also per cue subset.
    assert observed["format_issues"] == expected_issues, where
    flat = {k: v for k, v in flat.items() if not k.startswith("format_issues.")}
    assert set(flat) == set(expected), f"{where}: keys differ: {set(flat) ^ set(expected)}"
    for key, value in expected.items():
        got = flat[key]
        if key in OFFICIAL or value is None or isinstance(value, int):
            assert got == value and type(got) is type(value), (
                f"{where} {key}: scorer {got!r} != spec {value!r}"
            )
        else:
            assert abs(got - value) < EXTENSION_TOLERANCE, f"{where} {key}: scorer {got!r} != spec {value!r}"
    for field in ref.DISCRETE_FIELD_NAMES if sklearn else ():  # scikit-learn is slow: chosen blocks only
        gold = [g[field] for g in gold_rows]
        pred = [row["predicted"][field] for row in scored]
        sk = sklearn_macro(gold, pred) if gold else 0.0
        assert abs(expected[f"macro_f1.{field}"] - sk) < EXTENSION_TOLERANCE, (
            f"{where} oracle vs sklearn {field}"
        )
        assert abs(flat[f"macro_f1.{field}"] - sk) < EXTENSION_TOLERANCE, f"{where} scorer vs sklearn {field}"


def check_dataset(dataset: dict, *, bootstrap: int = 0, sklearn: bool = False) -> dict:
    gold_rows, subsets = dataset["gold"], dataset["subsets"]
    expected = ref.evaluate(gold_rows, dataset["outputs"], subsets)
    predictions = jsonl_bytes(dataset["lines"])
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp)
        bom = b"\xef\xbb\xbf" if dataset.get("bom") else b""  # spec §1: an optional BOM is tolerated
        (bundle / "test.jsonl").write_bytes(bom + jsonl_bytes(gold_rows))
        if subsets:
            (bundle / "subsets").mkdir()
            for name, rows in subsets.items():
                (bundle / "subsets" / f"{name}.jsonl").write_bytes(jsonl_bytes(rows))
        result = score_file("varm", bundle, predictions, bootstrap=bootstrap, seed=0, disclose=False)
        track = get_track("varm")
        refs = track.load_references(bundle)
        outcomes = track.row_outcomes(refs, predictions)
        report = track.check_predictions(predictions, track.public_inputs(refs))
    check_result(result, expected, gold_rows, subsets, sklearn)
    check_row_outcomes(outcomes, expected)
    check_format_report(report, dataset)
    return result


def check_result(result: dict, expected: dict, gold_rows: list[dict], subsets: dict, sklearn: bool) -> None:
    assert result["track"] == "varm" and result["rows"] == expected["rows"]
    scored = expected["per_row"]
    overall = dict(result["metrics"])
    overall["format_issues"] = result["format_issues"]
    assert_metric_block(overall, expected["metrics"], gold_rows, scored, "overall", sklearn)
    assert set(result["subsets"]) == set(subsets)
    for name, block in result["subsets"].items():
        exp = dict(expected["subsets"][name])
        indices = sorted(set(ref.match_subset(gold_rows, subsets[name])))
        assert_metric_block(
            block,
            exp,
            [gold_rows[k] for k in indices],
            [scored[k] for k in indices],
            f"subset {name}",
            sklearn,
        )


def check_row_outcomes(outcomes: dict, expected: dict) -> None:
    scored = expected["per_row"]
    assert outcomes["valid"] == [int(row["valid"]) for row in scored]
    assert outcomes["anchor_valid"] == [int(row["anchor_valid"]) for row in scored]
    assert outcomes["target_f1"] == [row["target_f1"] for row in scored]
    for field in ref.FIELD_NAMES:
        assert outcomes[f"correct.{field}"] == [int(row["correct"][field]) for row in scored], field


def check_format_report(report, dataset: dict) -> None:
    assert report.valid, report.errors
    lines = dataset["lines"]
    expected = []
    for number, line in enumerate(lines, start=1):
        parsed = ref.parse(line["output"])
        if not parsed["schema_valid"]:
            expected.append((number, parsed["format_issues"]))
    assert [(entry["line"], entry["issues"]) for entry in report.format_report] == expected


@DATASET_SETTINGS
@given(st.data())
def test_dataset_metrics_match_reference(data) -> None:
    check_dataset(build_dataset(HypothesisChooser(data)), sklearn=True)


BULK_DATASETS = 300


def test_dataset_bulk_sweep_matches_reference() -> None:
    chooser = RandomChooser(7)
    for _ in range(BULK_DATASETS):
        check_dataset(build_dataset(chooser))


def test_oracle_macro_f1_equals_sklearn() -> None:
    """The oracle's Macro-F1 against scikit-learn on random label vectors with invalid (sentinel) rows."""
    rng = random.Random(3)
    classes = ref.ALLOWED_VALUES["category"]
    for _ in range(80):
        n = rng.randint(1, 30)
        gold = [rng.choice(classes[: rng.randint(1, 7)]) for _ in range(n)]
        pred = [ref.INVALID_PREDICTION if rng.random() < 0.2 else rng.choice(classes) for _ in range(n)]
        assert abs(ref.macro_f1(gold, pred) - sklearn_macro(gold, pred)) < EXTENSION_TOLERANCE


def test_bootstrap_never_changes_point_metrics() -> None:
    dataset = build_dataset(RandomChooser(11))
    plain = check_dataset(dataset, bootstrap=0)
    with_ci = check_dataset(dataset, bootstrap=200)
    assert plain["metrics"] == with_ci["metrics"] and plain["subsets"] == with_ci["subsets"]
    assert with_ci["ci"] and not plain["ci"]


@pytest.mark.skipif(not DEMO.is_dir(), reason="demo bundle absent")
@pytest.mark.parametrize("baseline", ["char-ngram", "lexicon", "majority"])
def test_demo_baselines_match_reference(baseline: str) -> None:
    def read(path: Path) -> list[dict]:
        return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]

    gold_rows = read(DEMO / "test.jsonl")
    lines = read(DEMO / "baselines" / f"{baseline}.test.jsonl")
    by_id = {line["id"]: line["output"] for line in lines}
    subsets = {p.stem: read(p) for p in sorted((DEMO / "subsets").glob("*.jsonl"))}
    dataset = {
        "gold": gold_rows,
        "outputs": [by_id[row["id"]] for row in gold_rows],
        "subsets": subsets,
        "lines": lines,
    }
    expected = ref.evaluate(gold_rows, dataset["outputs"], subsets)
    predictions = jsonl_bytes(lines)
    result = score_file("varm", DEMO, predictions, bootstrap=0, disclose=False)
    check_result(result, expected, gold_rows, subsets, sklearn=True)


# --- hand-written cases: spec clauses checked one by one ------------------------------------------

GOOD = {
    "target": "外地人",
    "target_type": "群体对象",
    "target_explicitness": "明示",
    "stance": "攻击或认同",
    "label": "有害",
    "category": "地域族群攻击",
}
NONE_ROW = {
    "target": NO_TARGET,
    "target_type": NO_TARGET,
    "target_explicitness": NO_TARGET,
    "stance": "中性提及",
    "label": "无害",
    "category": "非攻击",
}
# 56 code points, 10 CJK characters outside the anchors.
SHORT = "分析：[T:楼主]是[TY:单一对象]且[TT:明示]作者[S:攻击或认同]内容[L:有害]属于[C:一般辱骂]"


def sized(length: int, pad: str = "很") -> str:
    return SHORT + pad * (length - len(SHORT))


HAND_OUTPUTS = {
    "valid": rationale(GOOD),
    "blank_T": rationale({**GOOD, "target": "   "}),
    "T_is_placeholder": rationale({**GOOD, "target": "主要对象"}),
    "T_is_ellipsis": rationale({**GOOD, "target": "…"}),
    "T_three_dots_spaced": rationale({**GOOD, "target": " ... "}),
    "value_with_inner_space": rationale({**GOOD, "label": "有 害"}),
    "value_padded": rationale({**GOOD, "label": " 有害\u3000"}),
    "anchor_with_bracket_in_value": rationale({**GOOD, "target": "外]地人"}),
    "anchor_with_newline": rationale({**GOOD, "target": "外\n地人"}),
    "anchor_with_u2028": rationale({**GOOD, "target": "外\u2028地人"}),
    "fullwidth_brackets": rationale(GOOD).replace("[TY:", "【TY:").replace("群体对象]", "群体对象】"),
    "fullwidth_colon_anchor": rationale(GOOD).replace("[S:", "[S："),
    "spaced_name": rationale(GOOD).replace("[L:", "[ L :"),
    "ascii_colon_prefix": rationale(GOOD).replace("分析：", "分析:", 1),
    "no_prefix": rationale(GOOD)[3:],
    "nfkc_prefix": "分析︰" + rationale(GOOD)[3:],
    "bom_then_prefix": "\ufeff" + rationale(GOOD),
    "ideographic_space_around": "\u3000" + rationale(GOOD) + "\u3000\n",
    "nbsp_and_fs_around": "\xa0\x1c" + rationale(GOOD) + "\x85",
    "zero_width_space_before": "\u200b" + rationale(GOOD),
    "u2028_inside": rationale(GOOD).replace("理由是", "理由是\u2028", 1),
    "cr_inside": rationale(GOOD).replace("理由是", "理由是\r", 1),
    "len_79": sized(79),
    "len_80": sized(80),
    "len_180": sized(180),
    "len_181": sized(181),
    "len_180_astral": sized(76) + "\U00020000" * 104,
    "len_181_astral": sized(76) + "\U00020000" * 105,
    "cjk_29": SHORT + "很" * 19 + "x" * 10,
    "cjk_30": SHORT + "很" * 20 + "x" * 4,
    "cjk_boundary_3400_9fff": SHORT + ("\u3400\u9fff" * 10) + "xx",
    "cjk_outside_33ff_a000": SHORT + ("\u33ff\ua000" * 10) + "很" * 10,
    "cjk_outside_ext_b": SHORT + "\U00020000" * 20 + "很" * 10,
    "cjk_outside_compat": SHORT + "\uf900" * 20 + "很" * 10,
    "between_only_comma": sized(100).replace("]是[", "]，[", 1),
    "between_only_ling": sized(100).replace("]是[", "]〇[", 1),
    "between_empty": sized(100).replace("]是[", "][", 1),
    "between_ext_b": sized(100).replace("]是[", "]\U00020000[", 1),
    "between_3400": sized(100).replace("]是[", "]\u3400[", 1),
    "wrapper_brace": "{" + rationale(GOOD),
    "wrapper_bracket_anchor_first": "[T:外地人]" + rationale(GOOD),
    "wrapper_fence": "```" + rationale(GOOD),
    "wrapper_two_backticks": "``" + rationale(GOOD),
    "wrapper_hash": "#" + rationale(GOOD),
    "wrapper_dash_space": "- " + rationale(GOOD),
    "wrapper_dash_only": "-" + rationale(GOOD),
    "wrapper_after_strip": "  \n{" + rationale(GOOD),
    "placeholder_in_overwritten_repeat": rationale(GOOD).replace("[T:外地人]", "[T:对象文本][T:外地人]"),
    "placeholder_is_the_final_repeat": rationale(GOOD).replace("[T:外地人]", "[T:外地人][T:对象文本]"),
    "repeat_later_wins": rationale(GOOD).replace("[C:地域族群攻击]", "[C:地域族群攻击]又[C:性别攻击]"),
    "ty_tt_t_confusion": rationale(GOOD).replace("[TY:", "[T:"),
    "empty_T_brackets": rationale(GOOD).replace("[T:外地人]", "[T:]"),
    "nested_open": rationale(GOOD).replace("[T:外地人]", "[T:[T:外地人]"),
    "inconsistent_label_category": rationale({**GOOD, "category": "非攻击"}),
    "inconsistent_no_target": rationale({**NONE_ROW, "target_type": "单一对象"}),
    "inconsistent_stance": rationale({**GOOD, "stance": "中性提及"}),
    "all_three_inconsistent": rationale({**NONE_ROW, "target_explicitness": "明示", "label": "有害"}),
    "no_target_consistent": rationale(NONE_ROW),
    "empty": "",
    "whitespace_only": " \n\t\u3000",
    "anchors_only": "[T:楼主][TY:单一对象][TT:明示][S:攻击或认同][L:有害][C:一般辱骂]",
}


@pytest.mark.parametrize("name", sorted(HAND_OUTPUTS))
def test_hand_written_outputs_match_reference(name: str) -> None:
    compare_parse(HAND_OUTPUTS[name])


def test_hand_written_outputs_expected_issues() -> None:
    """A few outcomes read directly off the spec text, independent of both implementations."""

    def issues(name: str) -> list[str]:
        return ref.parse(HAND_OUTPUTS[name])["format_issues"]

    assert issues("valid") == []
    assert issues("len_79") == ["length_out_of_range"] and issues("len_80") == []
    assert issues("len_180") == [] and issues("len_181") == ["length_out_of_range"]
    assert issues("len_180_astral") == [] and issues("len_181_astral") == ["length_out_of_range"]
    assert issues("cjk_29") == ["insufficient_reasoning_text"] and issues("cjk_30") == []
    assert issues("between_only_ling") == ["anchors_not_naturally_integrated"]
    assert issues("between_3400") == [] and issues("between_ext_b") == ["anchors_not_naturally_integrated"]
    assert issues("u2028_inside") == []  # only \n and \r make paragraphs
    assert issues("ideographic_space_around") == [] and issues("nbsp_and_fs_around") == []
    assert issues("bom_then_prefix") == ["missing_analysis_prefix"]
    assert issues("T_is_placeholder") == [
        "placeholder_value"
    ]  # T is free text: anchor-valid, then placeholder
    # §2.3: only each anchor name's final value counts; an overwritten placeholder is not one
    assert issues("placeholder_in_overwritten_repeat") == ["anchor_sequence_or_value_invalid"]
    assert issues("placeholder_is_the_final_repeat") == [
        "anchor_sequence_or_value_invalid",
        "placeholder_value",
    ]
    assert issues("wrapper_dash_only") == ["missing_analysis_prefix"]
    assert issues("all_three_inconsistent") == [
        "label_category_inconsistent",
        "no_target_fields_inconsistent",
        "stance_label_inconsistent",
    ]
    assert ref.parse(HAND_OUTPUTS["repeat_later_wins"])["record"]["category"] == "性别攻击"
    assert ref.parse(HAND_OUTPUTS["value_padded"])["schema_valid"]


TARGET_CASES = [
    ("外地人", "外地人", 1.0),
    ("ABC", "a b c", 1.0),
    ("ａｂｃ", "abc", 0.0),  # nothing is NFKC-normalised: full-width letters are other characters
    ("楼\u3000主", " 楼主\n", 1.0),
    ("a", "abc", 0.5),
    ("ab", "bc", 0.5),
    ("ab", "ac", 0.5),
    ("某人", "外地人", 2 * 0.5 * (1 / 3) / (0.5 + 1 / 3)),  # "人" is common
    ("外地", "外地人", 0.8),
    ("x", "外地人", 0.0),
    ("", "", 1.0),
    (" ", "\u3000", 1.0),
    ("", "abc", 0.0),
    ("aab", "ab", 0.8),
    ("İ", "i", 2 * 0.5 * 1.0 / 1.5),  # "İ".lower() is two code points: "i" + U+0307
]


@pytest.mark.parametrize(("pred", "gold", "f1"), TARGET_CASES)
def test_target_f1_hand_cases(pred: str, gold: str, f1: float) -> None:
    assert ref.target_f1(pred, gold) == f1
    assert scorer_target_f1(pred, gold) == f1


def test_target_f1_threshold_reading_is_p_r_then_f1() -> None:
    """AMBIGUITY (spec §3 'F1 as usual'): 2PR/(P+R) in floats vs the exact F1 = 2c/(|p|+|g|).

    With c = 6 common characters, |pred| = 11, |gold| = 13 the exact F1 is 12/24 = 0.5 (correct), but
    P = 6/11, R = 6/13, 2PR/(P+R) evaluates to 0.4999999999999999 (wrong). Both the scorer and this oracle
    take the spec's literal route (P and R first, then F1); the other reading flips such rows.
    """
    pred, gold = "abcdefXYZUV", "abcdefghijklm"
    assert ref.target_f1(pred, gold) == scorer_target_f1(pred, gold) == 0.4999999999999999
    assert 2 * 6 / (11 + 13) == 0.5
    assert scorer_target_f1("abcdefgZ", "abcdefghijklmnopqrst") == 0.4999999999999999  # c=7, 8 vs 20


def one_row_result(gold: dict, output: str, **kwargs) -> tuple[dict, dict]:
    row = {"id": "a", "text": "一条评论", **gold}
    dataset = {
        "gold": [row],
        "outputs": [output],
        "subsets": kwargs.get("subsets", {}),
        "lines": [{"id": "a", "output": output}],
    }
    result = check_dataset(dataset)
    return result, ref.evaluate(dataset["gold"], dataset["outputs"], dataset["subsets"])


@pytest.mark.parametrize("blank", ["", " ", "\u3000", "\t\n"])
def test_blank_gold_target_is_never_correct(blank: str) -> None:
    """§1 (2026-12): the gold target as written, as the authors' evaluate.py: a blank gold target can never
    be target-correct, even against [T:无明确对象]; the other fields still count."""
    gold = {**NONE_ROW, "target": blank}
    result, _ = one_row_result(gold, rationale(NONE_ROW))
    assert result["metrics"]["field_accuracy"]["target"] == 0.0
    assert result["metrics"]["jrem"] == 0.0 and result["metrics"]["t_f1"] == 0.0
    assert result["metrics"]["field_accuracy"]["category"] == 1.0
    filled, _ = one_row_result({**NONE_ROW, "target": NO_TARGET}, rationale(NONE_ROW))  # positive control
    assert filled["metrics"]["field_accuracy"]["target"] == 1.0 and filled["metrics"]["jrem"] == 1.0


@pytest.mark.parametrize(
    ("gold", "pred", "correct"),
    [
        ("abc", "a", True),  # F1 exactly 0.5: correct (>= 0.5)
        ("ab", "B C", True),  # case and whitespace are normalised away first
        ("abcd", "a", False),  # F1 0.4
        ("abcdefghijklm", "abcdefXYZUV", False),  # the 2PR/(P+R) reading: 0.4999999999999999 (see above)
    ],
)
def test_target_threshold_in_scoring(gold: str, pred: str, correct: bool) -> None:
    result, _ = one_row_result({**GOOD, "target": gold}, rationale({**GOOD, "target": pred}))
    assert result["metrics"]["field_accuracy"]["target"] == (1.0 if correct else 0.0)
    assert result["metrics"]["field_accuracy"]["category"] == 1.0


def test_valid_values_but_invalid_format_count_as_wrong() -> None:
    result, _ = one_row_result(GOOD, rationale(GOOD).replace("分析：", "分析:", 1))
    assert all(v == 0.0 for v in result["metrics"]["field_accuracy"].values())
    assert result["metrics"]["t_f1"] == 0.0 and result["metrics"]["parse_success"] == 0.0
    assert result["metrics"]["anchor_schema_valid"] == 1.0
    assert result["format_issues"]["missing_analysis_prefix"] == 1


def test_her_zero_when_nothing_category_correct() -> None:
    wrong = {**GOOD, "category": "性别攻击"}
    result, _ = one_row_result(GOOD, rationale(wrong))
    assert result["metrics"]["her_c"] == 0.0 and result["metrics"]["her_l"] == 1.0


def test_subset_with_only_harmful_rows_has_no_non_harmful_jrem() -> None:
    """AMBIGUITY: the spec does not define JREM over zero rows; the scorer (and this oracle) give None."""
    gold = {"id": "a", "text": "一条评论", **GOOD}
    result, _ = one_row_result(GOOD, rationale(GOOD), subsets={"s": [gold]})
    block = result["subsets"]["s"]
    assert block["jrem_harmful"] == 1.0 and block["jrem_non_harmful"] is None and block["jrem_gap"] is None


def test_subset_row_without_id_is_matched_by_text() -> None:
    gold_rows = [{"id": f"r{k}", "text": f"评论{k}", **GOOD} for k in range(3)]
    outputs = [rationale(GOOD), rationale({**GOOD, "category": "性别攻击"}), "坏"]
    subset = [{k: v for k, v in gold_rows[1].items() if k != "id"}, gold_rows[2]]
    dataset = {
        "gold": gold_rows,
        "outputs": outputs,
        "subsets": {"s": subset},
        "lines": [{"id": r["id"], "output": o} for r, o in zip(gold_rows, outputs, strict=True)],
    }
    result = check_dataset(dataset)
    assert result["subsets"]["s"]["rows"] == 2 and result["subsets"]["s"]["jrem"] == 0.0


def test_subset_row_with_id_is_matched_by_id_even_when_its_text_differs() -> None:
    """§1: 'matched to the test row by id when both have one, else by exact text' — id takes precedence."""
    gold_rows = [{"id": f"r{k}", "text": f"评论{k}", **GOOD} for k in range(3)]
    outputs = [rationale(GOOD), "坏", rationale(GOOD)]
    subset = [{**gold_rows[1], "text": "评论1 "}, {**gold_rows[2], "text": "评论0"}]
    dataset = {
        "gold": gold_rows,
        "outputs": outputs,
        "subsets": {"s": subset},
        "lines": [{"id": r["id"], "output": o} for r, o in zip(gold_rows, outputs, strict=True)],
    }
    result = check_dataset(dataset)
    assert result["subsets"]["s"]["rows"] == 2 and result["subsets"]["s"]["jrem"] == 0.5
    assert result["subsets"]["s"]["parse_success"] == 0.5


def test_macro_f1_ignores_predicted_classes_absent_from_gold() -> None:
    gold_rows = [{"id": "a", "text": "甲", **GOOD}, {"id": "b", "text": "乙", **GOOD}]
    other = {**GOOD, "category": "性别攻击"}
    outputs = [rationale(GOOD), rationale(other)]
    dataset = {
        "gold": gold_rows,
        "outputs": outputs,
        "subsets": {},
        "lines": [{"id": "a", "output": outputs[0]}, {"id": "b", "output": outputs[1]}],
    }
    result = check_dataset(dataset)
    assert result["metrics"]["macro_f1"]["category"] == 2 * 1 / (2 * 1 + 0 + 1)


def test_subset_blocks_carry_format_issue_counts() -> None:
    """Spec §3 'Cue subsets: every metric above' includes the Parse success bullet's 'count of each format
    issue' (ARCHITECTURE §2's subset schema does not list it; the scorer adds it since 6e61c98)."""
    gold = {"id": "a", "text": "一条评论", **GOOD}
    result, expected = one_row_result(GOOD, "坏", subsets={"s": [gold]})
    assert result["subsets"]["s"]["format_issues"] == expected["subsets"]["s"]["format_issues"]
    hit = {
        "anchor_sequence_or_value_invalid",
        "missing_analysis_prefix",
        "length_out_of_range",
        "insufficient_reasoning_text",
    }
    assert result["subsets"]["s"]["format_issues"] == {name: int(name in hit) for name in ref.ISSUE_NAMES}


# --- spec §1: reading and checking the gold -------------------------------------------------------


def write_bundle(directory: Path, rows: list[dict]) -> Path:
    (directory / "test.jsonl").write_bytes(jsonl_bytes(rows))
    return directory


def test_reference_rows_breaking_value_sets_or_consistency_are_rejected_by_line() -> None:
    from scoring.problems import InputError

    track = get_track("varm")
    rows = [
        {"id": "a", "text": "甲", **GOOD, "category": "非攻击"},  # label_category_inconsistent
        {"id": "b", "text": "乙", **NONE_ROW, "label": "有 害"},  # outside the value set
        {"id": "c", "text": "丙", **NONE_ROW, "target": " 无明确对象 "},  # not blank: breaks no-target rule
        {"id": "d", "text": "丁", **NONE_ROW, "target": "  "},  # blank + 无明确对象: read as 无明确对象, fine
    ]
    with tempfile.TemporaryDirectory() as tmp:
        with pytest.raises(InputError) as caught:
            track.load_references(write_bundle(Path(tmp), rows))
    assert sorted({p.line for p in caught.value.problems}) == [1, 2, 3]


def test_bundle_check_applies_the_gold_target_rule_to_the_cot() -> None:
    """§1: a bundle whose cot does not parse to its own fields is rejected; a blank no-target row's cot says
    [T:无明确对象] (the validator's reading), which must be accepted."""
    from scoring.references import check_reference_bundle

    blank = {**NONE_ROW, "target": ""}
    rows = [
        {"id": "a", "text": "甲", **GOOD, "cot": rationale(GOOD)},
        {"id": "b", "text": "乙", **blank, "cot": rationale(NONE_ROW)},
        {"id": "c", "text": "丙", **GOOD, "cot": rationale({**GOOD, "target": "楼主"})},
        # Not starting with 分析： but parsing to its own fields: accepted, as the authors' validator does
        # (spec "Release formats", changed 2026-12; the importer warns).
        {"id": "d", "text": "丁", **GOOD, "cot": rationale(GOOD).replace("分析：", "分析:", 1)},
    ]
    with tempfile.TemporaryDirectory() as tmp:
        problems = check_reference_bundle(write_bundle(Path(tmp), rows))
    assert sorted({p.line for p in problems}) == [3]


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    dataset = build_dataset(RandomChooser(5))
    first = check_dataset(dataset, bootstrap=100)
    again = check_dataset(dataset, bootstrap=100)
    assert first["ci"] == again["ci"] and first["ci"]


GOLDEN = ROOT / "tests" / "golden" / "varm"


@pytest.mark.skipif(not (GOLDEN / "expected_result.json").is_file(), reason="golden files absent")
def test_golden_expected_result_agrees_with_reference() -> None:
    """The project's frozen golden result (tests/golden/varm) read against the oracle, not the scorer."""

    def read(path: Path) -> list[dict]:
        return [json.loads(x) for x in path.read_text(encoding="utf-8-sig").splitlines() if x.strip()]

    gold_rows = read(GOLDEN / "test.jsonl")
    lines = read(GOLDEN / "predictions.jsonl")
    by_id = {line["id"]: line["output"] for line in lines if "id" in line}
    by_text = {line["text"]: line["output"] for line in lines if "id" not in line}  # spec §4
    outputs = [by_id[row["id"]] if row["id"] in by_id else by_text[row["text"]] for row in gold_rows]
    subsets = {p.stem: read(p) for p in sorted((GOLDEN / "subsets").glob("*.jsonl"))}
    expected = ref.evaluate(gold_rows, outputs, subsets)
    golden = json.loads((GOLDEN / "expected_result.json").read_text(encoding="utf-8"))
    # Its cue subsets are under 30 rows, so the published form withholds their metrics (scorer 3.0.0):
    # sizes and format-issue counts must still agree with the oracle, and every metric must be null.
    published = golden.pop("subsets")
    check_result({**golden, "subsets": {}}, expected, gold_rows, {}, sklearn=True)
    assert set(published) == set(subsets)
    counts = {"rows", "rows_harmful", "rows_non_harmful", "withheld"}
    for name, block in published.items():
        assert block["rows"] == expected["subsets"][name]["rows"] < MIN_CELL_ROWS, name
        assert block["format_issues"] == expected["subsets"][name]["format_issues"], name
        assert block["withheld"] == SMALL_CELL, name
        metrics = {k: v for k, v in flatten(block).items() if k not in counts and not k.startswith("format_")}
        assert metrics and all(v is None for v in metrics.values()), name
