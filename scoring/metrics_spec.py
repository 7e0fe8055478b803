"""What each track's metrics are, said once: key, display names (English, Chinese), direction, unit, and
whether the board shows a metric (and its CI) by default.

The board, Compare, the submission page, the charts, CSV headers, the CLI and REST `GET /api/v1/metrics`
derive their names and colours from here. Keys are the dotted paths of `result["metrics"]` (and of the
leaderboard rows, which also flatten `explanations.*`): published keys, never renamed.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from typing import Any

__all__ = ["CLASSIFICATION_TRACK", "SPAN_TRACK", "VARM", "VARM_FIELDS", "MetricSpec", "headline_keys"]

ACRONYM = re.compile(r"[A-Z0-9][A-Z0-9-]*")  # a metric name written alike in both languages
UNITS_ZH = {"spans": "个"}


@dataclass(frozen=True)
class MetricSpec:
    key: str  # dotted path in result["metrics"] / leaderboard row
    en: str  # display name, English
    zh: str  # display name, Chinese
    higher_is_better: bool | None = True  # None: descriptive, neither direction is better
    ci: bool = False  # the board shows its 95% CI beside it (the result may carry CIs for more metrics)
    default: bool = False  # a board column by default (the column chooser adds the rest)
    unit: str = "%"  # "%": a share in [0, 1] shown as a percentage; else a plain number of this unit
    # Computed from numbers the submitter reports and nothing checks (disclosure §7: the masked
    # probabilities of §3); its names say so (board, submission page, CSV) and `GET /api/v1/metrics` has it.
    self_reported: bool = False

    @property
    def arrow(self) -> str:
        return {True: "↑", False: "↓", None: ""}[self.higher_is_better]

    @property
    def percent(self) -> bool:
        return self.unit == "%"

    def name(self, lang: str = "en") -> str:
        """The name in `lang`; an acronym (JREM, HER-C, T-F1, F1) is the name in both languages."""
        return self.zh if lang == "zh" and not ACRONYM.fullmatch(self.en) else self.en

    def direction(self, lang: str = "en") -> str:
        """ "↑ better" / "↓ better" (越高越好 / 越低越好); "" for a descriptive metric."""
        if self.higher_is_better is None:
            return ""
        if lang == "zh":
            return f"{self.arrow} 越{'高' if self.higher_is_better else '低'}越好"
        return f"{self.arrow} better"

    def header(self, lang: str = "en") -> str:
        """A column header: name, a unit other than %, and the arrow ("JREM ↑", "HER-C ↓")."""
        unit = UNITS_ZH.get(self.unit, self.unit) if lang == "zh" else self.unit
        unit = "" if self.percent else f" ({unit})"
        return f"{self.name(lang)}{unit} {self.arrow}".rstrip()

    def better(self, a: float, b: float) -> str:
        """ "A", "B" or "" (equal, or a descriptive metric): which value is the better one."""
        if self.higher_is_better is None or a == b:
            return ""
        return "A" if (a > b) == self.higher_is_better else "B"

    def as_dict(self) -> dict[str, Any]:
        direction = {True: "higher", False: "lower", None: None}[self.higher_is_better]
        return {**asdict(self), "better": direction, "arrow": self.arrow}


def _not_default(m: MetricSpec) -> MetricSpec:
    return replace(m, default=False)


VARM_FIELDS = (  # VARM record fields: (key, English, Chinese)
    ("target", "Target", "对象"),
    ("target_type", "Type", "对象类型"),
    ("target_explicitness", "Explicitness", "显隐性"),
    ("stance", "Stance", "立场"),
    ("label", "Label", "标签"),
    ("category", "Category", "类别"),
)
VARM = (
    MetricSpec("jrem", "JREM", "联合记录精确匹配", ci=True, default=True),
    MetricSpec("macro_f1.label", "Label Macro-F1", "标签 Macro-F1", default=True),
    MetricSpec("macro_f1.category", "Category Macro-F1", "类别 Macro-F1", default=True),
    # Hidden error rates: of the items with the right category (label), the share still wrong.
    MetricSpec("her_c", "HER-C", "类别隐藏错误率", higher_is_better=False, default=True),
    MetricSpec("her_l", "HER-L", "标签隐藏错误率", higher_is_better=False, default=True),
    MetricSpec("t_f1", "T-F1", "对象字符 F1", default=True),
    MetricSpec("parse_success", "Parse success", "解析成功率", default=True),
    *(MetricSpec(f"field_accuracy.{k}", f"{en} acc.", f"{zh}准确率") for k, en, zh in VARM_FIELDS),
    *(MetricSpec(f"macro_f1.{k}", f"{en} Macro-F1", f"{zh} Macro-F1") for k, en, zh in VARM_FIELDS[1:4]),
    MetricSpec("anchor_schema_valid", "Anchor schema valid", "锚点格式有效率"),
)
_CLASSIFICATION = (
    MetricSpec("f1", "F1", "F1", ci=True, default=True),
    MetricSpec("accuracy", "Accuracy", "准确率", default=True),
    MetricSpec("precision", "Precision", "精确率", default=True),
    MetricSpec("recall", "Recall", "召回率", default=True),
    MetricSpec("macro_f1", "Macro-F1", "宏平均 F1", default=True),
)
_SPANS = (
    MetricSpec("spans.overlap_f1", "Span overlap F1", "片段重合 F1", ci=True, default=True),
    MetricSpec("spans.overlap_precision", "Span overlap P", "片段重合精确率", default=True),
    MetricSpec("spans.overlap_recall", "Span overlap R", "片段重合召回率", default=True),
    MetricSpec("spans.recipe_overlap", "Span recipe overlap", "片段重合度（原配方）"),
    MetricSpec("spans.char_f1", "Span char F1", "片段字符 F1", default=True),
    MetricSpec("spans.iou", "Span IoU", "片段 IoU", default=True),
)


# The "Expl." column group (spec §3): blank for systems without explanations, and left out of a page on
# which no system has them, so a board without explanations looks as before. Shown by default.
# Comprehensiveness, sufficiency and the decision flip are self-reported (disclosure §7).
def _self_reported(key: str, en: str, zh: str, **kw: Any) -> MetricSpec:
    return MetricSpec(key, f"{en} (self-reported)", f"{zh}（自报）", self_reported=True, **kw)


_EXPLANATIONS = (
    _self_reported(
        "explanations.comprehensiveness", "Expl. comprehensiveness", "解释全面性", ci=True, default=True
    ),
    _self_reported(
        "explanations.sufficiency", "Expl. sufficiency", "解释充分性", higher_is_better=False, default=True
    ),
    _self_reported("explanations.decision_flip_20", "Expl. decision flip @20%", "解释决策翻转率@20%"),
    MetricSpec(
        "explanations.spans_per_item",
        "Expl. spans per item",
        "每条解释片段数",
        higher_is_better=None,
        default=True,
        unit="spans",
    ),
)
_AUPRC = MetricSpec("explanations.auprc", "Expl. attribution AUPRC", "归因 AUPRC", default=True)

CLASSIFICATION_TRACK = _CLASSIFICATION + _EXPLANATIONS  # COLD, ToxiCN
# CNTP's primary metric is the span overlap F1, so it leads; classification follows. Accuracy and Macro-F1 are
# its default classification columns (precision and recall are in the chooser).
SPAN_TRACK = (
    _SPANS
    + tuple(m if m.key in ("f1", "accuracy", "macro_f1") else _not_default(m) for m in _CLASSIFICATION)
    + (_AUPRC,)
    + _EXPLANATIONS
)


def headline_keys(specs: tuple[MetricSpec, ...]) -> tuple[str, ...]:
    """A track's headline metrics: its default columns of `result["metrics"]` (explanations are reported
    apart), in board order: what comparisons, re-score reports and the board's summary show."""
    return tuple(m.key for m in specs if m.default and not m.key.startswith("explanations."))
