"""The service's answers (worker/errors.py) as the UI says them, in the page's language: said once, here.

Each answer carries a key (its kind's, or the raise site's more precise one) and the values that fill it;
the REST API keeps the English message as `detail`."""

from __future__ import annotations

from worker.errors import QuotaExceeded, ServiceError

from .i18n import TEXT, t


def answer_text(exc: ServiceError, lang: str = "zh") -> str:
    """`exc` in `lang`; an answer without a text of its own falls back to its kind's, never to English on a
    Chinese page."""
    if isinstance(exc, QuotaExceeded):
        return t("quota_exceeded", lang, at=exc.next_slot_at)
    key = f"err_{exc.key}"
    if key in TEXT:
        try:
            return t(key, lang, **exc.params)
        except KeyError:  # a text naming a value this raise site does not give: the kind's text
            pass
    for kind in type(exc).__mro__:
        fallback = f"err_{getattr(kind, 'key', '')}"
        if fallback in TEXT and fallback != key:
            return t(fallback, lang)
    return t("err_service_error", lang)
