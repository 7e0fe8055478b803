"""`POST /api/v1/hooks/hub`: the Hub's repository webhook says the results repo changed (issue 29.3).

Configure a webhook on the results dataset (Hub settings → Webhooks, "Repo update") with this URL and the
secret in `WEBHOOK_SECRET`. The Hub sends the secret as it is in `X-Webhook-Secret` (no signature), so it is
compared in constant time before the body is even parsed. A genuine update of the results repo makes the next
read of the head go to the Hub; everything else is answered and ignored. Without `WEBHOOK_SECRET` the route
answers 404: a deployment that configured none polls the head (`HEAD_POLL_SECONDS`) and hears its own
workers (worker/head_signal.py).
"""

from __future__ import annotations

import hmac
import logging

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from worker.config import Config
from worker.service import Service

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 256 * 1024  # a repo update's payload is about 1 kB


def router(service: Service, config: Config) -> APIRouter:
    routes = APIRouter(prefix="/api/v1", tags=["hooks"])

    @routes.post(
        "/hooks/hub",
        summary="The Hub's repository webhook (secret in X-Webhook-Secret)",
        responses={401: {"description": "missing or wrong secret"}, 404: {"description": "not enabled"}},
    )
    async def hub_webhook(request: Request) -> JSONResponse:
        secret = config.webhook_secret
        if not secret:
            return JSONResponse({"detail": "webhooks are not enabled here (WEBHOOK_SECRET)"}, status_code=404)
        given = request.headers.get("x-webhook-secret", "")
        if not hmac.compare_digest(given.encode(), secret.encode()):
            log.warning("webhook refused: wrong or missing X-Webhook-Secret")
            return JSONResponse({"detail": "missing or wrong X-Webhook-Secret"}, status_code=401)
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return JSONResponse({"detail": "payload too large"}, status_code=413)
        from huggingface_hub import WebhookPayload

        try:
            payload = WebhookPayload.model_validate_json(body)
        except ValidationError as exc:
            return JSONResponse({"detail": f"not a Hub webhook payload ({exc.error_count()} problems)"}, 422)
        ours = payload.repo.type == "dataset" and payload.repo.name == config.hf_results_repo
        if ours and payload.event.scope.startswith("repo"):
            service.head_moved()
            return JSONResponse({"refreshed": True})
        return JSONResponse({"refreshed": False, "detail": "not an update of the results repo; ignored"})

    return routes
