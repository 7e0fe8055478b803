"""Dev-split explorer: per-item gold vs parsed records, computed with the scoring library.

Only the PUBLIC dev split is used (its references are published by design); nothing here can reach the
hidden test. All text shown comes from uploads or the dev file and is escaped before it becomes HTML.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from scoring.metrics_spec import VARM_FIELDS
from scoring.protocol import FIELDS, parse_output
from scoring.toxitrace.explanations import derive_spans
from scoring.toxitrace.masking import top_positions
from scoring.tracks import get_track

from .i18n import t
from .safe import h

FIELD_LABELS = {key: (zh, en) for key, en, zh in VARM_FIELDS}  # (Chinese, English), as `i18n.TEXT`


def field_label(field: str, lang: str = "zh") -> str:
    zh, en = FIELD_LABELS.get(field, (field, field))
    return en if lang == "en" else zh


MAX_ITEMS_SHOWN = 500


@dataclass
class Exploration:
    """Per-item outcomes on the dev split plus the validation report of the upload."""

    track: str
    items: list[dict] = field(default_factory=list)
    report: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)


def read_lines(data: bytes) -> list[dict]:
    """JSON objects of a JSONL file (BOM tolerated, blank or broken lines skipped: the report names them)."""
    out = []
    for line in data.decode("utf-8-sig", errors="replace").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def dev_inputs(dev_rows: Sequence[dict], track: str) -> list[dict]:
    """Public inputs {"id", "text"} of the dev rows (rows without an id get a positional one)."""
    prefix = f"{track}-dev-"
    return [
        {"id": str(r.get("id") or f"{prefix}{i:05d}"), "text": str(r.get("text", ""))}
        for i, r in enumerate(dev_rows, start=1)
    ]


def _target_match(pred: str, gold_record: dict) -> tuple[bool, float]:
    from scoring.varm_metrics import TARGET_MATCH_THRESHOLD, target_f1

    f1 = target_f1(pred, str(gold_record.get("target") or ""))  # as written, like the scorer (spec §1)
    return f1 >= TARGET_MATCH_THRESHOLD, f1


def read_dev_subsets(data: bytes | None) -> dict[str, list[str]]:
    """The public dev-split cue-subset membership `{"<subset>": ["<dev id>", ...]}` (malformed: empty)."""
    try:
        obj = json.loads(data or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    if not isinstance(obj, dict):
        return {}
    return {
        str(name): [str(i) for i in ids if isinstance(i, str)]
        for name, ids in obj.items()
        if isinstance(ids, list)
    }


def explore_varm(
    dev_rows: Sequence[dict], predictions: bytes, dev_subsets: dict[str, list[str]] | None = None
) -> Exploration:
    """Join VARM dev predictions to the dev gold by id (or text) and compare every field.

    An item's subsets are those `dev_subsets` lists its id under (plus any `subset(s)` field of the row).
    """
    inputs = dev_inputs(dev_rows, "varm")
    member_of: dict[str, list[str]] = {}
    for name, ids in (dev_subsets or {}).items():
        for rid in ids:
            member_of.setdefault(rid, []).append(name)
    report = get_track("varm").check_predictions(predictions, inputs, split="dev").as_dict()
    by_id: dict[str, str] = {}
    by_text: dict[str, str] = {}
    for obj in read_lines(predictions):
        output = obj.get("output")
        if not isinstance(output, str):
            continue
        if isinstance(obj.get("id"), str):
            by_id.setdefault(obj["id"], output)
        elif isinstance(obj.get("text"), str):
            by_text.setdefault(obj["text"], output)
    items = []
    for idx, (row, inp) in enumerate(zip(dev_rows, inputs, strict=True), start=1):
        raw = by_id.get(inp["id"], by_text.get(inp["text"]))
        if raw is None:
            continue
        parsed = parse_output(raw)
        gold = {f: str(row.get(f, "")) for f in FIELDS}
        pred = {f: parsed.record.get(f, "") for f in FIELDS}
        t_ok, t_f1 = _target_match(pred["target"], row)
        correct = {"target": parsed.schema_valid and t_ok}
        for f in FIELDS[1:]:
            correct[f] = parsed.schema_valid and pred[f] == gold[f]
        subsets = list(row.get("subsets") or ([row["subset"]] if row.get("subset") else []))
        subsets += [name for name in member_of.get(inp["id"], []) if name not in subsets]
        items.append(
            {
                "n": idx,
                "id": inp["id"],
                "text": inp["text"],
                "gold": gold,
                "pred": pred,
                "raw": raw,
                "valid": parsed.schema_valid,
                "issues": list(parsed.format_issues),
                "target_f1": t_f1,
                "wrong": [f for f in FIELDS if not correct[f]],
                "subsets": [str(s) for s in subsets],
            }
        )
    return Exploration("varm", items, report, summarise_varm(items))


def summarise_varm(items: Sequence[dict]) -> dict:
    """Dev-split aggregates of the explored items: field accuracy, JREM, parse success, issue counts."""
    n = len(items)
    if not n:
        return {"rows": 0}
    acc = {f: sum(f not in it["wrong"] for it in items) / n for f in FIELDS}
    return {
        "rows": n,
        "jrem": sum(not it["wrong"] for it in items) / n,
        "parse_success": sum(it["valid"] for it in items) / n,
        "field_accuracy": acc,
        "format_issues": dict(Counter(i for it in items for i in it["issues"])),
    }


def explore_toxitrace(track: str, dev_bytes: bytes, predictions: bytes) -> Exploration:
    """Join ToxiTrace dev predictions to the dev gold: label right/wrong, spans side by side."""
    from scoring.problems import InputError
    from scoring.toxitrace.predictions import parse_predictions
    from scoring.toxitrace.references import parse_references

    try:
        refs = parse_references(dev_bytes)
    except InputError as exc:
        return Exploration(
            track,
            [],
            {
                "valid": False,
                "errors": [p.as_dict() for p in exc.problems],
                "errors_total": exc.total,
                "advice": [],
                "rows": 0,
            },
        )
    preds, report = parse_predictions(predictions, refs.public_inputs(), spans="optional", split="dev")
    items = []
    if preds is not None:
        derived = preds.spans is None and preds.char_scores is not None  # spans from scores, as the scorer
        for i, rid in enumerate(refs.ids):
            gold_spans = list(refs.spans[i]) if refs.spans is not None else []
            if derived and preds.char_scores is not None:
                pred_spans = list(derive_spans(preds.char_scores[i]))
            else:
                pred_spans = list(preds.spans[i]) if preds.spans is not None else []
            g, p = int(refs.labels[i]), int(preds.labels[i])
            items.append(
                {
                    "n": i + 1,
                    "id": rid,
                    "text": refs.texts[i],
                    "gold": {"label": g},
                    "pred": {"label": p},
                    "gold_spans": [tuple(s) for s in gold_spans],
                    "pred_spans": [tuple(s) for s in pred_spans],
                    "valid": True,
                    "issues": [],
                    "wrong": [] if g == p else ["label"],
                    "breakdowns": {k: list(v[i]) for k, v in refs.breakdowns.items()},
                    # Breakdown values double as "subsets" so the subset filter works on every track.
                    "subsets": [f"{k}={val}" for k, v in refs.breakdowns.items() for val in v[i]],
                }
            )
            if preds.char_scores is not None:
                items[-1]["char_scores"] = [float(x) for x in preds.char_scores[i]]
    n = len(items)
    summary = {"rows": n, "accuracy": (sum(not it["wrong"] for it in items) / n) if n else None}
    return Exploration(track, items, report.as_dict(), summary)


def explore(
    track: str, dev_bytes: bytes, predictions: bytes, dev_subsets: bytes | None = None
) -> Exploration:
    if track == "varm":
        return explore_varm(read_lines(dev_bytes), predictions, read_dev_subsets(dev_subsets))
    return explore_toxitrace(track, dev_bytes, predictions)


def filter_items(
    items: Sequence[dict],
    *,
    wrong_field: str = "",
    stance: str = "",
    category: str = "",
    subset: str = "",
    only_errors: bool = False,
) -> list[dict]:
    """Items matching every given filter (gold stance/category; field error; subset)."""
    out = []
    for it in items:
        if only_errors and not it["wrong"]:
            continue
        if wrong_field and wrong_field not in it["wrong"]:
            continue
        if stance and it["gold"].get("stance") != stance:
            continue
        if category and it["gold"].get("category") != category:
            continue
        if subset and subset not in it.get("subsets", []):
            continue
        out.append(it)
    return out


def items_table(items: Sequence[dict], limit: int = MAX_ITEMS_SHOWN, lang: str = "zh") -> pd.DataFrame:
    """One line per item: number, id, text excerpt, wrong fields, format issues (plain text cells)."""
    columns = ["#", "ID", t("ex_text", lang), t("ex_wrong_fields", lang), t("h_format_issues", lang)]
    rows = []
    for it in items[:limit]:
        text = it["text"]
        rows.append(
            [
                it["n"],
                it["id"],
                text if len(text) <= 60 else text[:60] + "…",
                ", ".join(field_label(f, lang) for f in it["wrong"]) or "✓",
                ", ".join(it["issues"]),
            ]
        )
    return pd.DataFrame(rows, columns=columns)


def highlight(text: str, needle: str, css: str = "varm-target") -> str:
    """Escaped `text` with every occurrence of `needle` wrapped in <mark> (escaping happens per piece)."""
    if not needle or needle not in text:
        return h(text)
    parts = text.split(needle)
    return f'<mark class="{css}">{h(needle)}</mark>'.join(h(p) for p in parts)


def highlight_spans(text: str, gold: Sequence[tuple[int, int]], pred: Sequence[tuple[int, int]]) -> str:
    """Escaped text with gold spans underlined and predicted spans marked (runs of equal state merged)."""
    g = {i for s, e in gold for i in range(s, e)}
    p = {i for s, e in pred for i in range(s, e)}
    out: list[str] = []
    run, state = "", (False, False)
    for i, ch in enumerate(text + "\0"):
        now = (i in g, i in p) if i < len(text) else (None, None)
        if now != state and run:
            piece = h(run)
            if state[1]:
                piece = f"<mark>{piece}</mark>"
            if state[0]:
                piece = f"<u>{piece}</u>"
            out.append(piece)
            run = ""
        state = now  # type: ignore[assignment]
        run += ch
    return "".join(out)


ATTRIBUTION_LEVELS = 5  # shades of the attribution heat map (classes attr-0 .. attr-5 in app.CSS)


def highlight_attributions(
    text: str, scores: Sequence[float], gold: Sequence[tuple[int, int]], label: int = 1
) -> str:
    """Escaped text, each character shaded by its attribution score (min-max scaled within the item, in
    ATTRIBUTION_LEVELS steps), gold spans underlined; the characters the masking removes at k = 20 are
    outlined: the evidence for the predicted `label` (spec §3), the top 20 % by score on a row predicted
    toxic, the bottom 20 % on one predicted non-toxic."""
    g = {i for s, e in gold for i in range(s, e)}
    top = top_positions(scores, 20, label)
    low, high = (min(scores), max(scores)) if len(scores) else (0.0, 0.0)
    out = []
    for i, ch in enumerate(text):
        level = round(ATTRIBUTION_LEVELS * (scores[i] - low) / (high - low)) if high > low else 0
        css = f"attr-{level}" + (" attr-top" if top[i] else "")
        piece = f'<span class="{css}">{h(ch)}</span>'
        out.append(f"<u>{piece}</u>" if i in g else piece)
    return "".join(out)


def item_html(item: dict | None, lang: str = "zh") -> str:
    """Detail view of one item: the text with the gold target highlighted, and gold vs parsed fields."""
    if not item:
        return f"<p>{t('ex_pick', lang)}</p>"
    if "gold_spans" in item:
        body = highlight_spans(item["text"], item["gold_spans"], item["pred_spans"])
        verdict = "✓" if not item["wrong"] else "✗"
        attributions = ""
        if item.get("char_scores") is not None:
            label = int((item.get("pred") or {}).get("label", 1))
            heat = highlight_attributions(item["text"], item["char_scores"], item["gold_spans"], label)
            attributions = (
                f"<p class='explorer-text explorer-attr'>{heat}</p><p><small>{t('ex_attribution', lang)}"
                "</small></p>"
            )
        return (
            f"<div class='explorer-item'><p><b>#{item['n']}</b> <code>{h(item['id'])}</code></p>"
            f"<p class='explorer-text'>{body}</p>{attributions}"
            f"<p>{t('ex_gold_label', lang)} = {h(item['gold']['label'])} · "
            f"{t('ex_predicted', lang)} = {h(item['pred']['label'])} "
            f"{verdict}</p><p><small>{t('ex_span_legend', lang)}</small></p></div>"
        )
    rows = []
    for f in FIELDS:
        wrong = f in item["wrong"]
        extra = f" (F1 {item['target_f1']:.2f})" if f == "target" else ""
        rows.append(
            f"<tr class='{'wrong' if wrong else 'right'}'><td>{h(field_label(f, lang))}</td>"
            f"<td>{h(item['gold'][f])}</td><td>{h(item['pred'][f])}{h(extra)}</td>"
            f"<td>{'✗' if wrong else '✓'}</td></tr>"
        )
    issues = ", ".join(item["issues"]) or t("none", lang)
    return (
        f"<div class='explorer-item'><p><b>#{item['n']}</b> <code>{h(item['id'])}</code> · "
        f"{t('ex_valid' if item['valid'] else 'ex_invalid', lang)}</p>"
        f"<p class='explorer-text'>{highlight(item['text'], item['gold']['target'])}</p>"
        f"<table class='explorer-fields'><tr><th>{t('fig_field', lang)}</th><th>{t('ex_gold', lang)}</th>"
        f"<th>{t('ex_parsed', lang)}</th><th></th></tr>" + "".join(rows) + "</table>"
        f"<p><b>{t('h_format_issues', lang)}</b>: {h(issues)}</p>"
        f"<details><summary>{t('ex_raw', lang)}</summary><pre>{h(item['raw'])}</pre></details></div>"
    )


def looks_like_test_file(predictions: bytes, test_inputs: Sequence[dict], dev_rows: Sequence[dict]) -> bool:
    """True when most predictions name the public TEST split's items (by id, or by text for VARM's `text`
    key) rather than the dev split's: someone uploaded their test file to the dev explorer."""
    test_ids = {str(r.get("id")) for r in test_inputs}
    test_texts = {str(r.get("text")) for r in test_inputs}
    dev_ids = {str(r.get("id")) for r in dev_rows}
    dev_texts = {str(r.get("text")) for r in dev_rows}
    on_test = on_dev = 0
    for obj in read_lines(predictions):
        key, text = obj.get("id"), obj.get("text")
        if isinstance(key, (str, int)):
            on_test += str(key) in test_ids
            on_dev += str(key) in dev_ids
        elif isinstance(text, str):
            on_test += text in test_texts
            on_dev += text in dev_texts
    return on_test > 0 and on_test > on_dev


def summary_markdown(exp: Exploration, lang: str = "zh") -> str:
    """Dev-split aggregates of the explored items (plain numbers, no user text)."""
    s = exp.summary
    if not s.get("rows"):
        return f"**{t('ex_no_items', lang)}**"
    items = f"**{t('ex_dev_items', lang)}**: {s['rows']}"
    if exp.track == "varm":
        acc = " · ".join(f"{field_label(f, lang)} {s['field_accuracy'][f] * 100:.1f}" for f in FIELDS)
        return (
            f"{items} · **JREM**: {s['jrem'] * 100:.1f} · "
            f"**{t('h_parse_success', lang)}**: {s['parse_success'] * 100:.1f}\n\n"
            f"{t('fig_field_accuracy', lang)} (%): {acc}"
        )
    return f"{items} · **{t('fig_accuracy', lang)}**: {(s['accuracy'] or 0) * 100:.1f}"
