"""Character n-gram baseline: char 1–3-gram TF-IDF + logistic regression, fitted on the demo train split.

VARM: one classifier per discrete field on shared features. The six predicted fields are then made
mutually consistent (the protocol rejects inconsistent records, and a baseline should lose points on
content, not on format): the label decides whether stance/category come from the attack or the
non-attack values, and the target comes from a list of target mentions seen in train. ToxiTrace: one
label classifier; cntp spans are the merged positions of the most positively weighted n-grams.

Explanations (spec §3): each character's score is its share of the model's logit -- every n-gram
occurrence's term ``w_g · x_g`` (weight times TF-IDF value, split evenly over the occurrences of g) spread
evenly over the n characters it covers -- so the scores sum to the logit minus the intercept. The masked
probabilities come from running the same model on the masked texts the scorer defines
(``scoring.toxitrace.masking``). The random-attribution variant keeps the model's labels and ``prob`` but
draws the scores uniformly from a seed fixed per item id: the chance level of the faithfulness metrics.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from baselines.rationale import render
from scoring.toxitrace.explanations_input import quantise
from scoring.toxitrace.masking import VARIANTS, masked_texts

NO_TARGET = "无明确对象"
DISCRETE = ("target_type", "target_explicitness", "stance", "label", "category")
MAX_SPAN_NGRAMS = 3  # top positive n-grams turned into spans per toxic row
RANDOM_ATTRIBUTION_SEED = 17  # the random-attribution variant's scores: default_rng([seed, hash of the id])
SCORE_DECIMALS = 4  # char_scores and probabilities are rounded so files are stable across BLAS builds
PROB_DECIMALS = 6


def _vectorizer() -> TfidfVectorizer:
    return TfidfVectorizer(analyzer="char", ngram_range=(1, 3), sublinear_tf=True)


def _classifier() -> LogisticRegression:
    # newton-cg: deterministic and ~10x faster than lbfgs here (lbfgs spends seconds inside scipy's
    # L-BFGS-B on these 9k-feature multinomial problems). C=4: small vocabulary, sparse features.
    return LogisticRegression(C=4.0, solver="newton-cg", max_iter=1000)


class VarmNgram:
    """Per-field classifiers plus a target-mention picker."""

    def __init__(self, train: list[dict]):
        texts = [r["text"] for r in train]
        self.vectorizer = _vectorizer().fit(texts)
        features = self.vectorizer.transform(texts)
        self.models = {f: _classifier().fit(features, [r[f] for r in train]) for f in DISCRETE}
        self.candidates = self._target_precision(train)

    @staticmethod
    def _target_precision(train: list[dict]) -> list[tuple[str, float]]:
        """Train target mentions with P(mention is the target | mention occurs in the text), best first."""
        as_target = Counter(
            r["target"] for r in train if r["target"] != NO_TARGET and r["target"] in r["text"]
        )
        scored = []
        for mention, hits in as_target.items():
            occurs = sum(mention in r["text"] for r in train)
            scored.append((mention, hits / occurs))
        return sorted(scored, key=lambda x: (-x[1], -len(x[0]), x[0]))

    def _pick_target(self, text: str) -> str | None:
        return next((m for m, _ in self.candidates if m in text), None)

    def _best(self, field: str, probs: np.ndarray, allowed: tuple[str, ...]) -> str:
        classes = list(self.models[field].classes_)
        options = [(probs[classes.index(v)], v) for v in allowed if v in classes]
        return max(options, key=lambda x: (x[0], x[1]))[1]

    def predict_many(self, texts: list[str]) -> list[str]:
        """Protocol-valid rationales for many texts (one batched transform/predict per field)."""
        x = self.vectorizer.transform(texts)
        probs = {f: self.models[f].predict_proba(x) for f in DISCRETE}
        return [self._rationale(text, {f: p[k] for f, p in probs.items()}) for k, text in enumerate(texts)]

    def _rationale(self, text: str, probs: dict[str, np.ndarray]) -> str:
        label = self._best("label", probs["label"], ("有害", "无害"))
        if label == "有害":
            stance = "攻击或认同"
            category = self._best(
                "category",
                probs["category"],
                ("一般辱骂", "地域族群攻击", "性别攻击", "性少数攻击", "阶层职业攻击", "身心疾病攻击"),
            )
        else:
            stance = self._best("stance", probs["stance"], ("反对攻击", "引用或转述", "中性提及"))
            category = "非攻击"
        target_type = self._best("target_type", probs["target_type"], ("单一对象", "群体对象", NO_TARGET))
        target = self._pick_target(text) if target_type != NO_TARGET else None
        if target is None:  # no mention found: the record must then say "no target" in all three fields
            target, target_type, explicitness = NO_TARGET, NO_TARGET, NO_TARGET
        else:
            explicitness = self._best("target_explicitness", probs["target_explicitness"], ("明示", "隐含"))
        record = {
            "target": target,
            "target_type": target_type,
            "target_explicitness": explicitness,
            "stance": stance,
            "label": label,
            "category": category,
        }
        return render("ngram", record, "”“".join(self._evidence(text)))

    def _evidence(self, text: str) -> list[str]:
        """The two multi-character n-grams of the text that push hardest towards the predicted label."""
        model = self.models["label"]
        weights = model.coef_[0] if list(model.classes_)[1] == "有害" else -model.coef_[0]
        vocab = self.vectorizer.vocabulary_
        grams = {text[i : i + n] for n in (2, 3) for i in range(len(text) - n + 1)}
        scored = sorted(
            ((abs(weights[vocab[g]]), g) for g in grams if g in vocab and g.strip("，。！？…~")),
            key=lambda x: (-x[0], x[1]),
        )
        return [g for _, g in scored[:2]]


class ToxiNgram:
    """Label classifier for a ToxiTrace track; spans from the strongest positive n-grams."""

    def __init__(self, train: list[dict]):
        texts = [r["text"] for r in train]
        self.vectorizer = _vectorizer().fit(texts)
        self.model = _classifier().fit(self.vectorizer.transform(texts), [int(r["label"]) for r in train])
        self.weights = self.model.coef_[0]  # positive = towards label 1

    def predict_many(self, rows: list[dict], with_spans: bool) -> list[dict]:
        """``{"id", "label"}`` (+ ``spans`` when asked) for each input row."""
        labels = self.model.predict(self.vectorizer.transform([r["text"] for r in rows]))
        out = []
        for row, label in zip(rows, labels, strict=True):
            pred: dict = {"id": row["id"], "label": int(label)}
            if with_spans:
                pred["spans"] = self.spans(row["text"]) if label == 1 else []
            out.append(pred)
        return out

    def explain_many(
        self, rows: list[dict], with_spans: bool, *, random_scores: bool = False, inverted: bool = False
    ) -> list[dict]:
        """Predictions with explanations: ``char_scores``, ``prob`` and the six masked probabilities.

        ``random_scores``: the chance-level variant (seeded uniform scores, no spans; labels and ``prob``
        are the model's own, the masked probabilities the model's on the randomly masked texts).
        ``inverted``: the anti-faithful variant (the model's scores negated, no spans, the masked
        probabilities the model's on the texts masked by that ranking), which a faithfulness metric must
        rank below random (bench/bench_explanations.py).
        """
        texts = [r["text"] for r in rows]
        features = self.vectorizer.transform(texts)
        if random_scores:
            scores = [random_char_scores(r["id"], len(r["text"])) for r in rows]
        else:
            scores = [self.char_scores(text, features[k]) for k, text in enumerate(texts)]
        if inverted:
            scores = [[-v for v in s] for s in scores]
        if random_scores or inverted:
            out = [{"id": p["id"], "label": p["label"]} for p in self.predict_many(rows, with_spans=False)]
        else:
            out = self.predict_many(rows, with_spans)
        for pred, prob in zip(out, self._toxic_probs(features), strict=True):
            pred["prob"] = prob
        # The scorer masks on the quantised scores and the predicted label (§3); so must the model run here.
        scores = [quantise(s).tolist() for s in scores]
        masked = [masked_texts(text, s, p["label"]) for text, s, p in zip(texts, scores, out, strict=True)]
        for variant in VARIANTS:
            probs = self._toxic_probs(self.vectorizer.transform([m[variant] for m in masked]))
            for pred, prob in zip(out, probs, strict=True):
                pred[f"prob_{variant}"] = prob
        for pred, s in zip(out, scores, strict=True):
            pred["char_scores"] = s
        return out

    def _toxic_probs(self, features) -> list[float]:
        return [round(float(p), PROB_DECIMALS) for p in self.model.predict_proba(features)[:, 1]]

    def char_scores(self, text: str, features) -> list[float]:
        """Each character's share of the logit (see the module docstring); ``features``: the text's row."""
        analyzer = self.vectorizer.build_analyzer()
        occurrences = Counter(analyzer(text))
        lowered = text.lower()  # the vectorizer lower-cases; positions are unchanged by str.lower here
        vocab, row = self.vectorizer.vocabulary_, features.toarray()[0]
        scores = np.zeros(len(text), dtype=np.float64)
        if len(lowered) != len(text):  # a character whose lower case is longer: no aligned n-grams
            return [0.0] * len(text)
        for n in (1, 2, 3):
            for i in range(len(text) - n + 1):
                gram = lowered[i : i + n]
                if gram in vocab and occurrences[gram]:
                    scores[i : i + n] += self.weights[vocab[gram]] * row[vocab[gram]] / occurrences[gram] / n
        return [round(float(s), SCORE_DECIMALS) + 0.0 for s in scores]  # + 0.0: no "-0.0" in files

    def spans(self, text: str) -> list[list[int]]:
        """Merge the positions of the top positive 2–3-grams into ``[start, end)`` spans."""
        vocab = self.vectorizer.vocabulary_
        scored = []
        for n in (2, 3):
            for i in range(len(text) - n + 1):
                gram = text[i : i + n]
                if gram in vocab and self.weights[vocab[gram]] > 0:
                    scored.append((-self.weights[vocab[gram]], i, n))
        covered = sorted({p for _, i, n in sorted(scored)[:MAX_SPAN_NGRAMS] for p in range(i, i + n)})
        spans: list[list[int]] = []
        for p in covered:
            if spans and spans[-1][1] == p:
                spans[-1][1] = p + 1
            else:
                spans.append([p, p + 1])
        return spans


def random_char_scores(row_id: str, length: int) -> list[float]:
    """Uniform scores from a seed fixed per id, so a row's scores do not depend on the file order."""
    item = int.from_bytes(hashlib.sha256(row_id.encode("utf-8")).digest()[:8], "big")
    rng = np.random.default_rng([RANDOM_ATTRIBUTION_SEED, item])
    return [round(float(x), SCORE_DECIMALS) for x in rng.random(length)]
