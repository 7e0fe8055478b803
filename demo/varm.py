"""Composition of synthetic VARM demo rows (text + six-field record + gold rationale).

A row is produced by one *kind* (harmful: explicit group/single attack, implicit reference, endorsement,
untargeted abuse; non-harmful: quotation, rebuttal, neutral identity mention, personal account, criticism
of behaviour, everyday post, self-deprecation, general anti-abuse). Each kind draws its pieces
independently from ``demo.vocab``. Non-harmful hard cases deliberately carry identity words and quoted
insults: that is the lexical cue the benchmark's cue subsets expose.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from demo import vocab
from demo.cot import render
from demo.pieces import pick

HARMFUL, NON_HARMFUL = "有害", "无害"
NO_TARGET = "无明确对象"

# Share of each kind inside the harmful / non-harmful part of a split (sums to 1 each).
HARMFUL_KINDS = {
    "group": 0.36,
    "single": 0.2,
    "single_identity": 0.1,
    "implicit": 0.16,
    "endorse": 0.12,
    "no_target": 0.06,
}
NON_HARMFUL_KINDS = {
    "quote": 0.22,
    "rebut": 0.22,
    "neutral": 0.15,
    "personal": 0.12,
    "behaviour": 0.14,
    "plain": 0.09,
    "self": 0.03,
    "anti_abuse": 0.03,
}


@dataclass(frozen=True)
class Case:
    """One composed demo item before it gets an id."""

    text: str
    record: dict[str, str]  # the six fields, in protocol order
    cot: str
    kind: str
    subset: str | None  # cue-subset stem, None for rows without a lexical cue


def _record(target: str, ty: str, tt: str, stance: str, label: str, category: str) -> dict[str, str]:
    return {
        "target": target,
        "target_type": ty,
        "target_explicitness": tt,
        "stance": stance,
        "label": label,
        "category": category,
    }


def _group(rng: random.Random, families: list[str] | None = None) -> tuple[str, str]:
    """A (group noun, family key) pair; the family is drawn first (weighted), so small families occur."""
    families = families or list(vocab.GROUPS)
    family = rng.choices(families, weights=[vocab.FAMILY_WEIGHTS[f] for f in families])[0]
    return pick(rng, vocab.GROUPS[family]), family


def _group_predicate(rng: random.Random, family: str) -> str:
    if family in vocab.GROUP_PREDICATES and rng.random() < 0.7:
        return pick(rng, vocab.GROUP_PREDICATES[family])
    return pick(rng, vocab.GENERIC_GROUP_PREDICATES)


def _attack_text(rng: random.Random, target: str, predicate: str, endorse: bool) -> str:
    frames = vocab.ENDORSE_FRAMES if endorse else vocab.ATTACK_FRAMES
    return pick(rng, frames).format(
        o=pick(rng, vocab.OPENERS),
        t=target,
        p=predicate,
        tail=pick(rng, vocab.ATTACK_TAILS),
        e=pick(rng, vocab.ENDINGS),
        o2=pick(rng, vocab.SECOND_CLAUSES),
    )


def _attack_target(rng: random.Random, kind: str) -> tuple[str, str, str, str, str]:
    """(target, target_type, explicitness, family, predicate) for a harmful kind."""
    if kind == "single":
        return pick(rng, vocab.SINGLES), "单一对象", "明示", "general", pick(rng, vocab.SINGLE_PREDICATES)
    if kind == "single_identity":
        target, family, preds = pick(rng, vocab.SINGLE_IDENTITY)
        return target, "单一对象", "明示", family, pick(rng, preds)
    if kind == "implicit":
        target, family, ty = pick(rng, vocab.IMPLICIT_REFS)
        if family == "general":
            pred = pick(rng, vocab.SINGLE_PREDICATES if ty == "单一对象" else vocab.GENERIC_GROUP_PREDICATES)
        elif ty == "单一对象":
            # An identity-based attack on one person (e.g. 体重两百斤那位): a plain insult would be 一般辱骂.
            pred = pick(rng, vocab.IMPLICIT_SINGLE_PREDICATES[target])
        else:
            pred = _group_predicate(rng, family)
        return target, ty, "隐含", family, pred
    # "group" and "endorse": an explicitly named group (endorsements sometimes back a single-person attack).
    if kind == "endorse" and rng.random() < 0.25:
        return pick(rng, vocab.SINGLES), "单一对象", "明示", "general", pick(rng, vocab.SINGLE_PREDICATES)
    group, family = _group(rng)
    return group, "群体对象", "明示", family, _group_predicate(rng, family)


def harmful_case(rng: random.Random, kind: str) -> Case:
    """Compose one harmful row of ``kind``."""
    if kind == "no_target":
        attack = pick(rng, vocab.NO_TARGET_ATTACKS)
        text = (
            f"{pick(rng, vocab.OPENERS)}{attack}{pick(rng, vocab.NO_TARGET_TAILS)}{pick(rng, vocab.ENDINGS)}"
        )
        rec = _record(NO_TARGET, NO_TARGET, NO_TARGET, "攻击或认同", HARMFUL, "一般辱骂")
        return Case(text, rec, render("attack_no_target", rec, attack, rng), kind, "general_abuse")
    target, ty, tt, family, pred = _attack_target(rng, kind)
    fam = vocab.FAMILIES[family]
    text = _attack_text(rng, target, pred, endorse=kind == "endorse")
    rec = _record(target, ty, tt, "攻击或认同", HARMFUL, fam.category)
    cot_kind = "endorse" if kind == "endorse" else "attack"
    return Case(text, rec, render(cot_kind, rec, pred, rng), kind, fam.subset)


def _quoted_target(rng: random.Random) -> tuple[str, str, str, str, str]:
    """Target of a quoted/rebutted attack: mostly a group, sometimes one person or an implicit reference."""
    r = rng.random()
    if r < 0.2:
        return pick(rng, vocab.SINGLES), "单一对象", "明示", "general", pick(rng, vocab.SINGLE_PREDICATES)
    if r < 0.28:
        target, family, ty = pick(rng, [x for x in vocab.IMPLICIT_REFS if x[1] != "general"])
        pred = pick(rng, vocab.SINGLE_PREDICATES) if ty == "单一对象" else _group_predicate(rng, family)
        return target, ty, "隐含", family, pred
    group, family = _group(rng)
    return group, "群体对象", "明示", family, _group_predicate(rng, family)


def non_harmful_case(rng: random.Random, kind: str) -> Case:
    """Compose one non-harmful row of ``kind`` (stance never 攻击或认同, category always 非攻击)."""
    if kind in ("quote", "rebut"):
        target, ty, tt, family, pred = _quoted_target(rng)
        quote = f"{target}{pred}"
        if kind == "quote":
            text = pick(rng, vocab.QUOTE_FRAMES).format(q=quote, n=pick(rng, vocab.QUOTE_COMMENTS))
            stance = "引用或转述"
        else:
            frame = pick(rng, vocab.REBUT_FRAMES)
            if "你真的认识几个{t}" in frame and ty != "群体对象":
                frame = vocab.REBUT_FRAMES[0]  # that frame only reads naturally for a group
            counters = vocab.COUNTERS if ty == "群体对象" else vocab.COUNTERS_SINGLE
            text = frame.format(q=quote, t=target, p=pred, c=pick(rng, counters))
            stance = "反对攻击"
        text += pick(rng, ["。", "", "！", "…", "。"]) if not text.endswith(("？", "吗")) else ""
        rec = _record(target, ty, tt, stance, NON_HARMFUL, "非攻击")
        ev = quote if quote in text and len(quote) <= 14 else pred  # quote only what the text says
        return Case(text, rec, render(kind, rec, ev, rng), kind, vocab.FAMILIES[family].subset)
    if kind in ("neutral", "personal"):
        group, family = _group(rng)
        if kind == "neutral":
            text = pick(rng, vocab.NEUTRAL_FRAMES).format(t=group)
            ev = text.split("，")[0].split("？")[0]
        else:
            while "群体" in group:  # "我自己就是同志群体" reads wrong: a person is a member, not a group
                group, family = _group(rng, [family])
            frame = pick(rng, vocab.PERSONAL_FRAMES)
            text = frame.format(t=group, x=pick(rng, vocab.PERSONAL_EXPERIENCES))
            ev = frame.split("，")[0].format(t=group)
        text += pick(rng, ["。", "", "～", "。", "！"]) if not text.endswith("？") else ""
        rec = _record(group, "群体对象", "明示", "中性提及", NON_HARMFUL, "非攻击")
        return Case(text, rec, render(kind, rec, ev, rng), kind, vocab.FAMILIES[family].subset)
    if kind == "behaviour":
        target = pick(rng, vocab.BEHAVIOUR_TARGETS)
        behaviour = pick(rng, vocab.BEHAVIOURS)
        text = (
            f"{pick(rng, ['', '吐槽一下，', '说个事，', '真的无语，', '唉，'])}{target}{behaviour}，"
            f"{pick(rng, vocab.BEHAVIOUR_CRITIQUES)}{pick(rng, ['。', '', '！', '…'])}"
        )
        rec = _record(target, "单一对象", "明示", "中性提及", NON_HARMFUL, "非攻击")
        return Case(text, rec, render(kind, rec, behaviour, rng), kind, _behaviour_subset(target))
    rec = _record(
        NO_TARGET,
        NO_TARGET,
        NO_TARGET,
        "反对攻击" if kind == "anti_abuse" else "中性提及",
        NON_HARMFUL,
        "非攻击",
    )
    if kind == "plain":
        post = pick(rng, vocab.PLAIN_POSTS)
        text = f"{post}{pick(rng, vocab.PLAIN_TAILS)}{pick(rng, ['。', '', '！', '~', '…'])}"
        return Case(text, rec, render(kind, rec, post, rng), kind, None)
    source = vocab.SELF_DEPRECATION if kind == "self" else vocab.ANTI_ABUSE
    base = pick(rng, source)
    text = f"{pick(rng, ['', '唉，', '说真的，', '哈哈，'])}{base}{pick(rng, ['。', '', '！', '…'])}"
    insult = _insult_in(base)
    # Self-deprecation: quote the whole clause that holds the insult, e.g. "感觉自己像个废物".
    ev = next(c for c in base.split("，") if insult in c) if kind == "self" else insult
    return Case(text, rec, render(kind, rec, ev, rng), kind, "general_abuse")


def _behaviour_subset(target: str) -> str | None:
    """Behaviour criticism of a person named by a role or identity word belongs to that word's cue subset.

    Without such a word the row carries no lexical cue (no insult either), so it joins no subset.
    """
    for family, words in vocab.GROUPS.items():
        if any(w in target for w in words):
            return vocab.FAMILIES[family].subset
    return None


def _insult_in(text: str) -> str:
    """The first mild insult word in ``text``, else its first clause (the evidence quoted in the cot)."""
    return next((w for w in ("脑残", "废物", "蠢货", "白痴", "垃圾", "蠢") if w in text), text.split("，")[0])
