"""A plain, independent reading of the VARM-Bench protocol (docs: shared/spec/varm-protocol.md §1–§3).

Written from the spec text only, in the style a benchmark author's `protocol.py` / `evaluate.py` would have:
one loop per row, plain lists and dicts, no numpy, nothing imported from `scoring/`. Each function names
the spec clause it implements so it can be read line by line against the page. It is a test oracle for
`tests/test_varm_conformance.py`, never used for real scoring.
"""

from __future__ import annotations

import re

# --- §1 value sets (typed in again from the spec's table) ------------------------------------------------

NO_TARGET = "无明确对象"

FIELD_NAMES = ["target", "target_type", "target_explicitness", "stance", "label", "category"]
DISCRETE_FIELD_NAMES = ["target_type", "target_explicitness", "stance", "label", "category"]

ANCHOR_OF_FIELD = {
    "target": "T",
    "target_type": "TY",
    "target_explicitness": "TT",
    "stance": "S",
    "label": "L",
    "category": "C",
}
FIELD_OF_ANCHOR = {
    "T": "target",
    "TY": "target_type",
    "TT": "target_explicitness",
    "S": "stance",
    "L": "label",
    "C": "category",
}

ALLOWED_VALUES = {
    "target_type": ["单一对象", "群体对象", "无明确对象"],
    "target_explicitness": ["明示", "隐含", "无明确对象"],
    "stance": ["攻击或认同", "反对攻击", "引用或转述", "中性提及"],
    "label": ["有害", "无害"],
    "category": [
        "非攻击",
        "一般辱骂",
        "地域族群攻击",
        "性别攻击",
        "性少数攻击",
        "阶层职业攻击",
        "身心疾病攻击",
    ],
}

# --- §2 the strict parser ---------------------------------------------------------------------------------

# §2.1: the regular expression exactly as printed in the spec.
ANCHOR_REGEX = re.compile(r"\[(TY|TT|T|S|L|C):([^\]\r\n]+)\]")

# §2.2: the required sequence of anchor names.
REQUIRED_SEQUENCE = ["T", "TY", "TT", "S", "L", "C"]

# §2.3: the issue names, in the order the spec lists them.
ISSUE_NAMES = [
    "anchor_sequence_or_value_invalid",
    "anchors_not_naturally_integrated",
    "multiple_paragraphs",
    "missing_analysis_prefix",
    "length_out_of_range",
    "insufficient_reasoning_text",
    "forbidden_wrapper",
    "placeholder_value",
    "label_category_inconsistent",
    "no_target_fields_inconsistent",
    "stance_label_inconsistent",
]

PLACEHOLDERS = [
    "...",
    "…",
    "主要对象",
    "实际对象",
    "对象文本",
    "对象类型",
    "对象显隐性",
    "作者立场",
    "是否有害",
    "最终类别",
]

ANALYSIS_PREFIX = "分析\uff1a"  # "分析" + FULLWIDTH COLON U+FF1A
MIN_LENGTH = 80
MAX_LENGTH = 180
MIN_CJK = 30
WRAPPER_STARTS = ["{", "[", "```", "#", "- "]


def is_cjk(ch: str) -> bool:
    """§2.3: a CJK character is a code point in U+3400–U+9FFF."""
    return 0x3400 <= ord(ch) <= 0x9FFF


def count_cjk(text: str) -> int:
    count = 0
    for ch in text:
        if is_cjk(ch):
            count += 1
    return count


def has_cjk(text: str) -> bool:
    for ch in text:
        if is_cjk(ch):
            return True
    return False


