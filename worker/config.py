"""Process configuration, read once from the environment (`Config.from_env()`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

AREAS = ("references", "submissions", "results")
PRIVATE_AREAS = frozenset({"references", "submissions"})
STORE_KINDS = ("local", "hub")
AUTH_MODES = ("hub", "token", "open")
SANDBOX_MODES = ("off", "auto", "require")


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


def _opt_int(env: Mapping[str, str], name: str) -> int | None:
    return _int(env, name, 0) if env.get(name, "").strip() else None


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if raw not in ("0", "1"):
        raise ValueError(f"{name} must be 0 or 1, got {raw!r}")
    return raw == "1"


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
    hf_commits_per_hour: int = 128  # the Hub's commit limit per repository (worker/store/budget.py)
    hf_commit_window: float = 3600.0  # ...and its window in seconds (smaller: time-compressed benchmarks)
    # Reserved for the pipeline (worker/ and space/).
    celery_broker_url: str | None = None  # None: the pipeline picks its default
    port: int = 7860
    quota_per_day: int = 5
    attempts_per_day: int = 30
    maintainers: tuple[str, ...] = ()
    # Browser origins allowed to call the service (space/origins.py): CORS_ORIGINS and the Space's own.
    cors_origins: tuple[str, ...] = ()
    stuck_after_seconds: int = 30
    # The complete leaderboard.json/.parquet exports are rebuilt at most this late after a change (and once
    # 10 % of the rows changed); the live board is current at every publish (worker/live_board.py).
    export_every_seconds: float = 600.0
    # Read here so that every variable is checked (and named) at start-up; see README "Configuration".
    host: str = "0.0.0.0"
    auth: str | None = None  # None: "hub" with STORE=hub, else "token" (space/auth.py)
    task_soft_time_limit: int = 300
    task_time_limit: int | None = None  # None: soft + 60
    celery_key_prefix: str = ""
    celery_visibility_timeout: int | None = None  # None: twice the hard time limit
    work_slots: int = 4  # uploads/validations processed at once by one web process
    work_memory_mb: int = 400  # ...whose estimated memory (worker/slots.py) may not exceed this together
    work_queue_seconds: float = 10.0  # how long a request waits for a slot before a 503
    worker_restart_max_delay: float = 30.0  # embedded worker: longest back-off between restarts
    min_free_disk_mb: int = 200  # below this on the data disk, uploads get 507 and health is degraded
    gold_match_hold: float = 0.99  # a public test's upload agreeing this much with its labels is held (§5)
    # SIGTERM (remapped to Celery's cold shutdown): running tasks get this long to finish, then are cancelled
    # and requeued. Well below the platform's stop grace (docker's default is 10 s; the cold shutdown itself
    # takes a second or two more) so nothing is SIGKILLed. An idle worker stops at once.
    worker_soft_shutdown_timeout: float = 5.0
    # With the Hub as store, how often the web process re-reads the results head when nothing told it the head
    # moved (a worker's announcement over Redis, the Hub's webhook): the fallback poll. The local store's head
    # is a file, read on every request.
    head_poll_seconds: float = 30.0
    webhook_secret: str | None = field(default=None, repr=False)  # the Hub webhook's X-Webhook-Secret
    # The web process's Landlock boundary (space/sandbox.py): "auto" restricts it when the kernel allows and
    # no embedded worker runs in it, "require" refuses to start otherwise. The Docker image sets "auto".
    web_sandbox: str = "off"

    @property
    def hard_time_limit(self) -> int:
        return self.task_time_limit if self.task_time_limit is not None else self.task_soft_time_limit + 60

    # Web process: Gradio upload and export files are deleted once older than this, and new uploads are
    # refused while the upload folder holds more than `ui_files_max_bytes`.
    ui_file_ttl_seconds: int = 900
    ui_files_max_bytes: int = 2 * 1024**3
    seed_demo: bool = True  # embedded start-up seeds the synthetic demo (SEED_DEMO=0: no demo)

    def __post_init__(self) -> None:  # noqa: C901
        if self.store not in STORE_KINDS:
            raise ValueError(f"STORE must be one of {', '.join(STORE_KINDS)}, got {self.store!r}")
        if not self.hf_http_timeout > 0:
            raise ValueError(f"HF_HTTP_TIMEOUT must be > 0, got {self.hf_http_timeout!r}")
        if self.hf_retry_attempts < 1:
            raise ValueError(f"HF_RETRY_ATTEMPTS must be >= 1, got {self.hf_retry_attempts!r}")
        if not self.hf_retry_base_delay >= 0:
            raise ValueError(f"HF_RETRY_BASE_DELAY must be >= 0, got {self.hf_retry_base_delay!r}")
        for name, value, low in (
            ("PORT", self.port, 1),
            ("QUOTA_PER_DAY", self.quota_per_day, 0),
            ("ATTEMPTS_PER_DAY", self.attempts_per_day, 0),
            ("STUCK_AFTER_SECONDS", self.stuck_after_seconds, 1),
            ("EXPORT_EVERY_SECONDS", self.export_every_seconds, 0),
            ("HF_COMMITS_PER_HOUR", self.hf_commits_per_hour, 1),
            ("HF_COMMIT_WINDOW", self.hf_commit_window, 1),
            ("TASK_SOFT_TIME_LIMIT", self.task_soft_time_limit, 1),
            ("TASK_TIME_LIMIT", self.hard_time_limit, self.task_soft_time_limit),
            ("CELERY_VISIBILITY_TIMEOUT", self.celery_visibility_timeout or self.hard_time_limit, 1),
            ("WORK_SLOTS", self.work_slots, 1),
            ("WORK_MEMORY_MB", self.work_memory_mb, 1),
            ("WORK_QUEUE_SECONDS", self.work_queue_seconds, 0),
            ("WORKER_RESTART_MAX_DELAY", self.worker_restart_max_delay, 1),
            ("MIN_FREE_DISK_MB", self.min_free_disk_mb, 0),
            ("WORKER_SOFT_SHUTDOWN_TIMEOUT", self.worker_soft_shutdown_timeout, 0),
            ("HEAD_POLL_SECONDS", self.head_poll_seconds, 1),
            ("UI_FILE_TTL_SECONDS", self.ui_file_ttl_seconds, 1),
            ("UI_FILES_MAX_BYTES", self.ui_files_max_bytes, 1),
        ):
            if value < low:
                raise ValueError(f"{name} must be >= {low}, got {value!r}")
        if self.port > 65535:
            raise ValueError(f"PORT must be <= 65535, got {self.port!r}")
        if not 0 < self.gold_match_hold <= 1:
            raise ValueError(f"GOLD_MATCH_HOLD must be in (0, 1], got {self.gold_match_hold!r}")
        if self.auth is not None and self.auth not in AUTH_MODES:
            raise ValueError(f"AUTH must be one of {', '.join(AUTH_MODES)}, got {self.auth!r}")
        if self.web_sandbox not in SANDBOX_MODES:
            modes = ", ".join(SANDBOX_MODES)
            raise ValueError(f"WEB_SANDBOX must be one of {modes}, got {self.web_sandbox!r}")

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
            hf_commits_per_hour=_int(env, "HF_COMMITS_PER_HOUR", 128),
            hf_commit_window=_float(env, "HF_COMMIT_WINDOW", 3600.0),
            celery_broker_url=_opt(env, "CELERY_BROKER_URL"),
            port=_int(env, "PORT", 7860),
            quota_per_day=_int(env, "QUOTA_PER_DAY", 5),
            attempts_per_day=_int(env, "ATTEMPTS_PER_DAY", 30),
            maintainers=maintainers,
            cors_origins=_origins(env),
            stuck_after_seconds=_int(env, "STUCK_AFTER_SECONDS", 30),
            export_every_seconds=_float(env, "EXPORT_EVERY_SECONDS", 600.0),
            host=_opt(env, "HOST") or "0.0.0.0",
            auth=(_opt(env, "AUTH") or "").lower() or None,
            task_soft_time_limit=_int(env, "TASK_SOFT_TIME_LIMIT", 300),
            task_time_limit=_opt_int(env, "TASK_TIME_LIMIT"),
            celery_key_prefix=env.get("CELERY_KEY_PREFIX", "").strip(),
            celery_visibility_timeout=_opt_int(env, "CELERY_VISIBILITY_TIMEOUT"),
            work_slots=_int(env, "WORK_SLOTS", 4),
            work_memory_mb=_int(env, "WORK_MEMORY_MB", 400),
            work_queue_seconds=_float(env, "WORK_QUEUE_SECONDS", 10.0),
            worker_restart_max_delay=_float(env, "WORKER_RESTART_MAX_DELAY", 30.0),
            min_free_disk_mb=_int(env, "MIN_FREE_DISK_MB", 200),
            gold_match_hold=_float(env, "GOLD_MATCH_HOLD", 0.99),
            worker_soft_shutdown_timeout=_float(env, "WORKER_SOFT_SHUTDOWN_TIMEOUT", 5.0),
            head_poll_seconds=_float(env, "HEAD_POLL_SECONDS", 30.0),
            webhook_secret=_opt(env, "WEBHOOK_SECRET"),
            web_sandbox=(_opt(env, "WEB_SANDBOX") or "off").lower(),
            ui_file_ttl_seconds=_int(env, "UI_FILE_TTL_SECONDS", 900),
            ui_files_max_bytes=_int(env, "UI_FILES_MAX_BYTES", 2 * 1024**3),
            seed_demo=_flag(env, "SEED_DEMO", True),
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


def _origins(env: Mapping[str, str]) -> tuple[str, ...]:
    """CORS_ORIGINS (comma-separated `scheme://host[:port]`) plus `https://<host>` for each SPACE_HOST (a
    Space's own address; comma-separated when it has a custom domain)."""
    given = [o.strip().rstrip("/") for o in env.get("CORS_ORIGINS", "").split(",") if o.strip()]
    for origin in given:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
            raise ValueError(f"CORS_ORIGINS: {origin!r} is not an origin like https://example.org")
    hosts = [h.strip() for h in env.get("SPACE_HOST", "").split(",") if h.strip()]
    return tuple(dict.fromkeys([*given, *(f"https://{h}" for h in hosts)]))
