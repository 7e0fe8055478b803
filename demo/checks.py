"""A small, self-contained VARM rationale checker and text-similarity helpers for the demo generator.

This mirrors the strict parser of ``docs/spec/varm-protocol.md`` §2 so the generator (and the baselines)
can refuse to write an invalid rationale without depending on the ``scoring`` package, which is developed
in parallel. The tests cross-check the generated data with ``scoring`` itself when it is importable; the
scorer stays the authority.
"""

from __future__ import annotations

import re
import unicodedata

from rapidfuzz import fuzz, process

FIELDS = ("target", "target_type", "target_explicitness", "stance", "label", "category")
ANCHORS = ("T", "TY", "TT", "S", "L", "C")
ANCHOR_TO_FIELD = dict(zip(ANCHORS, FIELDS, strict=True))
VALUES = {
    "target_type": ("单一对象", "群体对象", "无明确对象"),
    "target_explicitness": ("明示", "隐含", "无明确对象"),
    "stance": ("攻击或认同", "反对攻击", "引用或转述", "中性提及"),
    "label": ("有害", "无害"),
    "category": (
        "非攻击",
        "一般辱骂",
        "地域族群攻击",
        "性别攻击",
        "性少数攻击",
        "阶层职业攻击",
        "身心疾病攻击",
    ),
}
NO_TARGET = "无明确对象"
PLACEHOLDERS = (
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
)
# The alternation order matters (TY/TT before T), exactly as the protocol states.
ANCHOR_RE = re.compile(r"\[(TY|TT|T|S|L|C):([^\]\r\n]+)\]")
CJK_RE = re.compile(r"[\u3400-\u9fff]")
NEAR_DUP_THRESHOLD = 95.0


def parse_rationale(raw: str) -> tuple[dict[str, str], list[str]]:
    """Return (record, format issues) for one raw rationale; no issues means schema-valid."""
    raw = raw.strip()
    matches = list(ANCHOR_RE.finditer(raw))
    record: dict[str, str] = {}
    for m in matches:  # a repeated name: the later value wins, the sequence check fails anyway
        record[ANCHOR_TO_FIELD[m.group(1)]] = m.group(2).strip()
    names = tuple(m.group(1) for m in matches)
    schema_ok = (
        names == ANCHORS
        and bool(record.get("target"))
        and all(record.get(f) in VALUES[f] for f in FIELDS[1:])
    )
    issues: list[str] = []
    if not schema_ok:
        issues.append("anchor_sequence_or_value_invalid")
    else:
        gaps = [raw[a.end() : b.start()] for a, b in zip(matches, matches[1:], strict=False)]
        if any(not CJK_RE.search(g) for g in gaps):
            issues.append("anchors_not_naturally_integrated")
    if "\n" in raw or "\r" in raw:
        issues.append("multiple_paragraphs")
    if not raw.startswith("分析："):
        issues.append("missing_analysis_prefix")
    if not 80 <= len(raw) <= 180:
        issues.append("length_out_of_range")
    if len(CJK_RE.findall(ANCHOR_RE.sub("", raw))) < 30:
        issues.append("insufficient_reasoning_text")
    if raw.startswith(("{", "[", "```", "#", "- ")):
        issues.append("forbidden_wrapper")
    if any(m.group(2).strip() in PLACEHOLDERS for m in matches):
        issues.append("placeholder_value")
    if schema_ok:
        issues.extend(consistency_issues(record))
    return record, issues


def consistency_issues(record: dict[str, str]) -> list[str]:
    """The three cross-field rules of the protocol, as issue names."""
    issues = []
    if (record["label"] == "无害") != (record["category"] == "非攻击"):
        issues.append("label_category_inconsistent")
    no_target = [record[f] == NO_TARGET for f in ("target", "target_type", "target_explicitness")]
    if any(no_target) and not all(no_target):
        issues.append("no_target_fields_inconsistent")
    if (record["label"] == "有害") != (record["stance"] == "攻击或认同"):
        issues.append("stance_label_inconsistent")
    return issues


def record_problems(row: dict) -> list[str]:
    """Plain-words problems of one demo reference record (empty list when it is valid)."""
    problems = []
    keys = ("id", "text", *FIELDS, "cot")
    if list(row) != list(keys):
        problems.append(f"keys {list(row)} != {list(keys)}")
        return problems
    if not all(isinstance(row[k], str) and row[k] for k in keys):
        problems.append("every value must be a non-empty string")
        return problems
    for f in FIELDS[1:]:
        if row[f] not in VALUES[f]:
            problems.append(f"{f} value {row[f]!r} not in value set")
    if not problems:
        problems += consistency_issues(row)
    record, issues = parse_rationale(row["cot"])
    problems += [f"cot: {i}" for i in issues]
    if not issues and any(record[f] != row[f] for f in FIELDS):
        problems.append("cot anchors do not parse back to the row's own fields")
    return problems


def normalise(text: str) -> str:
    """Near-duplicate normalisation used by VARM-Bench: NFKC, lower-case, all whitespace removed."""
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def is_near_duplicate(norm: str, pool: list[str]) -> bool:
    """True when ``norm`` has fuzz.ratio >= 95 with some already-normalised string in ``pool``."""
    if not pool:
        return False
    return process.extractOne(norm, pool, scorer=fuzz.ratio, score_cutoff=NEAR_DUP_THRESHOLD) is not None


def cross_split_near_duplicates(splits: dict[str, list[str]]) -> list[tuple[str, str, str, str]]:
    """All (split_a, text_a, split_b, text_b) pairs across different splits at or above the threshold."""
    found = []
    names = list(splits)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            norm_b = [normalise(t) for t in splits[b]]
            for text in splits[a]:
                hit = process.extractOne(
                    normalise(text), norm_b, scorer=fuzz.ratio, score_cutoff=NEAR_DUP_THRESHOLD
                )
                if hit is not None:
                    found.append((a, text, b, splits[b][hit[2]]))
    return found


def target_f1(pred: str, gold: str) -> float:
    """Character-multiset F1 of two targets after lower-casing and deleting whitespace (protocol §3)."""
    p, g = "".join(pred.lower().split()), "".join(gold.lower().split())
    if not p and not g:
        return 1.0
    common = sum(min(p.count(c), g.count(c)) for c in dict.fromkeys(p))
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def record_matches(output: str, gold: dict) -> bool:
    """JREM for one row: schema-valid output whose target and five discrete fields all match the gold."""
    record, issues = parse_rationale(output)
    if issues:
        return False
    return target_f1(record["target"], gold["target"]) >= 0.5 and all(
        record[f] == gold[f] for f in FIELDS[1:]
    )