def parse(output: str) -> dict:
    """Spec §2 applied to one raw output.

    Returns {"record": {field: value}, "anchor_schema_valid": bool, "schema_valid": bool,
    "format_issues": [issue, ...]}.
    """
    raw = output.strip()  # "Let raw = the output with leading and trailing whitespace stripped"

    # §2.1 anchors, left to right; a value is the captured text stripped; a repeated name: later wins.
    names = []
    starts = []
    ends = []
    record = {}
    for match in ANCHOR_REGEX.finditer(raw):
        name = match.group(1)
        value = match.group(2).strip()
        names.append(name)
        starts.append(match.start())
        ends.append(match.end())
        record[FIELD_OF_ANCHOR[name]] = value

    # §2.2 anchor_schema_valid.
    anchor_valid = True
    if names != REQUIRED_SEQUENCE:
        anchor_valid = False
    else:
        for field in DISCRETE_FIELD_NAMES:
            if record[field] not in ALLOWED_VALUES[field]:
                anchor_valid = False
        if record["target"] == "":
            anchor_valid = False

    # §2.3 format issues, in the spec's order.
    issues = []
    if not anchor_valid:
        issues.append("anchor_sequence_or_value_invalid")
    if anchor_valid:
        integrated = True
        for k in range(len(names) - 1):
            between = raw[ends[k] : starts[k + 1]]
            if not has_cjk(between):
                integrated = False
        if not integrated:
            issues.append("anchors_not_naturally_integrated")
    if "\n" in raw or "\r" in raw:
        issues.append("multiple_paragraphs")
    if not raw.startswith(ANALYSIS_PREFIX):
        issues.append("missing_analysis_prefix")
    if len(raw) < MIN_LENGTH or len(raw) > MAX_LENGTH:
        issues.append("length_out_of_range")
    without_anchors = ANCHOR_REGEX.sub("", raw)
    if count_cjk(without_anchors) < MIN_CJK:
        issues.append("insufficient_reasoning_text")
    wrapped = False
    for start in WRAPPER_STARTS:
        if raw.startswith(start):
            wrapped = True
    if wrapped:
        issues.append("forbidden_wrapper")
    placeholder = False
    for value in record.values():  # the final value of each anchor name (the one the record keeps)
        if value in PLACEHOLDERS:
            placeholder = True
    if placeholder:
        issues.append("placeholder_value")
    if anchor_valid:
        if (record["label"] == "无害") != (record["category"] == "非攻击"):
            issues.append("label_category_inconsistent")
        t_none = record["target"] == NO_TARGET
        ty_none = record["target_type"] == NO_TARGET
        tt_none = record["target_explicitness"] == NO_TARGET
        if not ((t_none and ty_none and tt_none) or (not t_none and not ty_none and not tt_none)):
            issues.append("no_target_fields_inconsistent")
        if (record["label"] == "有害") != (record["stance"] == "攻击或认同"):
            issues.append("stance_label_inconsistent")

    # §2.4
    schema_valid = anchor_valid and len(issues) == 0
    return {
        "record": record,
        "anchor_schema_valid": anchor_valid,
        "schema_valid": schema_valid,
        "format_issues": issues,
    }


# --- §1 gold reading and §3 metrics ---------------------------------------------------------------------


def gold_target(gold_row: dict) -> str:
    """§1: the authors' VALIDATOR reads an empty or blank gold target with target_type 无明确对象 as
    无明确对象 (the reference checker accepts such rows). The metrics never use this reading."""
    target = gold_row["target"]
    if target.strip() == "" and gold_row["target_type"] == NO_TARGET:
        return NO_TARGET
    return target


def normalise_target(text: str) -> str:
    """§3: lower-case, then delete all whitespace."""
    lowered = text.lower()
    kept = []
    for ch in lowered:
        if not ch.isspace():
            kept.append(ch)
    return "".join(kept)


def target_f1(predicted: str, gold: str) -> float:
    """§3 target match: multiset character overlap; P = common/|pred|, R = common/|gold|, F1 = 2PR/(P+R)."""
    pred = normalise_target(predicted)
    ref = normalise_target(gold)
    if len(pred) == 0 and len(ref) == 0:
        return 1.0
    pred_counts = {}
    for ch in pred:
        pred_counts[ch] = pred_counts.get(ch, 0) + 1
    ref_counts = {}
    for ch in ref:
        ref_counts[ch] = ref_counts.get(ch, 0) + 1
    common = 0
    for ch in pred_counts:
        if ch in ref_counts:
            common += min(pred_counts[ch], ref_counts[ch])
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


INVALID_PREDICTION = object()  # §3 Macro-F1: "a sentinel that equals no class"


def score_row(gold_row: dict, output: str) -> dict:
    """Per-row outcome: validity, the parse, target F1 and the correctness of each field."""
    parsed = parse(output)
    valid = parsed["schema_valid"]
    row = {"parsed": parsed, "valid": valid, "anchor_valid": parsed["anchor_schema_valid"], "correct": {}}
    if valid:
        f1 = target_f1(parsed["record"]["target"], gold_row["target"])  # §1: the gold target as written
        row["target_f1"] = f1
        row["correct"]["target"] = f1 >= 0.5
        for field in DISCRETE_FIELD_NAMES:
            row["correct"][field] = parsed["record"][field] == gold_row[field]
        row["predicted"] = {field: parsed["record"][field] for field in DISCRETE_FIELD_NAMES}
    else:  # "Every field of an output that is not schema_valid counts as wrong"
        row["target_f1"] = 0.0
        for field in FIELD_NAMES:
            row["correct"][field] = False
        row["predicted"] = {field: INVALID_PREDICTION for field in DISCRETE_FIELD_NAMES}
    row["joint"] = all(row["correct"][field] for field in FIELD_NAMES)
    return row


def macro_f1(gold_values: list, predicted_values: list) -> float:
    """§3: mean over the classes present in the gold of per-class F1 = 2TP / (2TP + FP + FN)."""
    classes = sorted(set(gold_values))
    if not classes:
        return 0.0
    total = 0.0
    for cls in classes:
        tp = fp = fn = 0
        for g, p in zip(gold_values, predicted_values, strict=True):
            if p == cls and g == cls:
                tp += 1
            elif p == cls:
                fp += 1
            elif g == cls:
                fn += 1
        total += 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)
    return total / len(classes)


