"""Protocol-valid field-anchored rationales for baseline predictions.

A baseline must be scored on its fields, not lose every row to a format error, so each rationale is
rendered from a template, padded or trimmed to 80–180 code points, and re-checked with the strict parser
(``scoring.protocol.parse_output``, the scorer's own). The prose states what the system actually used
(the majority rule, the matched keywords, the strongest n-grams) rather than pretending to reason.
"""

from __future__ import annotations

from scoring.protocol import ANCHORS, FIELDS, parse_output

TEMPLATES = {
    "majority": "分析：多数类基线不读取文本内容，直接输出训练集中最常见的整条记录："
    "对象为{T}，对象类型为{TY}，显隐性为{TT}，作者立场为{S}，有害性为{L}，类别为{C}，仅作为参照下限。",
    "lexicon_hit": "分析：关键词表在文本中匹配到“{ev}”，据此把对象定为{T}，"
    "对象类型记为{TY}，显隐性按{TT}处理；词表规则认为出现身份词或辱骂词即为{S}，因此判为{L}，类别取{C}。",
    "lexicon_miss": "分析：文本中没有匹配到词表里的身份词或辱骂词，因此对象记为{T}，"
    "对象类型为{TY}，显隐性为{TT}；没有可疑用词时默认作者立场为{S}，判为{L}，类别为{C}。",
    "ngram": "分析：字符n元组逻辑回归模型主要依据文本里的“{ev}”等片段作出判断，"
    "对象定为{T}，对象类型判为{TY}，显隐性为{TT}；结合整体用词，立场预测为{S}，有害性为{L}，类别为{C}。",
}
PADDING = "，以上仅为基线系统的自动判断"


def render(kind: str, record: dict[str, str], evidence: str = "") -> str:
    """A schema-valid rationale whose anchors parse back to ``record``; raises ValueError otherwise."""
    anchors = {n: f"[{n}:{record[f]}]" for n, f in zip(ANCHORS, FIELDS, strict=True)}
    ev = evidence
    while True:
        raw = TEMPLATES[kind].format(ev=ev, **anchors)
        if len(raw) <= 180 or not ev:
            break
        ev = ev[:-1]
    if len(raw) < 80:
        raw = raw[:-1] + PADDING + "。"
    parsed = parse_output(raw)
    if not parsed.schema_valid or any(parsed.record.get(f) != record[f] for f in FIELDS):
        raise ValueError(f"baseline rationale invalid ({list(parsed.format_issues)}) for {record}")
    return raw
