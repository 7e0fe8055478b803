"""Field-anchored gold rationales (``cot``) for the synthetic VARM demo rows.

Each discourse frame has several rationale templates that tie a piece of input-specific evidence
(``{ev}``: the insult, the quoted sentence, the criticised behaviour, ...) to the six decisions, as the
VARM-Bench annotation guide asks (a rationale that only lists the anchor values is not enough). The
renderer shortens the evidence until the rationale fits 80–180 code points and then verifies it with the
strict checker, so an invalid rationale can never be written.
"""

from __future__ import annotations

import random

from scoring.protocol import FIELDS, parse_output

TEMPLATES: dict[str, list[str]] = {
    "attack": [
        "分析：评论用“{ev}”来贬低对方，攻击指向{T}，这是{TY}，对象的点名方式为{TT}；作者自己在输出恶意，"
        "没有引用或反驳的痕迹，立场属于{S}，内容判为{L}，类别是{C}。",
        "分析：这句话把“{ev}”直接安在{T}头上，对象类型为{TY}，指代方式是{TT}；语气是作者本人在骂，"
        "立场为{S}，所以判定{L}，归入{C}。",
        "分析：原文针对{T}说出“{ev}”这样的贬损话，属于{TY}，显隐性为{TT}；通篇看不到转述或反对的标记，"
        "作者立场是{S}，结论为{L}，类别为{C}。",
    ],
    "endorse": [
        "分析：作者附和前面的说法，认为{T}“{ev}”，对象类型是{TY}，指代方式为{TT}；附和攻击同样算表态，"
        "立场为{S}，结论为{L}，类别归为{C}。",
        "分析：评论以赞同的口吻重复“{ev}”，矛头指向{T}，属于{TY}，点名方式是{TT}；认同别人的攻击即为攻击，"
        "立场为{S}，判为{L}，类别是{C}。",
    ],
    "attack_no_target": [
        "分析：“{ev}”是泛泛的辱骂，没有具体指向谁，对象记为{T}，类型为{TY}，显隐性为{TT}；但作者在用脏话"
        "发泄和煽动，立场为{S}，仍判为{L}，类别是{C}。",
        "分析：原文说“{ev}”，骂的是一个不确定的范围，对象为{T}，类型同为{TY}，显隐性也是{TT}；作者本人在"
        "辱骂，立场是{S}，所以{L}，类别为{C}。",
    ],
    "quote": [
        "分析：作者只是转述别人说的“{ev}”，被提到的对象是{T}，属于{TY}，点名方式为{TT}；作者本人没有表态"
        "支持，立场是{S}，因此{L}，类别为{C}。",
        "分析：引号里的“{ev}”是别人的话，文中涉及{T}，类型为{TY}，显隐性为{TT}；作者只做搬运和记录，"
        "立场为{S}，不构成攻击，判为{L}，类别{C}。",
    ],
    "rebut": [
        "分析：作者反驳“{ev}”这种说法，涉及的对象是{T}，类型为{TY}，显隐性为{TT}；作者明确反对这种攻击，"
        "立场为{S}，判为{L}，类别是{C}。",
        "分析：文中虽然出现“{ev}”，但这是被批评的说法，对象是{T}，属于{TY}，点名方式为{TT}；作者站在"
        "反对歧视的一边，立场为{S}，内容{L}，类别{C}。",
    ],
    "neutral": [
        "分析：文中提到{T}只是在说“{ev}”这件事，属于{TY}，提及方式为{TT}；没有贬损或攻击的表达，"
        "立场为{S}，内容{L}，类别为{C}。",
        "分析：原文“{ev}”是日常讨论，涉及{T}，对象类型{TY}，显隐性{TT}；看不出任何负面评价，作者立场是{S}，"
        "所以{L}，类别{C}。",
    ],
    "personal": [
        "分析：作者以“{ev}”开头讲述自己的经历，涉及身份{T}，属于{TY}，身份是{TT}说明的；叙述平和，"
        "没有针对谁，立场为{S}，内容{L}，类别为{C}。",
        "分析：这是作者的自述，“{ev}”说明作者本人属于{T}，类型为{TY}，显隐性为{TT}；即使提到难听的词也只是"
        "回忆，立场为{S}，判为{L}，类别{C}。",
    ],
    "behaviour": [
        "分析：作者批评的是{T}“{ev}”这个具体行为，对象是{TY}，点名方式为{TT}；针对的是行为而非身份，"
        "也没有辱骂，立场为{S}，属于{L}，类别为{C}。",
        "分析：文中指出“{ev}”，对象是{T}，类型为{TY}，显隐性{TT}；这是就事论事的行为批评，没有人身攻击，"
        "立场为{S}，判为{L}，类别{C}。",
    ],
    "plain": [
        "分析：这条内容只是在说“{ev}”，没有指向任何人，对象记为{T}，类型为{TY}，显隐性为{TT}；属于日常"
        "分享，立场为{S}，内容{L}，类别为{C}。",
        "分析：原文“{ev}”是生活记录，不涉及任何人或群体，对象为{T}，类型{TY}，显隐性{TT}；作者只是随口一说，"
        "立场为{S}，判为{L}，类别{C}。",
    ],
    "self": [
        "分析：作者用“{ev}”自嘲，并没有攻击别人，对象记为{T}，类型为{TY}，显隐性为{TT}；属于自述吐槽，"
        "立场为{S}，结果{L}，类别为{C}。",
        "分析：虽然有“{ev}”这样的字眼，但说的是作者自己，对象为{T}，类型{TY}，显隐性{TT}；没有伤害他人，"
        "立场为{S}，判为{L}，类别{C}。",
    ],
    "anti_abuse": [
        "分析：作者在劝大家别再说“{ev}”之类的话，没有具体对象，对象记为{T}，类型为{TY}，显隐性为{TT}；态度是"
        "反对网络谩骂，立场为{S}，因此{L}，类别{C}。",
        "分析：文中的“{ev}”是被劝阻的说法，作者并非在骂人，对象为{T}，类型{TY}，显隐性{TT}；作者反对这种"
        "用词，立场为{S}，内容{L}，类别为{C}。",
    ],
}


def _anchors(record: dict[str, str]) -> dict[str, str]:
    names = ("T", "TY", "TT", "S", "L", "C")
    return {n: f"[{n}:{record[f]}]" for n, f in zip(names, FIELDS, strict=True)}


def render(kind: str, record: dict[str, str], evidence: str, rng: random.Random) -> str:
    """Render a valid rationale of ``kind`` for ``record``; shorten the evidence to fit 80–180 code points."""
    templates = TEMPLATES[kind]
    first = rng.randrange(len(templates))
    anchors = _anchors(record)
    # Try every template (starting at a random one) with progressively shorter evidence.
    for k in range(len(templates)):
        template = templates[(first + k) % len(templates)]
        ev = evidence
        while True:
            raw = template.format(ev=ev, **anchors)
            if len(raw) <= 180:
                break
            if len(ev) <= 4:
                break
            ev = ev[: max(4, len(ev) - 4)]
        if len(raw) < 80:
            raw = raw[:-1] + "，判断以原文语境为准。"
        parsed = parse_output(raw)
        if parsed.schema_valid and all(parsed.record[f] == record[f] for f in FIELDS):
            return raw
    raise ValueError(f"cannot render a valid {kind} rationale for {record}")