def metrics_of_rows(gold_rows: list[dict], scored: list[dict]) -> dict:
    """Every §3 metric over the given rows (flat dotted keys), plus the format issue counts."""
    n = len(gold_rows)
    out = {}
    correct_counts = {field: 0 for field in FIELD_NAMES}
    joint = 0
    valid = 0
    anchor_valid = 0
    f1_sum = 0.0
    issue_counts = {name: 0 for name in ISSUE_NAMES}
    for row in scored:
        for field in FIELD_NAMES:
            if row["correct"][field]:
                correct_counts[field] += 1
        if row["joint"]:
            joint += 1
        if row["valid"]:
            valid += 1
        if row["anchor_valid"]:
            anchor_valid += 1
        f1_sum += row["target_f1"]
        for issue in row["parsed"]["format_issues"]:
            issue_counts[issue] += 1
    for field in FIELD_NAMES:
        out[f"field_accuracy.{field}"] = correct_counts[field] / n if n else 0.0
    out["jrem"] = joint / n if n else 0.0
    category_ok = correct_counts["category"]
    label_ok = correct_counts["label"]
    out["her_c"] = (category_ok - joint) / category_ok if category_ok else 0.0
    out["her_l"] = (label_ok - joint) / label_ok if label_ok else 0.0
    for field in DISCRETE_FIELD_NAMES:
        gold_values = [g[field] for g in gold_rows]
        predicted = [row["predicted"][field] for row in scored]
        out[f"macro_f1.{field}"] = macro_f1(gold_values, predicted)
    out["t_f1"] = f1_sum / n if n else 0.0
    out["parse_success"] = valid / n if n else 0.0
    out["anchor_schema_valid"] = anchor_valid / n if n else 0.0
    out["format_issues"] = issue_counts
    return out


def jrem_of(scored: list[dict]) -> float | None:
    if not scored:
        return None  # the spec does not define JREM of no rows; see the conformance report
    joint = 0
    for row in scored:
        if row["joint"]:
            joint += 1
    return joint / len(scored)


def match_subset(test_rows: list[dict], subset_rows: list[dict]) -> list[int]:
    """§1: a subset row is matched to the test row by `id` when both have one, else by exact `text`."""
    indices = []
    for sub in subset_rows:
        found = None
        for k, test in enumerate(test_rows):
            if "id" in sub and "id" in test:
                if sub["id"] == test["id"]:
                    found = k
            elif sub["text"] == test["text"]:
                found = k
        indices.append(found)
    return indices


def subset_metrics(gold_rows: list[dict], scored: list[dict], indices: list[int]) -> dict:
    """§3 cue subsets: every metric on the subset's rows, plus harmful / non-harmful JREM and their gap."""
    rows = sorted(set(indices))
    sub_gold = [gold_rows[k] for k in rows]
    sub_scored = [scored[k] for k in rows]
    out = metrics_of_rows(sub_gold, sub_scored)
    harmful = [scored[k] for k in rows if gold_rows[k]["label"] == "有害"]
    non_harmful = [scored[k] for k in rows if gold_rows[k]["label"] == "无害"]
    out["rows"] = len(rows)
    out["rows_harmful"] = len(harmful)
    out["rows_non_harmful"] = len(non_harmful)
    out["jrem_harmful"] = jrem_of(harmful)
    out["jrem_non_harmful"] = jrem_of(non_harmful)
    if out["jrem_harmful"] is None or out["jrem_non_harmful"] is None:
        out["jrem_gap"] = None
    else:
        out["jrem_gap"] = out["jrem_harmful"] - out["jrem_non_harmful"]
    return out


def evaluate(gold_rows: list[dict], outputs: list[str], subsets: dict[str, list[dict]] | None = None) -> dict:
    """The whole evaluation: `outputs[k]` is the raw output for `gold_rows[k]`."""
    scored = []
    for gold_row, output in zip(gold_rows, outputs, strict=True):
        scored.append(score_row(gold_row, output))
    result = {"rows": len(gold_rows), "per_row": scored, "metrics": metrics_of_rows(gold_rows, scored)}
    result["subsets"] = {}
    for name, subset_rows in (subsets or {}).items():
        indices = match_subset(gold_rows, subset_rows)
        result["subsets"][name] = subset_metrics(gold_rows, scored, indices)
    return result


# --- §1 "Release formats" (changed 2026-12): the importer's reading of the authors' release -------------


def audit_key(text: str) -> str:
    """The authors' audit key: NFKC, lower case, alphanumeric characters only."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in folded if ch.isalnum())


def gold_cot_accepted(row: dict) -> bool:
    """The authors' validator: a cot not starting with 分析： is read as if it did; it must then parse to a
    schema-valid record whose fields equal the row's (the gold target read as the validator reads it)."""
    cot = row["cot"]
    parsed = parse(cot if cot.startswith(ANALYSIS_PREFIX) else ANALYSIS_PREFIX + cot)
    if not parsed["schema_valid"]:
        return False
    expected = {name: row[name] for name in FIELD_NAMES}
    expected["target"] = gold_target(row)
    return all(parsed["record"].get(name) == expected[name] for name in FIELD_NAMES)
