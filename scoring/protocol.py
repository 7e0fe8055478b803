"""The VARM-Bench output protocol: value sets and the strict anchor parser (spec §1–§2).

`parse_output` decides validity exactly as the spec says; nothing is normalised. The lenient pass below it
is advice for submitters only and never changes a score.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "ANALYSIS_PREFIX",
    "ANCHORS",
    "ANCHOR_FIELD",
    "ANCHOR_RE",
    "DISCRETE_FIELDS",
    "FIELDS",
    "FIELD_ANCHOR",
    "FORBIDDEN_PREFIXES",
    "FORMAT_ISSUES",
    "LENGTH_RANGE",
    "MIN_REASONING_CJK",
    "NO_TARGET",
    "PLACEHOLDER_VALUES",
    "VALUE_SETS",
    "LenientDiagnosis",
    "ParsedOutput",
    "consistency_issues",
    "count_cjk",
    "diagnose_lenient",
    "lenient_parse",
    "parse_output",
    "summarise_advice",
]

FIELDS = ("target", "target_type", "target_explicitness", "stance", "label", "category")
DISCRETE_FIELDS = FIELDS[1:]
ANCHORS = ("T", "TY", "TT", "S", "L", "C")  # the required anchor sequence
ANCHOR_FIELD = dict(zip(ANCHORS, FIELDS, strict=True))
FIELD_ANCHOR = dict(zip(FIELDS, ANCHORS, strict=True))

NO_TARGET = "无明确对象"
HARMFUL = "有害"
NON_HARMFUL = "无害"
NON_ATTACK = "非攻击"
ATTACK_STANCE = "攻击或认同"

VALUE_SETS: dict[str, tuple[str, ...]] = {
    "target_type": ("单一对象", "群体对象", NO_TARGET),
    "target_explicitness": ("明示", "隐含", NO_TARGET),
    "stance": (ATTACK_STANCE, "反对攻击", "引用或转述", "中性提及"),
    "label": (HARMFUL, NON_HARMFUL),
    "category": (
        NON_ATTACK,
        "一般辱骂",
        "地域族群攻击",
        "性别攻击",
        "性少数攻击",
        "阶层职业攻击",
        "身心疾病攻击",
    ),
}

PLACEHOLDER_VALUES = frozenset(
    {
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
    }
)

# Alternation order matters: TY and TT must be tried before T.
ANCHOR_RE = re.compile(r"\[(TY|TT|T|S|L|C):([^\]\r\n]+)\]")
CJK_RE = re.compile("[\u3400-\u9fff]")
_NON_CJK_RE = re.compile("[^\u3400-\u9fff]+")
ANALYSIS_PREFIX = "分析："  # full-width colon U+FF1A
LENGTH_RANGE = (80, 180)  # inclusive, in code points of the stripped output
MIN_REASONING_CJK = 30
FORBIDDEN_PREFIXES = ("{", "[", "```", "#", "- ")

# Spec order; a result lists every name, zeros included.
FORMAT_ISSUES = (
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
)


@dataclass(frozen=True)
class ParsedOutput:
    """One model output after the strict parser.

    `record` maps field names to anchor values (the later value wins when an anchor repeats); fields
    without an anchor are absent.
    """

    record: dict[str, str] = field(default_factory=dict)
    anchor_schema_valid: bool = False
    schema_valid: bool = False
    format_issues: tuple[str, ...] = ()


def count_cjk(text: str) -> int:
    """CJK characters in the spec's sense: code points U+3400–U+9FFF."""
    return len(_NON_CJK_RE.sub("", text))  # one C-level pass, no per-character objects


def consistency_issues(record: dict[str, str]) -> list[str]:
    """The three cross-field rules (spec §2.3) for a complete record; shared with the reference checker."""
    issues = []
    if (record["label"] == NON_HARMFUL) != (record["category"] == NON_ATTACK):
        issues.append("label_category_inconsistent")
    no_target = {
        record["target"] == NO_TARGET,
        record["target_type"] == NO_TARGET,
        record["target_explicitness"] == NO_TARGET,
    }
    if len(no_target) != 1:
        issues.append("no_target_fields_inconsistent")
    if (record["label"] == HARMFUL) != (record["stance"] == ATTACK_STANCE):
        issues.append("stance_label_inconsistent")
    return issues


def parse_output(raw: str) -> ParsedOutput:  # noqa: C901
    """Apply the strict parser of spec §2 to one raw model output."""
    text = raw.strip()
    # split() with the pattern's two groups: [text before the first anchor, its name, its value, the text
    # up to the next anchor, ...] in one C-level pass, where a loop over the matches cost more.
    pieces = ANCHOR_RE.split(text)
    prose = pieces[::3]  # the text with every anchor match deleted, in the pieces between the anchors
    names = pieces[1::3]
    # the later value wins when an anchor repeats, at the place of its first occurrence
    record = {ANCHOR_FIELD[name]: value.strip() for name, value in zip(names, pieces[2::3], strict=True)}

    anchor_valid = tuple(names) == ANCHORS and record["target"] != ""
    if anchor_valid:
        for name in DISCRETE_FIELDS:
            if record[name] not in VALUE_SETS[name]:
                anchor_valid = False
                break
    issues: list[str] = []
    if not anchor_valid:
        issues.append("anchor_sequence_or_value_invalid")
    else:
        for between in prose[1:-1]:  # the text between each two adjacent anchors
            if not CJK_RE.search(between):
                issues.append("anchors_not_naturally_integrated")
                break
    if "\n" in text or "\r" in text:
        issues.append("multiple_paragraphs")
    if not text.startswith(ANALYSIS_PREFIX):
        issues.append("missing_analysis_prefix")
    if not LENGTH_RANGE[0] <= len(text) <= LENGTH_RANGE[1]:
        issues.append("length_out_of_range")
    if count_cjk("".join(prose)) < MIN_REASONING_CJK:
        issues.append("insufficient_reasoning_text")
    if text.startswith(FORBIDDEN_PREFIXES):
        issues.append("forbidden_wrapper")
    if not PLACEHOLDER_VALUES.isdisjoint(record.values()):  # each anchor name's final value (spec §2.3)
        issues.append("placeholder_value")
    if anchor_valid:
        issues.extend(consistency_issues(record))
    return ParsedOutput(
        record=record,
        anchor_schema_valid=anchor_valid,
        schema_valid=anchor_valid and not issues,
        format_issues=tuple(issues),
    )


