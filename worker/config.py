"""Process configuration, read once from the environment (`Config.from_env()`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

AREAS = ("references", "submissions", "results")
PRIVATE_AREAS = frozenset({"references", "submissions"})
STORE_KINDS = ("local", "hub")


def _int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {raw!r}") from None


def _float(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None


def _opt(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


@dataclass(frozen=True)
class Config:
    """Everything a web or worker process needs to know about its deployment.

    `store` is "local" (a folder under `data_dir`, the embedded default) or "hub" (three dataset repos).
    Tokens are taken only from here (`HF_TOKEN`, `HF_WEB_TOKEN`), never from a cached `hf auth login`.
    `hf_web_token` (optional) is the web process's token: set it in production to a token that can read
    and write the submissions and results repos but NOT the references repo; unset, the web process uses
    `hf_token` like the workers. `hf_http_timeout` / `hf_retry_attempts` / `hf_retry_base_delay` tune
    HubStore (per-request timeout in seconds, tries per operation, first backoff delay in seconds).
    """

    data_dir: Path = Path("data")
    store: str = "local"
    hf_token: str | None = None
    hf_endpoint: str = "https://huggingface.co"
    hf_references_repo: str | None = None
    hf_submissions_repo: str | None = None
    hf_results_repo: str | None = None
    hf_revision: str = "main"
    hf_web_token: str | None = None
    hf_http_timeout: float = 60.0
    hf_retry_attempts: int = 5
    hf_retry_base_delay: float = 1.0
    # Reserved for the pipeline (worker/ and space/).
    celery_broker_url: str | None = None  # None: the pipeline picks its default
    port: int = 7860
    quota_per_day: int = 5
    attempts_per_day: int = 30
    maintainers: tuple[str, ...] = ()
    stuck_after_seconds: int = 300
    # Web process: Gradio upload and export files are deleted once older than this, and new uploads are
    # refused while the upload folder holds more than `ui_files_max_bytes`.
    ui_file_ttl_seconds: int = 900
    ui_files_max_bytes: int = 2 * 1024**3

    def __post_init__(self) -> None:
        if self.store not in STORE_KINDS:
            raise ValueError(f"STORE must be one of {', '.join(STORE_KINDS)}, got {self.store!r}")
        if not self.hf_http_timeout > 0:
            raise ValueError(f"HF_HTTP_TIMEOUT must be > 0, got {self.hf_http_timeout!r}")
        if self.hf_retry_attempts < 1:
            raise ValueError(f"HF_RETRY_ATTEMPTS must be >= 1, got {self.hf_retry_attempts!r}")
        if not self.hf_retry_base_delay >= 0:
            raise ValueError(f"HF_RETRY_BASE_DELAY must be >= 0, got {self.hf_retry_base_delay!r}")
        if self.ui_file_ttl_seconds < 1:
            raise ValueError(f"UI_FILE_TTL_SECONDS must be >= 1, got {self.ui_file_ttl_seconds!r}")
        if self.ui_files_max_bytes < 1:
            raise ValueError(f"UI_FILES_MAX_BYTES must be >= 1, got {self.ui_files_max_bytes!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        """Build from `env` (default `os.environ`). STORE defaults to "hub" when HF_RESULTS_REPO is set."""
        env = os.environ if env is None else env
        results_repo = _opt(env, "HF_RESULTS_REPO")
        store = (_opt(env, "STORE") or ("hub" if results_repo else "local")).lower()
        maintainers = tuple(m.strip() for m in env.get("MAINTAINERS", "").split(",") if m.strip())
        return cls(
            data_dir=Path(_opt(env, "DATA_DIR") or "data"),
            store=store,
            hf_token=_opt(env, "HF_TOKEN"),
            hf_endpoint=(_opt(env, "HF_ENDPOINT") or "https://huggingface.co").rstrip("/"),
            hf_references_repo=_opt(env, "HF_REFERENCES_REPO"),
            hf_submissions_repo=_opt(env, "HF_SUBMISSIONS_REPO"),
            hf_results_repo=results_repo,
            hf_revision=_opt(env, "HF_REVISION") or "main",
            hf_web_token=_opt(env, "HF_WEB_TOKEN"),
            hf_http_timeout=_float(env, "HF_HTTP_TIMEOUT", 60.0),
            hf_retry_attempts=_int(env, "HF_RETRY_ATTEMPTS", 5),
            hf_retry_base_delay=_float(env, "HF_RETRY_BASE_DELAY", 1.0),
            celery_broker_url=_opt(env, "CELERY_BROKER_URL"),
            port=_int(env, "PORT", 7860),
            quota_per_day=_int(env, "QUOTA_PER_DAY", 5),
            attempts_per_day=_int(env, "ATTEMPTS_PER_DAY", 30),
            maintainers=maintainers,
            stuck_after_seconds=_int(env, "STUCK_AFTER_SECONDS", 300),
            ui_file_ttl_seconds=_int(env, "UI_FILE_TTL_SECONDS", 900),
            ui_files_max_bytes=_int(env, "UI_FILES_MAX_BYTES", 2 * 1024**3),
        )

    def for_web(self) -> Config:
        """This config as the web process should use it: `hf_web_token` (when set) instead of `hf_token`."""
        if self.hf_web_token is None:
            return self
        return replace(self, hf_token=self.hf_web_token)

    def repo_for(self, area: str) -> str | None:
        """The Hub dataset repo id holding `area` (None when not configured)."""
        return {
            "references": self.hf_references_repo,
            "submissions": self.hf_submissions_repo,
            "results": self.hf_results_repo,
        }.get(area)
