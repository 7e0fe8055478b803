"""The three ToxiTrace tracks (ARCHITECTURE.md §1.3): cold, toxicn (classification) and cntp (+ spans).

Result dict (§2): ``scorer_version``, ``track``, ``rows``, ``metrics{accuracy, precision, recall, f1,
macro_f1[, spans{...}]}``,
``breakdowns.<field>.<value>.{rows, accuracy, precision, recall, f1, macro_f1, withheld, undefined}``,
``undefined{<dotted metric path>: reason}`` (metrics whose denominator is 0: published as 0 by the spec's
rule, named so no reader takes them for a measurement), ``ci.<dotted metric path>: [low, high]``,
``bootstrap{resamples, seed, level}`` and, only for predictions with ``char_scores``,
``explanations{...}`` (§3, see ``explanations.py``). Plain Python floats, unrounded; the same references,
predictions and seed always give the same dict.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..bootstrap import DEFAULT_LEVEL, paired_bootstrap, percentile_cis, resample_table
from ..disclosure import (
    DERIVED_CELL,
    LABEL_PURE,
    SMALL_CELL,
    derived_small,
    small_cell,
    unlinked_rows,
    withhold,
)
from ..ladder import Margin, bootstrap_margin
from ..metrics_spec import CLASSIFICATION_TRACK, SPAN_TRACK, MetricSpec, headline_keys
from ..problems import InputError, Problem
from ..report import Report
from ..version import SCORER_VERSION
from .classification import METRICS, binary_metrics, bootstrap_metrics, undefined_binary
from .explanations import derive_spans, explanation_result
from .predictions import SpanMode, ToxiPredictions, parse_predictions
from .references import (
    LIST_BREAKDOWNS,
    ToxiReferences,
    bundle_warnings,
    check_reference_bundle,
    load_references,
)
from .spans import (
    SPAN_METRICS,
    Span,
    SpanCounts,
    bootstrap_span_metrics,
    span_metrics,
    undefined_span_metrics,
)

SPAN_KEYS = ("span_gold", "span_pred", "span_inter")  # per-row |G|, |P|, |P ∩ G| in row_outcomes
# Breakdown fields whose groups are defined by the gold label (COLD fine_label 1/2 are offensive, 0/3 not;
# ToxiCN toxic_type non_toxic is label 0): their cells publish accuracy only, whatever the data holds.
LABEL_DEFINED_BREAKDOWNS = ("fine_label", "toxic_type")


@dataclass(frozen=True)
class ToxiTraceTrack:
    name: str
    title: str
    primary_metric: str
    metric_specs: tuple[MetricSpec, ...]  # board order
    spans: bool  # a span track: references and predictions must carry spans on every row

    @property
    def headline_metrics(self) -> tuple[str, ...]:
        return headline_keys(self.metric_specs)

    # --- references and public inputs --------------------------------------------------------------

    def load_references(self, path: Path, subsets_dir: Path | None = None) -> ToxiReferences:
        """``path``: test.jsonl or a bundle dir holding it. ToxiTrace has no subsets (breakdowns instead)."""
        return load_references(path, require_spans=self.spans)

    def check_reference_bundle(self, directory: Path) -> list[Problem]:
        """Every problem in a bundle folder (train/dev/test.jsonl); used by ``check-references``."""
        return check_reference_bundle(directory, require_spans=self.spans)

    def bundle_warnings(self, directory: Path) -> list[str]:
        """Duplicate texts within a split, test texts also in train/dev, no test split (not failures)."""
        return bundle_warnings(directory)

    def public_inputs(self, refs: ToxiReferences) -> list[dict[str, Any]]:
        return refs.public_inputs()

    # --- predictions -------------------------------------------------------------------------------

    def check_predictions(self, data: bytes, inputs: list[dict[str, Any]], *, split: str = "test") -> Report:
        return parse_predictions(data, inputs, spans=self.span_mode, split=split)[1]

    def prediction_keys(self, data: bytes, inputs: list[dict[str, Any]]) -> list[str]:
        """One canonical string per input row (input order): the label, plus the merged spans on a span
        track (cntp). The classification tracks' references carry no spans (COLD, ToxiCN), so spans there
        change no score and are left out: they cannot make two files differ. Gold-independent; InputError
        for an invalid file. On a span track `char_scores` (§3) count too: they decide the derived spans and
        the attribution AUPRC, both gold-dependent, so a file differing only in one row's scores is a
        near-copy there; elsewhere they feed gold-independent metrics only and are left out."""
        preds, report = parse_predictions(data, inputs, spans=self.span_mode)
        if preds is None:
            raise InputError(report.errors, report.errors_total)
        return self._keys(preds)

    def check_with_keys(self, data: bytes, inputs: list[dict[str, Any]]) -> tuple[Report, list[str] | None]:
        """`check_predictions` and, for a valid file, `prediction_keys`, from one parse."""
        preds, report = parse_predictions(data, inputs, spans=self.span_mode)
        return report, None if preds is None else self._keys(preds)

    def _keys(self, preds: ToxiPredictions) -> list[str]:
        spans = self._predicted_spans(preds)
        if spans is None or not self.spans:
            return [str(int(label)) for label in preds.labels]
        keys = [f"{int(label)}|{sorted(row)}" for label, row in zip(preds.labels, spans, strict=True)]
        if preds.char_scores is not None:
            keys = [
                f"{key}|{hashlib.sha256(s.tobytes()).hexdigest()[:16]}"
                for key, s in zip(keys, preds.char_scores, strict=True)
            ]
        return keys

    @property
    def span_mode(self) -> SpanMode:
        return "required" if self.spans else "optional"

    def _parse(self, refs: ToxiReferences, data: bytes) -> ToxiPredictions:
        preds, report = parse_predictions(data, refs.public_inputs(), spans=self.span_mode)
        if preds is None:
            raise InputError(report.errors, report.errors_total)
        return preds

    def row_outcomes(self, refs: ToxiReferences, data: bytes) -> dict[str, list[Any]]:
        """PRIVATE per-row gold-joined arrays in reference order; never publish."""
        return self._outcomes(refs, self._parse(refs, data))

    @staticmethod
    def _predicted_spans(preds: ToxiPredictions) -> Sequence[Sequence[Span]] | None:
        """The submitted spans; else, when only scores were given, the spans derived from them (§3)."""
        if preds.spans is None and preds.char_scores is not None:
            return [derive_spans(scores) for scores in preds.char_scores]
        return preds.spans

    def _outcomes(self, refs: ToxiReferences, preds: ToxiPredictions) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {
            "id": list(refs.ids),
            "gold": [int(x) for x in refs.labels],
            "pred": [int(x) for x in preds.labels],
        }
        pred_spans = self._predicted_spans(preds)
        if refs.spans is not None and pred_spans is not None:
            counts = SpanCounts.from_spans(refs.spans, pred_spans)
            for key, arr in zip(SPAN_KEYS, (counts.gold, counts.pred, counts.inter), strict=True):
                out[key] = [int(x) for x in arr]
        return out

    # --- scoring -----------------------------------------------------------------------------------

    def score(
        self,
        refs: ToxiReferences,
        data: bytes,
        *,
        bootstrap: int = 1000,
        seed: int = 0,
        disclose: bool = True,
    ) -> dict[str, Any]:
        """The full result dict; InputError when the predictions are invalid. `disclose` (the published
        form): small and label-pure breakdown cells are withheld; False gives every cell's raw values.

        ``explanations`` is added only when the predictions carry ``char_scores`` (spec §3)."""
        preds = self._parse(refs, data)
        return self._result(refs, preds, self._outcomes(refs, preds), bootstrap, seed, disclose)

    def score_with_rows(
        self, refs: ToxiReferences, data: bytes, *, bootstrap: int = 1000, seed: int = 0
    ) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """(`score(...)`, `row_outcomes(...)`) from ONE parse of the file."""
        preds = self._parse(refs, data)
        outcomes = self._outcomes(refs, preds)
        return self._result(refs, preds, outcomes, bootstrap, seed, True), outcomes

    def score_slices(
        self,
        refs: ToxiReferences,
        data: bytes,
        slices: Mapping[str, np.ndarray],
        *,
        bootstrap: Mapping[str, int],
        seed: int = 0,
        full_rows: bool = True,
        arrays: bool = False,  # noqa: ARG002 - the row outcomes are lists already (scoring/tracks.py)
    ) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
        """{"full": score_with_rows(...), <slice>: the same on the slice's rows} from ONE parse of the file.

        `slices` maps a name to ascending row indices (scoring/slices.py); `bootstrap` the resamples of each
        result ("full" and each slice's name; 0: no intervals); `full_rows=False`: no rows for "full" ({})."""
        preds = self._parse(refs, data)
        outcomes = self._outcomes(refs, preds)
        full = self._result(refs, preds, outcomes, bootstrap["full"], seed, True)
        out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
            "full": (full, outcomes if full_rows else {})
        }
        for name, rows in slices.items():
            part, part_preds = refs.restricted(rows), _restricted_predictions(preds, rows)
            part_outcomes = {key: [values[k] for k in rows] for key, values in outcomes.items()}
            out[name] = (
                self._result(part, part_preds, part_outcomes, bootstrap[name], seed, True),
                part_outcomes,
            )
        return out

    def _result(
        self,
        refs: ToxiReferences,
        preds: ToxiPredictions,
        outcomes: dict[str, list[Any]],
        bootstrap: int,
        seed: int,
        disclose: bool,
    ) -> dict[str, Any]:
        gold = np.asarray(outcomes["gold"], dtype=np.int8)
        pred = np.asarray(outcomes["pred"], dtype=np.int8)
        metrics: dict[str, Any] = binary_metrics(gold, pred)
        undefined = undefined_binary(gold, pred)
        counts = _span_counts(outcomes)
        if counts is not None:
            metrics["spans"] = span_metrics(counts)
            undefined.update({f"spans.{k}": v for k, v in undefined_span_metrics(counts).items()})

        ci: dict[str, list[float]] = {}
        idx = resample_table(len(gold), bootstrap, seed)
        if idx.size:
            ci.update(percentile_cis(_resampled(_unlinked(outcomes), idx), DEFAULT_LEVEL))

        result = {
            "scorer_version": SCORER_VERSION,
            "track": self.name,
            "rows": len(gold),
            "metrics": metrics,
            "undefined": undefined,
            "breakdowns": _breakdowns(refs, gold, pred, disclose),
            "ci": ci,
            "bootstrap": {"resamples": int(bootstrap), "seed": int(seed), "level": DEFAULT_LEVEL},
        }
        if preds.char_scores is not None:
            spans = self._predicted_spans(preds)
            assert spans is not None  # given, or derived from the scores
            result["explanations"], explanation_ci = explanation_result(
                pred,
                preds.char_scores,
                preds.probs,
                spans,
                "given" if preds.spans is not None else "derived",
                refs.spans,
                idx,
            )
            ci.update(explanation_ci)
        return result

    def paired_compare(
        self,
        a: dict[str, list[Any]],
        b: dict[str, list[Any]],
        *,
        bootstrap: int,
        seed: int,
        metrics: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Paired bootstrap of a - b on the headline metrics, both resampled with the same rows.

        `metrics` (default: all headline metrics) restricts the comparison to those names, which must be
        headline metrics; span metrics are only resampled when one of them is asked for."""
        if a["id"] != b["id"] or a["gold"] != b["gold"]:
            raise ValueError("paired comparison needs outcomes from the same references")
        if metrics is not None:
            unknown = sorted(set(metrics) - set(self.headline_metrics))
            if unknown:
                raise ValueError(f"cannot compare on {unknown}; choose among {list(self.headline_metrics)}")
        wanted = self.headline_metrics if metrics is None else tuple(dict.fromkeys(metrics))
        spans = any(m.startswith("spans.") for m in wanted)
        idx = resample_table(len(a["gold"]), bootstrap, seed)
        values_a, values_b = _flat_metrics(a, spans), _flat_metrics(b, spans)
        unlinked_a, unlinked_b = _unlinked_pair(a, b)
        resampled_a = _resampled(unlinked_a, idx, spans) if idx.size else {}
        resampled_b = _resampled(unlinked_b, idx, spans) if idx.size else {}
        names = [m for m in wanted if m in values_a and m in values_b]
        return paired_bootstrap(
            {m: values_a[m] for m in names},
            {m: values_b[m] for m in names},
            {m: resampled_a.get(m, np.zeros(0)) for m in names},
            {m: resampled_b.get(m, np.zeros(0)) for m in names},
            level=DEFAULT_LEVEL,
        )

    def prepare_compare(self, rows: dict[str, list[Any] | np.ndarray]) -> dict[str, list[Any]]:
        """The form `paired_compare_prepared` takes: the row outcomes themselves, as lists (cheap here)."""
        return {key: v.tolist() if isinstance(v, np.ndarray) else v for key, v in rows.items()}

    def release_margin(
        self, new: dict[str, list[Any]], best: dict[str, list[Any]], *, bootstrap: int, seed: int
    ) -> Margin:
        """The Ladder's margin on the primary metric (F1 or span F1: not a per-row mean, so the paired
        bootstrap's standard error, with `bootstrap` resamples and `seed`)."""
        primary = self.primary_metric
        comparison = self.paired_compare_prepared(
            new, best, bootstrap=bootstrap, seed=seed, metrics=[primary]
        )
        return bootstrap_margin(comparison[primary])

    def paired_compare_prepared(
        self,
        a: dict[str, list[Any]],
        b: dict[str, list[Any]],
        *,
        bootstrap: int,
        seed: int,
        metrics: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        return self.paired_compare(a, b, bootstrap=bootstrap, seed=seed, metrics=metrics)


def _restricted_predictions(preds: ToxiPredictions, rows: np.ndarray) -> ToxiPredictions:
    return ToxiPredictions(
        labels=preds.labels[rows],
        spans=None if preds.spans is None else [preds.spans[k] for k in rows],
        char_scores=None if preds.char_scores is None else [preds.char_scores[k] for k in rows],
        probs=None if preds.probs is None else {key: values[rows] for key, values in preds.probs.items()},
    )


def _unlinked(outcomes: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The per-row outcomes in canonical order (`scoring.disclosure.unlinked_rows`), for the published
    intervals: they then depend on the confusion (and span) counts only, not on which rows were right."""
    keys = [k for k in ("gold", "pred", *SPAN_KEYS) if k in outcomes]
    order = unlinked_rows(np.column_stack([np.asarray(outcomes[k]) for k in keys]))
    return {k: [outcomes[k][i] for i in order] for k in keys}


def _unlinked_pair(
    a: dict[str, list[Any]], b: dict[str, list[Any]]
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """Two submissions' outcomes in one canonical order of their joint per-row outcomes: pairs stay pairs,
    and a paired comparison depends on the joint counts only, not on which rows."""
    keys = [k for k in ("gold", "pred", *SPAN_KEYS) if k in a and k in b]
    joint = np.column_stack([np.asarray(side[k]) for side in (a, b) for k in keys])
    order = unlinked_rows(joint)
    first, second = ({k: [side[k][i] for i in order] for k in keys} for side in (a, b))
    return first, second


def _span_counts(outcomes: dict[str, list[Any]]) -> SpanCounts | None:
    if not all(key in outcomes for key in SPAN_KEYS):
        return None
    return SpanCounts(*(np.asarray(outcomes[key], dtype=np.int64) for key in SPAN_KEYS))


def _flat_metrics(outcomes: dict[str, list[Any]], spans: bool = True) -> dict[str, float]:
    """Point estimates keyed by dotted path ("f1", "spans.overlap_f1"); span metrics only if `spans`."""
    flat = binary_metrics(outcomes["gold"], outcomes["pred"])
    counts = _span_counts(outcomes) if spans else None
    if counts is not None:
        flat.update({f"spans.{k}": v for k, v in span_metrics(counts).items()})
    return flat


def _resampled(outcomes: dict[str, list[Any]], idx: np.ndarray, spans: bool = True) -> dict[str, np.ndarray]:
    """Per-resample values of every metric, keyed by dotted path; span metrics only if `spans`."""
    out = bootstrap_metrics(outcomes["gold"], outcomes["pred"], idx)
    counts = _span_counts(outcomes) if spans else None
    if counts is not None:
        out.update({f"spans.{k}": v for k, v in bootstrap_span_metrics(counts, idx).items()})
    return out


def _breakdowns(
    refs: ToxiReferences, gold: np.ndarray, pred: np.ndarray, disclose: bool = True
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{field: {value: {rows, accuracy, precision, recall, f1, macro_f1, withheld, undefined}}}``;
    multi-valued fields (target_groups) count a row in every group it lists. Small and label-pure cells are
    withheld (``scoring.disclosure``)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, per_row in refs.breakdowns.items():
        members: dict[str, list[int]] = {}
        for row, values in enumerate(per_row):
            for value in values:
                members.setdefault(value, []).append(row)
        out[name] = {}
        # A scalar field partitions the rows: a cell left out is derivable as overall minus the others.
        derived = (
            derived_small({value: len(rows) for value, rows in members.items()}, len(gold))
            if disclose and name not in LIST_BREAKDOWNS
            else set()
        )
        for value in sorted(members):
            rows = np.asarray(members[value], dtype=np.int64)
            cell = breakdown_cell(gold[rows], pred[rows], label_defined=name in LABEL_DEFINED_BREAKDOWNS)
            if value in derived and not small_cell(len(rows)):
                cell = withhold(raw_cell(gold[rows], pred[rows]), METRICS, DERIVED_CELL)
            out[name][value] = cell if disclose else raw_cell(gold[rows], pred[rows])
    return out


def raw_cell(gold: np.ndarray, pred: np.ndarray) -> dict[str, Any]:
    return {
        "rows": len(gold),
        **binary_metrics(gold, pred),
        "withheld": None,
        "undefined": undefined_binary(gold, pred),
    }


def breakdown_cell(gold: np.ndarray, pred: np.ndarray, *, label_defined: bool) -> dict[str, Any]:
    """One published breakdown cell: every metric, accuracy only for a label-pure group (declared, or
    one gold label in fact), nothing for a small one."""
    cell = raw_cell(gold, pred)
    if small_cell(len(gold)):
        return withhold(cell, METRICS, SMALL_CELL)
    if label_defined or len(np.unique(gold)) == 1:
        return withhold(cell, [m for m in METRICS if m != "accuracy"], LABEL_PURE)
    return cell


COLD = ToxiTraceTrack("cold", "COLD", "f1", CLASSIFICATION_TRACK, spans=False)
TOXICN = ToxiTraceTrack("toxicn", "ToxiCN", "f1", CLASSIFICATION_TRACK, spans=False)
CNTP = ToxiTraceTrack("cntp", "CNTP", "spans.overlap_f1", SPAN_TRACK, spans=True)

TRACKS: dict[str, ToxiTraceTrack] = {t.name: t for t in (COLD, TOXICN, CNTP)}

__all__ = ["CNTP", "COLD", "METRICS", "SPAN_METRICS", "TOXICN", "TRACKS", "ToxiTraceTrack"]
