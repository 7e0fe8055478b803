"""Composition of synthetic ToxiTrace-track demo rows (COLD-, ToxiCN- and CNTP-shaped).

Rows reuse the word banks of ``demo.vocab`` but follow each dataset's own label scheme (see
``data/demo/README.md``). Every composer returns the row without its id; the generator assigns ids and
rejects duplicates. Hard negatives (anti-bias remarks, quotations, neutral identity mentions, insults in
quotes) are included on purpose so that keyword matching is not enough.
"""

from __future__ import annotations

import random

from demo import vocab
from demo.pieces import pick

CNTP_INSULTS: list[tuple[str, str, str]] = [  # (lead-in, toxic span, trailing words)
    ("就是个", "脑残", ""),
    ("真是个", "废物", ""),
    ("", "蠢得没边", "了"),
    ("说话跟个", "白痴", "一样"),
    ("什么", "垃圾", "水平"),
    ("纯纯的", "蠢货", ""),
    ("整天", "丢人现眼", ""),
    ("", "恶心死人", "了"),
    ("是不是", "没长脑子", "啊"),
    ("", "智商堪忧", ""),
    ("活脱脱一个", "笑话", ""),
    ("就是个", "蠢货", "而已"),
    ("简直是", "废物", "中的战斗机"),
    ("", "脑子进水", "了吧"),
    ("一群", "白痴", "在那儿起哄"),
]
CNTP_SECOND: list[tuple[str, str, str]] = [
    ("，还整天", "丢人现眼", ""),
    ("，说话跟个", "白痴", "一样"),
    ("，真是个", "废物", ""),
    ("，", "脑残", "一个"),
    ("，", "恶心", "得要命"),
]
CNTP_GROUP_SPANS: list[tuple[str, str, str]] = [
    ("", "都是骗子", ""),
    ("", "素质低得可怜", ""),
    ("", "都是脑残", ""),
    ("全是", "废物", ""),
    ("", "看着就恶心", ""),
    ("就是一群", "蠢货", ""),
]
SARCASM = [
    "{t}又上新闻了，真是一点都不意外呢",
    "懂的都懂，遇到{t}记得看好钱包",
    "{t}嘛，大家心里都有数",
    "果然是{t}，这很合理",
    "又是{t}，我已经不想说什么了",
    "跟{t}打交道，多长个心眼总没错",
]
YOU_INSULTS = [
    "装什么装，脑残吧",
    "在这儿横什么横，真是个废物",
    "懂什么，闭嘴吧蠢货",
    "哪来的脸教育别人，白痴",
]


def _end(rng: random.Random) -> str:
    return pick(rng, vocab.ENDINGS)


def _group(rng: random.Random, families: list[str]) -> tuple[str, str]:
    family = pick(rng, families)
    return pick(rng, vocab.GROUPS[family]), family


def _group_attack(rng: random.Random, group: str, family: str) -> str:
    preds = vocab.GROUP_PREDICATES.get(family, []) + vocab.GENERIC_GROUP_PREDICATES
    return f"{pick(rng, vocab.OPENERS)}{group}{pick(rng, preds)}{pick(rng, vocab.ATTACK_TAILS)}{_end(rng)}"


def _rebuttal(rng: random.Random, group: str, family: str) -> str:
    pred = pick(rng, vocab.GROUP_PREDICATES.get(family, vocab.GENERIC_GROUP_PREDICATES))
    frame = pick(rng, vocab.REBUT_FRAMES)
    return frame.format(q=f"{group}{pred}", t=group, p=pred, c=pick(rng, vocab.COUNTERS)) + pick(
        rng, ["。", "", "！"]
    )


def _quote(rng: random.Random, group: str, family: str) -> str:
    pred = pick(rng, vocab.GROUP_PREDICATES.get(family, vocab.GENERIC_GROUP_PREDICATES))
    frame = pick(rng, vocab.QUOTE_FRAMES)
    return frame.format(q=f"{group}{pred}", n=pick(rng, vocab.QUOTE_COMMENTS)) + pick(rng, ["。", "", "…"])


