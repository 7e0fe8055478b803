"""Baseline systems for the SYNTHETIC DEMO benchmark (``python -m baselines``).

Three deliberately simple systems, trained (where they train at all) on ``data/demo/<track>/train.jsonl``
and run on the dev and test inputs of every demo track:

* ``majority``   – predicts the most frequent training record / label, ignoring the text;
* ``lexicon``    – flags any identity word or insult word as harmful (the failure mode VARM's cue subsets
  expose: it does well on harmful text and badly on quotation, rebuttal and neutral mention);
* ``char-ngram`` – character 1–3-gram TF-IDF + logistic regression per field; on the ToxiTrace tracks
  with explanations (spec §3: ``char_scores`` from its own feature weights, ``prob`` and the masked
  probabilities from its own model on the masked texts);
* ``char-ngram-random`` – ToxiTrace tracks only: the same model with seeded random ``char_scores``, the
  chance level of the explanation metrics.

VARM predictions are raw field-anchored rationales (``{"id", "output"}``) that pass the strict parser;
ToxiTrace predictions are ``{"id", "label"}`` (+ ``"spans"`` for cntp, + the explanation keys for the
n-gram baselines). Everything is deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass

TRACKS = ("varm", "cold", "toxicn", "cntp")
TOXITRACE_TRACKS = ("cold", "toxicn", "cntp")
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class BaselineInfo:
    """What ``data/demo/baselines.json`` says about one baseline."""

    name: str
    description: str
    model_type: str
    setting: str
    tracks: tuple[str, ...] = TRACKS  # where it runs (not written to baselines.json)

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "model_type": self.model_type,
            "setting": self.setting,
        }


BASELINES = (
    BaselineInfo(
        "majority",
        "Ignores the text. VARM: the most frequent complete six-field record of the train split, written "
        "as a protocol-valid rationale; ToxiTrace: the majority train label (cntp: no spans).",
        "constant",
        "trained on demo train (label counts only); no text features",
    ),
    BaselineInfo(
        "lexicon",
        "Hand-written keyword lists of identity words (by category) and mild insult words; any match "
        "means harmful/toxic. VARM target = first matched identity word (else 无明确对象), category from "
        "that word's list; cntp spans = offsets of the matched keywords. Shows the lexical-cue failure on "
        "quotation, rebuttal and neutral mention.",
        "rule-based keyword matching",
        "zero training; fixed word lists",
    ),
    BaselineInfo(
        "char-ngram",
        "Character 1-3-gram TF-IDF + logistic regression (scikit-learn), one classifier per discrete field "
        "(VARM) or for the label (ToxiTrace). VARM fields are made mutually consistent (label decides "
        "stance and category families); target = the train target mention found in the text with the highest "
        "train "
        "precision. cntp spans = merged positions of the most positively weighted n-grams. ToxiTrace "
        "explanations: char_scores = each character's share of the logit (n-gram weight x TF-IDF value), "
        "masked probabilities = the same model on the masked texts.",
        "char n-gram TF-IDF + LogisticRegression",
        "supervised on demo train; dev/test never used for fitting",
    ),
    BaselineInfo(
        "char-ngram-random",
        "The char-ngram model's labels and probabilities with RANDOM char_scores (uniform, seeded per item "
        "id; no spans, so spans are derived from the scores): the chance level of attribution AUPRC, "
        "comprehensiveness and sufficiency. ToxiTrace tracks only.",
        "char n-gram TF-IDF + LogisticRegression, random attributions",
        "supervised on demo train; attributions random (seed 17)",
        TOXITRACE_TRACKS,
    ),
)
