"""Keyword-lexicon baseline: any identity word or insult word means harmful.

The word lists are written by hand, the way a moderation team's first filter would be, not read from the
demo generator. The point of this baseline is its failure: quotations, rebuttals and neutral mentions of
identity words get flagged too, which is what VARM's cue subsets measure.
"""

from __future__ import annotations

from baselines.rationale import render

NO_TARGET = "无明确对象"

IDENTITY_WORDS: dict[str, list[str]] = {  # VARM category -> identity keywords
    "地域族群攻击": [
        "河南人",
        "东北人",
        "上海人",
        "广东人",
        "山东人",
        "四川人",
        "湖北人",
        "外地人",
        "北方人",
        "南方人",
        "外国人",
        "老外",
        "洋人",
        "外籍",
        "地域黑",
    ],
    "性别攻击": [
        "女司机",
        "女生",
        "女人",
        "男人",
        "男生",
        "宝妈",
        "直男",
        "女博士",
        "小仙女",
        "女的",
        "男的",
        "单身女性",
        "小姑娘",
        "当妈的",
    ],
    "性少数攻击": ["同性恋", "跨性别", "男同", "同志", "LGBT", "双性恋", "彩虹"],
    "阶层职业攻击": [
        "程序员",
        "外卖员",
        "快递员",
        "农民工",
        "保安",
        "穷人",
        "打工人",
        "销售",
        "司机",
        "房东",
        "服务员",
        "乡下人",
        "保洁",
        "搬砖",
    ],
    "身心疾病攻击": ["胖子", "残疾", "抑郁症", "矮个子", "自闭症", "聋哑", "口吃", "秃顶", "精神病", "身材"],
}
INSULT_WORDS = [
    "脑残",
    "废物",
    "蠢货",
    "垃圾",
    "白痴",
    "恶心",
    "丢人现眼",
    "没脑子",
    "没长脑子",
    "骗子",
    "智商",
    "蠢",
    "傻",
]

_IDENTITY = sorted(((w, c) for c, ws in IDENTITY_WORDS.items() for w in ws), key=lambda x: (-len(x[0]), x[0]))
_INSULTS = sorted(INSULT_WORDS, key=lambda w: (-len(w), w))


def find_all(text: str, words: list[str]) -> list[tuple[int, int, str]]:
    """Non-overlapping keyword matches, leftmost first and longest at each position."""
    matches, pos = [], 0
    while pos < len(text):
        hit = next((w for w in words if text.startswith(w, pos)), None)
        if hit:
            matches.append((pos, pos + len(hit), hit))
            pos += len(hit)
        else:
            pos += 1
    return matches


def identity_matches(text: str) -> list[tuple[int, int, str]]:
    return find_all(text, [w for w, _ in _IDENTITY])


def insult_matches(text: str) -> list[tuple[int, int, str]]:
    return find_all(text, _INSULTS)


def category_of(word: str) -> str:
    return next(c for w, c in _IDENTITY if w == word)


def varm_output(text: str) -> str:
    """The lexicon's VARM record for ``text``, as a protocol-valid rationale."""
    identities, insults = identity_matches(text), insult_matches(text)
    if not identities and not insults:
        record = dict(
            zip(
                ("target", "target_type", "target_explicitness", "stance", "label", "category"),
                (NO_TARGET, NO_TARGET, NO_TARGET, "中性提及", "无害", "非攻击"),
                strict=True,
            )
        )
        return render("lexicon_miss", record)
    if identities:
        word = identities[0][2]
        record = {
            "target": word,
            "target_type": "群体对象",
            "target_explicitness": "明示",
            "category": category_of(word),
        }
    else:
        record = {
            "target": NO_TARGET,
            "target_type": NO_TARGET,
            "target_explicitness": NO_TARGET,
            "category": "一般辱骂",
        }
    record = {
        "target": record["target"],
        "target_type": record["target_type"],
        "target_explicitness": record["target_explicitness"],
        "stance": "攻击或认同",
        "label": "有害",
        "category": record["category"],
    }
    words = list(dict.fromkeys(m[2] for m in sorted(identities + insults)))
    return render("lexicon_hit", record, "”“".join(words[:3]))


def toxitrace_prediction(row: dict, with_spans: bool) -> dict:
    """``{"id", "label"}`` (+ ``spans`` = every matched keyword's offsets) for one ToxiTrace input."""
    matches = sorted(identity_matches(row["text"]) + insult_matches(row["text"]))
    out: dict = {"id": row["id"], "label": int(bool(matches))}
    if with_spans:
        out["spans"] = [[s, e] for s, e, _ in matches]
    return out