def _neutral(rng: random.Random, group: str) -> str:
    if rng.random() < 0.6:
        return pick(rng, vocab.NEUTRAL_FRAMES).format(t=group) + pick(rng, ["。", "", "！"])
    frame = pick(rng, vocab.PERSONAL_FRAMES)
    return frame.format(t=group, x=pick(rng, vocab.PERSONAL_EXPERIENCES)) + pick(rng, ["。", "", "～"])


# ---- COLD ---------------------------------------------------------------------------------------------
COLD_TOPIC_FAMILIES = {"race": ["race"], "gender": ["gender_f", "gender_m"], "region": ["region"]}
COLD_FINE_SHARES = {2: 0.3, 1: 0.15, 3: 0.22, 0: 0.33}


def cold_row(rng: random.Random, fine: int) -> dict:
    """One COLD-shaped row with fine-grained label ``fine`` (label = 1 for fine 1/2, else 0)."""
    topic = pick(rng, list(COLD_TOPIC_FAMILIES))
    families = COLD_TOPIC_FAMILIES[topic]
    group, family = _group(rng, families)
    if fine == 2:
        # A third of group attacks are insinuations with no insult word (COLD has many such items).
        text = (
            pick(rng, SARCASM).format(t=group) + _end(rng)
            if rng.random() < 0.33
            else _group_attack(rng, group, family)
        )
    elif fine == 1:
        singles = [s for s in vocab.SINGLE_IDENTITY if s[1] in families]
        if rng.random() < 0.5:
            single, _, preds = pick(rng, singles)
            text = f"{pick(rng, vocab.OPENERS)}{single}{pick(rng, preds)}{_end(rng)}"
        else:
            text = f"你一个{group}，{pick(rng, YOU_INSULTS)}{_end(rng)}"
    elif fine == 3:
        text = _rebuttal(rng, group, family)
    else:
        text = _quote(rng, group, family) if rng.random() < 0.4 else _neutral(rng, group)
    return {"text": text, "label": int(fine in (1, 2)), "topic": topic, "fine_label": fine}


# ---- ToxiCN ------------------------------------------------------------------------------------------
# (toxic, toxic_type, expression) kinds and their shares.
TOXICN_KINDS = {"non_toxic": 0.5, "offensive": 0.17, "explicit": 0.17, "implicit": 0.09, "reporting": 0.07}
TOXICN_FAMILIES = ["region", "race", "gender_f", "gender_m", "lgbt", "class", "body"]


def toxicn_row(rng: random.Random, kind: str) -> dict:
    """One ToxiCN-shaped row of ``kind``; expression subdivides hate speech only (ToxiCN's taxonomy)."""
    if kind == "non_toxic":
        r = rng.random()
        if r < 0.15:
            text = pick(rng, vocab.PLAIN_POSTS) + pick(rng, vocab.PLAIN_TAILS) + pick(rng, ["。", "", "！"])
        else:
            group, family = _group(rng, TOXICN_FAMILIES)
            text = _rebuttal(rng, group, family) if r < 0.5 else _neutral(rng, group)
        return _toxicn(text, 0, 0, 0, ["non-hate"])
    if kind == "offensive":
        if rng.random() < 0.8:
            text = (
                f"{pick(rng, vocab.OPENERS)}{pick(rng, vocab.SINGLES)}{pick(rng, vocab.SINGLE_PREDICATES)}"
                f"{pick(rng, vocab.ATTACK_TAILS)}{_end(rng)}"
            )
        else:
            text = f"{pick(rng, vocab.OPENERS)}{pick(rng, vocab.NO_TARGET_ATTACKS)}{_end(rng)}"
        return _toxicn(text, 1, 1, 0, ["non-hate"])
    if kind == "explicit":
        group, family = _group(rng, TOXICN_FAMILIES)
        groups = [vocab.FAMILIES[family].toxicn_group]
        if rng.random() < 0.15:  # a second, different target group in one post
            group2, family2 = _group(
                rng, [f for f in TOXICN_FAMILIES if vocab.FAMILIES[f].toxicn_group != groups[0]]
            )
            pred = pick(rng, vocab.GENERIC_GROUP_PREDICATES)
            text = f"{pick(rng, vocab.OPENERS)}{group}和{group2}{pred}{_end(rng)}"
            groups.append(vocab.FAMILIES[family2].toxicn_group)
        else:
            text = _group_attack(rng, group, family)
        return _toxicn(text, 1, 2, 1, groups)
    if kind == "implicit":
        if rng.random() < 0.5:
            ref, family, _ = pick(
                rng, [x for x in vocab.IMPLICIT_REFS if x[1] != "general" and x[2] == "群体对象"]
            )
            preds = vocab.GROUP_PREDICATES[family]
            text = f"{pick(rng, vocab.OPENERS)}{ref}{pick(rng, preds)}{_end(rng)}"
        else:
            group, family = _group(rng, TOXICN_FAMILIES)
            text = pick(rng, SARCASM).format(t=group) + _end(rng)
        return _toxicn(text, 1, 2, 2, [vocab.FAMILIES[family].toxicn_group])
    group, family = _group(rng, TOXICN_FAMILIES)  # reporting hate speech
    return _toxicn(_quote(rng, group, family), 1, 2, 3, [vocab.FAMILIES[family].toxicn_group])