# --- Lenient diagnostic (extension; advice only) -------------------------------------------------------

_OPEN = "[【［〔"
_CLOSE = "]】］〕"
_LENIENT_RE = re.compile(
    rf"([{re.escape(_OPEN)}])([ \t\u3000]*)(TY|TT|T|S|L|C)([ \t\u3000]*)([:：])([^{re.escape(_CLOSE)}\r\n]+)"
    rf"([{re.escape(_CLOSE)}])"
)


@dataclass(frozen=True)
class LenientDiagnosis:
    """Which tolerated deviations an output's anchors use, and whether it would then be schema-valid."""

    fullwidth_brackets: bool = False
    fullwidth_colon: bool = False
    spaced_names: bool = False
    lenient: ParsedOutput | None = None  # the parse of the repaired text, when something was repaired

    @property
    def would_be_valid(self) -> bool:
        return self.lenient is not None and self.lenient.schema_valid


def diagnose_lenient(raw: str) -> LenientDiagnosis:
    """Repair full-width brackets, full-width colons and spaces around names in anchors, then re-parse."""
    flags = {"fullwidth_brackets": False, "fullwidth_colon": False, "spaced_names": False}

    def repair(match: re.Match[str]) -> str:
        opening, space_before, name, space_after, colon, value, closing = match.groups()
        if opening != "[" or closing != "]":
            flags["fullwidth_brackets"] = True
        if colon != ":":
            flags["fullwidth_colon"] = True
        if space_before or space_after:
            flags["spaced_names"] = True
        if opening == "[" and closing == "]" and colon == ":" and not (space_before or space_after):
            return match.group()
        return f"[{name}:{value}]"

    repaired = _LENIENT_RE.sub(repair, raw)
    return LenientDiagnosis(**flags, lenient=parse_output(repaired) if repaired != raw else None)


def lenient_parse(raw: str) -> ParsedOutput | None:
    """The parse the output would get if the lenient repairs were allowed; None when nothing to repair."""
    return diagnose_lenient(raw).lenient


def _outputs(n: int) -> str:
    return "1 output uses" if n == 1 else f"{n:,} outputs use"


def _count_as(n: int) -> str:
    return "it counts as invalid." if n == 1 else "they count as invalid."


def _where(found: list[int | None]) -> str:
    """ " (lines 3, 8, 15 and 2 more)" for the lines an advice is about; "" when they are not known."""
    lines = [n for n in found if n is not None]
    if not lines:
        return ""
    shown = ", ".join(str(n) for n in lines[:ADVICE_LINES])
    more = f" and {len(lines) - ADVICE_LINES:,} more" if len(lines) > ADVICE_LINES else ""
    return f" (line{'s' if len(lines) > 1 else ''} {shown}{more})"


ADVICE_LINES = 5  # line numbers an advice names before "and N more"


def summarise_advice(
    outputs: Iterable[str],
    parsed: Sequence[ParsedOutput] | None = None,
    lines: Sequence[int] | None = None,
) -> list[str]:
    """Plain sentences about near-miss anchors among the outputs that are not schema-valid, each naming
    the first lines it is about when `lines` gives the file line of each output (same order).

    `parsed` may pass the strict parses already computed for `outputs` (same order) to avoid re-parsing.
    """
    brackets: list[int | None] = []
    colon: list[int | None] = []
    spaces: list[int | None] = []
    repaired_valid = 0
    for index, raw in enumerate(outputs):
        strict = parsed[index] if parsed is not None else parse_output(raw)
        if strict.schema_valid:
            continue
        diagnosis = diagnose_lenient(raw)
        line = lines[index] if lines is not None else None
        for found, seen in (
            (brackets, diagnosis.fullwidth_brackets),
            (colon, diagnosis.fullwidth_colon),
            (spaces, diagnosis.spaced_names),
        ):
            if seen:
                found.append(line)
        repaired_valid += diagnosis.would_be_valid
    advice = []
    if brackets:
        advice.append(
            f"{_outputs(len(brackets))} full-width brackets around anchors{_where(brackets)}; "
            f"the scorer accepts only ASCII [ ] — {_count_as(len(brackets))}"
        )
    if colon:
        advice.append(
            f"{_outputs(len(colon))} a full-width colon (：) inside anchors{_where(colon)}; "
            f"the scorer accepts only an ASCII colon as in [T:...] — {_count_as(len(colon))}"
        )
    if spaces:
        advice.append(
            f"{_outputs(len(spaces))} spaces around anchor names (like [ T :...])"
            f"{_where(spaces)}; the scorer accepts only [T:...] — {_count_as(len(spaces))}"
        )
    if repaired_valid:
        were = "it was" if repaired_valid == 1 else "they were"
        advice.append(
            f"{repaired_valid:,} invalid output{'s' if repaired_valid != 1 else ''} would be valid "
            f"if {were} written with ASCII anchors [NAME:value]; fix the output format to have "
            f"{'it' if repaired_valid == 1 else 'them'} scored."
        )
    return advice