def _toxicn(text: str, toxic: int, toxic_type: int, expression: int, groups: list[str]) -> dict:
    ordered = [g for g in ("LGBTQ", "Region", "Sexism", "Racism", "others", "non-hate") if g in groups]
    return {
        "text": text,
        "label": toxic,
        "toxic_type": toxic_type,
        "expression": expression,
        "target_groups": ordered,
    }


# ---- CNTP --------------------------------------------------------------------------------------------
CNTP_KINDS = {
    "single": 0.25,
    "double": 0.08,
    "group": 0.17,
    "neutral": 0.2,
    "quote": 0.1,
    "behaviour": 0.08,
    "plain": 0.07,
    "anti_abuse": 0.05,
}


def cntp_row(rng: random.Random, kind: str) -> dict:
    """One CNTP-shaped row; toxic rows carry the ``[start, end)`` code-point offsets of their toxic spans."""
    if kind in ("single", "double", "group"):
        parts: list[tuple[str, bool]] = [(pick(rng, vocab.OPENERS), False)]
        if kind == "group":
            group, _ = _group(rng, list(vocab.GROUPS))
            lead, span, trail = pick(rng, CNTP_GROUP_SPANS)
            parts.append((group + lead, False))
        else:
            lead, span, trail = pick(rng, CNTP_INSULTS)
            parts.append((pick(rng, vocab.SINGLES) + lead, False))
        parts += [(span, True), (trail, False)]
        if kind == "double":
            lead2, span2, trail2 = pick(rng, [x for x in CNTP_SECOND if x[1] != span])
            parts += [(lead2, False), (span2, True), (trail2, False)]
        parts.append((pick(rng, vocab.ATTACK_TAILS) + _end(rng), False))
        text, spans, pos = "", [], 0
        for piece, toxic in parts:
            if toxic:
                spans.append([pos, pos + len(piece)])
            text += piece
            pos += len(piece)
        return {"text": text, "label": 1, "spans": spans}
    if kind == "behaviour":
        text = (
            f"{pick(rng, vocab.BEHAVIOUR_TARGETS)}{pick(rng, vocab.BEHAVIOURS)}，"
            f"{pick(rng, vocab.BEHAVIOUR_CRITIQUES)}{_end(rng)}"
        )
    elif kind == "plain":
        text = pick(rng, vocab.PLAIN_POSTS) + pick(rng, vocab.PLAIN_TAILS) + _end(rng)
    elif kind == "anti_abuse":
        text = (
            pick(rng, ["", "说真的，", "唉，"])
            + pick(rng, vocab.ANTI_ABUSE + vocab.SELF_DEPRECATION)
            + _end(rng)
        )
    else:
        group, family = _group(rng, list(vocab.GROUPS))
        text = _quote(rng, group, family) if kind == "quote" else _neutral(rng, group)
    return {"text": text, "label": 0, "spans": []}
