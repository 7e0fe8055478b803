"""HubStore: each area is a dataset repo on a Hugging Face Hub (or on tests/fakehub.py).

Only this module imports huggingface_hub, and only when a HubStore is built or `import_client` runs (a
Celery worker's, before it forks its pool), so set HF_ENDPOINT and HF_HOME in the environment before that
(huggingface_hub reads them at import); the endpoint and token are also passed explicitly to the one HfApi
each store owns.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import logging
import random
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from worker.config import AREAS, PRIVATE_AREAS, Config
from worker.store.base import (
    ConflictError,
    StoreError,
    check_area,
    check_ops,
    check_path,
    check_prefix,
    check_revision,
)
from worker.store.budget import CommitBudget, FileLedger, Ledger, Policy, RedisLedger
from worker.store.claims import Claims
from worker.store.outage import HubGate

T = TypeVar("T")
log = logging.getLogger(__name__)
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
NONCE_KEY = "store-commit-id:"


def _failure(exc: BaseException) -> BaseException:
    """The error to judge a failed call by: huggingface_hub wraps a failed LFS upload (the storage's 503, a
    dropped connection) in `RuntimeError("Error while uploading ...")` raised from the HTTP error, which
    alone says whether another attempt may succeed."""
    if type(exc) is RuntimeError and exc.__cause__ is not None:
        return exc.__cause__
    return exc


def _rate_limit_window(exc: BaseException) -> float | None:
    """Seconds until the Hub's rate-limit window resets, from a 429's headers (None: not a 429 that says)."""
    response = getattr(_failure(exc), "response", None)
    if getattr(response, "status_code", None) != 429:
        return None
    from huggingface_hub.utils import parse_ratelimit_headers

    headers = getattr(response, "headers", None) or {}
    info = parse_ratelimit_headers(headers)
    if info is not None and info.remaining == 0:
        return float(info.reset_in_seconds)
    retry_after = str(headers.get("retry-after", "")).strip()
    return float(retry_after) if retry_after.isdigit() else None


def _status(exc: BaseException) -> int | None:
    response = getattr(_failure(exc), "response", None)
    return getattr(response, "status_code", None)


def _one_retry_layer() -> None:
    """huggingface_hub's `http_backoff` (commits, listings, LFS) retries 429 and 5xx five times with its own
    waits; under our gate that multiplied the retries and held an upload for minutes during a Hub outage.
    Its callers take the defaults, so a single default makes the gate the only retry layer."""
    from huggingface_hub.utils import _http

    for fn in (_http.http_backoff, _http.http_stream_backoff):
        if fn.__kwdefaults__ is not None and "max_retries" in fn.__kwdefaults__:
            fn.__kwdefaults__["max_retries"] = 0


def import_client() -> None:
    """Import the parts of huggingface_hub a HubStore uses (HfApi, downloads, commits): its package
    imports them lazily, on the first use. Imports only: no client, no connection (a forked child must
    not share a parent's sockets)."""
    import huggingface_hub._commit_api
    import huggingface_hub.file_download
    import huggingface_hub.hf_api  # noqa: F401


_HTTP_TIMEOUT: list[float] = []  # process-wide, because huggingface_hub shares one HTTP client


def set_http_timeout(seconds: float) -> None:
    """Give huggingface_hub's shared HTTP client a timeout; 2.4.0 creates it with none, so a Hub that
    stops answering would block a worker forever. Process-wide; a no-op when already `seconds`.
    (Downloads keep their own per-request timeouts, HF_HUB_ETAG_TIMEOUT / HF_HUB_DOWNLOAD_TIMEOUT.)"""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils import _http  # the default factory carries the hub's request hooks

    if _HTTP_TIMEOUT == [seconds]:
        return

    def factory() -> httpx2.Client:
        client = _http.default_client_factory()
        client.timeout = httpx2.Timeout(seconds)
        return client

    set_client_factory(factory)
    _HTTP_TIMEOUT[:] = [seconds]


def _normalize_etag(etag: str | None) -> str | None:
    """An ETag header's value without its quotes and weak marker (as huggingface_hub reads it)."""
    if not etag:
        return None
    return etag.removeprefix("W/").strip('"') or None


def _visible(path: str) -> bool:
    """Hide Hub housekeeping files (.gitattributes) that the store's path rules never produce."""
    return not any(seg.startswith(".") for seg in path.split("/"))


_COMMIT_SHA = re.compile(r"[0-9a-f]{40}")
PATHS_INFO_BATCH = 100  # paths named in one paths-info request
_SHA256 = re.compile(r"[0-9a-f]{64}")


def git_blob_oid(data: bytes) -> str:
    """The git object id of a file's bytes: what the Hub's ETag (and a tree listing's oid) names for a
    file kept in git (not LFS)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def _content_matches(oid: str, data: bytes) -> bool:
    """Do `data` hash to `oid` (a git blob id, or an LFS file's sha256)? Anything else: no."""
    if _COMMIT_SHA.fullmatch(oid):
        return git_blob_oid(data) == oid
    if _SHA256.fullmatch(oid):
        return hashlib.sha256(data).hexdigest() == oid
    return False


MAX_CARRY = 64  # own commits a lookup follows back to a parent where the path was read
MAX_LINKS = 1024  # own commits' links kept (each holds the paths that commit wrote)


class ReadCache:
    """What a HubStore has read, in this process's memory only (never on disk: a worker's copy of the
    references stays out of any folder the web process could open):

    - `blobs`: file bytes by content id (the Hub's ETag: the git blob id of the bytes, checked against them
      before they are kept), least recently used first out past `max_bytes`;
    - `files`: what a commit holds at a path, (repo, commit sha, path) -> content id, or None for no such
      file. A commit never changes, so an answer for a commit sha is final; a branch name is never a key.

    A read at a commit sha that `files` knows costs no request; any other read is one GET whose headers
    name the commit and the content id, so a file whose bytes are already here is not downloaded again
    when it is large. A file is answered only from the content id the Hub (or this process's own commit)
    gave for that very commit and path, so a changed file is never answered with the old bytes. This
    process's own commit made on a named parent (`carry`) also inherits what is known at that parent for
    every path it did not write or delete: the Hub applied it on exactly that parent (412 otherwise)."""

    def __init__(
        self,
        max_bytes: int = 64 << 20,
        max_blob: int = 16 << 20,
        max_files: int = 50_000,
        reuse_over: int = 1 << 18,
    ) -> None:
        self.max_bytes, self.max_blob, self.max_files = max_bytes, max_blob, max_files
        self.reuse_over = reuse_over  # a cached file at least this large is not downloaded again
        self.blobs: OrderedDict[str, bytes] = OrderedDict()
        self.files: OrderedDict[tuple[str, str, str], str | None] = OrderedDict()
        # (repo, own commit) -> (its parent, the paths it wrote or deleted): see `carry`.
        self.links: OrderedDict[tuple[str, str], tuple[str, frozenset[str]]] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def lookup(self, repo: str, commit: str, path: str) -> tuple[bool, bytes | None]:
        """(known, bytes): (True, None) when the commit holds no such file, (False, None) when unknown."""
        with self.lock:
            key = self._entry(repo, commit, path)
            if key is None:
                return False, None
            oid = self.files[key]
            self.files.move_to_end(key)
            if oid is None:
                return True, None
            data = self.blobs.get(oid)
            if data is None:
                return False, None
            self.blobs.move_to_end(oid)
            return True, data

    def blob(self, oid: str | None) -> bytes | None:
        if not oid:
            return None
        with self.lock:
            data = self.blobs.get(oid)
            if data is not None:
                self.blobs.move_to_end(oid)
            return data

    def learn(self, repo: str, commit: str | None, path: str, oid: str | None, data: bytes | None) -> None:
        """`commit` holds `data` (content id `oid`) at `path`, or no file there (`oid` None). Bytes that do
        not hash to `oid` are not kept (nor is the entry: the next read asks the Hub again)."""
        if oid is not None and data is not None and not _content_matches(oid, data):
            return
        with self.lock:
            if commit is not None and _COMMIT_SHA.fullmatch(commit):
                self.files[(repo, commit, path)] = oid
                self.files.move_to_end((repo, commit, path))
                while len(self.files) > self.max_files:
                    self.files.popitem(last=False)
            if oid is None or data is None or len(data) > self.max_blob or oid in self.blobs:
                return
            self.blobs[oid] = data
            self.size += len(data)
            while self.size > self.max_bytes:
                self.size -= len(self.blobs.popitem(last=False)[1])

    def carry(self, repo: str, parent: str, child: str, written: set[str]) -> None:
        """`child` is `parent` with only the paths `written` (added or deleted) changed: what is known at
        `parent` of any other path holds at `child` (no request to learn it again).
        A link, not a copy: a lookup at `child` of a path it did not write follows it to `parent` (at
        most MAX_CARRY links), so a commit costs O(its own paths) whatever this process knows."""
        if not (_COMMIT_SHA.fullmatch(parent) and _COMMIT_SHA.fullmatch(child)):
            return
        with self.lock:
            self.links[(repo, child)] = (parent, frozenset(written))
            while len(self.links) > MAX_LINKS:
                self.links.popitem(last=False)

    def _entry(self, repo: str, commit: str, path: str) -> tuple[str, str, str] | None:
        """The key of `files` that answers `path` at `commit`, directly or through this process's own
        commits' links; None when unknown (the caller holds the lock)."""
        for _ in range(MAX_CARRY + 1):
            key = (repo, commit, path)
            if key in self.files:
                return key
            link = self.links.get((repo, commit))
            if link is None or path in link[1]:
                return None
            commit = link[0]
        return None


class HubStore:
    """Store over three dataset repos: private references and submissions, public results.

    Transient failures (429, 5xx, timeouts, connection errors) are retried `attempts` times with
    exponential backoff from `base_delay` seconds; `timeout` bounds every HTTP request (process-wide).
    A 429 that says when its window resets (`Retry-After`, or `RateLimit: ...;r=0;t=<s>`) is waited out
    instead, without using an attempt, up to `rate_limit_wait` seconds of such waits per call.
    A commit carries a unique id in its description, so a retry after an ambiguous failure (the server
    may have applied it) finds it instead of applying it twice. Pass `parent` for read-modify-write
    commits: a request that hung and lands late then fails with 412 instead of applying again.
    Every commit first takes a slot from `budget` (worker/store/budget.py), which paces commits per repo
    below the Hub's hourly limit; `pace(area)` takes it early, before a read-modify-write reads the head.
    """

    def __init__(  # noqa: PLR0913
        self,
        repos: dict[str, str],
        *,
        endpoint: str,
        token: str | None,
        revision: str = "main",
        areas: Iterable[str] = AREAS,
        cache_dir: Path | str | None = None,
        attempts: int = 5,
        base_delay: float = 1.0,
        timeout: float = 60.0,
        create_repos: bool = True,
        rate_limit_wait: float = 900.0,
        budget: CommitBudget | None = None,
        read_cache: ReadCache | None = None,
    ) -> None:
        from huggingface_hub import HfApi

        self.areas = frozenset(areas)
        for area in self.areas:
            check_area(area, AREAS)
            if not repos.get(area):
                raise StoreError(f"no Hub repo configured for area {area!r} (set HF_{area.upper()}_REPO)")
        self.repos = {area: repos[area] for area in self.areas}  # nothing else is reachable
        self.revision = check_revision(revision)
        self.cache_dir = str(cache_dir) if cache_dir is not None else None
        self.attempts = max(1, attempts)
        self.base_delay = base_delay
        self.rate_limit_wait = rate_limit_wait
        self.budget = budget or CommitBudget()
        # Leases on queued records for batch scoring, shared like the budget (worker/store/claims.py).
        self.claims = Claims(self.budget.ledger, namespace=self.repos.get("submissions", ""))
        self._paced = threading.local()  # areas whose slot this thread took with pace() and has not used
        set_http_timeout(timeout)
        _one_retry_layer()
        self.gate = HubGate(base_delay)  # shared by this store's threads: one back-off, not one per call
        # token=False: never fall back to a token cached by `hf auth login`; only the configured one.
        self.api = HfApi(endpoint=endpoint, token=token or False)
        self.endpoint = endpoint
        self.cache = read_cache or ReadCache()
        if create_repos:
            self.ensure_repos()

    @classmethod
    def from_config(cls, config: Config, areas: Iterable[str] = AREAS, **kwargs) -> HubStore:
        """A HubStore for `config` (token, endpoint, repos, timeout and retries); `kwargs` override."""
        repos = {area: config.repo_for(area) or "" for area in AREAS}
        options = {
            "timeout": config.hf_http_timeout,
            "attempts": config.hf_retry_attempts,
            "base_delay": config.hf_retry_base_delay,
        } | kwargs
        if "budget" not in options:
            policy = Policy(limit=config.hf_commits_per_hour, window=config.hf_commit_window)
            options["budget"] = CommitBudget(_ledger(config), policy)
        return cls(
            repos,
            endpoint=config.hf_endpoint,
            token=config.hf_token,
            revision=config.hf_revision,
            areas=areas,
            **options,
        )

    # -- internals ---------------------------------------------------------------------------------

    def _repo(self, area: str) -> str:
        check_area(area, self.areas)
        return self.repos[area]

    def _classify(self, exc: BaseException) -> str:
        """ "transient" (retry), "ambiguous" (retry, but the server may have acted) or "fatal"."""
        import httpx2
        from huggingface_hub.errors import LocalEntryNotFoundError, RepositoryNotFoundError

        exc = _failure(exc)
        if isinstance(exc, RepositoryNotFoundError):
            return "fatal"
        if isinstance(exc, LocalEntryNotFoundError):
            return "transient"  # hf_hub_download's wrapper around a failed HEAD (5xx or network)
        if type(exc) in (FileNotFoundError, FileExistsError):
            # Threads (or processes) sharing the download cache can race on the same blob or ref file
            # (huggingface_hub#1133, #4306): the next attempt finds the file in place.
            return "transient"
        if isinstance(exc, httpx2.TransportError):
            return "ambiguous"
        status = _status(exc)
        if status == 429:
            return "transient"
        if status in RETRY_STATUS:
            return "ambiguous"
        return "fatal"

    def _translate(self, what: str, exc: BaseException) -> StoreError:
        from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

        if isinstance(exc, StoreError):
            return exc
        if _status(exc) == 412:
            return ConflictError(f"{what}: the branch moved (HTTP 412); re-read and retry")
        if isinstance(exc, RepositoryNotFoundError):
            return StoreError(
                f"{what}: repository not found or not accessible with this token "
                f"(check HF_TOKEN and the repo id)"
            )
        if isinstance(exc, RevisionNotFoundError):
            return StoreError(f"{what}: unknown revision")
        detail = " ".join(str(exc).split())[:500] or type(exc).__name__
        return StoreError(f"{what} failed: {detail}")

    def _wait_for_gate(self, what: str, waited: float) -> float:
        """Wait while the gate is closed (returns the seconds waited), or raise StoreUnavailable at once
        when that would take this call past `rate_limit_wait` seconds of waiting."""
        pending = self.gate.remaining()
        if pending <= 0:
            return 0.0
        if waited + pending > self.rate_limit_wait:
            raise self.gate.closed_error(what)
        # Jittered, so the callers held by one window do not all come back in the same instant.
        pause = pending * random.uniform(1.0, 1.25)
        time.sleep(pause)
        return pause

    def _call(self, what: str, fn: Callable[[], T]) -> T:
        """`fn()` through the gate (worker/store/outage.py), this store's only retry layer: a transient
        failure closes the gate for a back-off (or for the window a 429 names) and the call tries again
        when it opens, `attempts` times; waiting for windows uses no attempt, up to `rate_limit_wait`
        seconds in all. A call that would have to wait longer is refused at once (StoreUnavailable)."""
        attempt, waited = 0, 0.0
        while True:
            waited += self._wait_for_gate(what, waited)
            try:
                value = fn()
            except Exception as exc:
                attempt += self._failed(what, exc, attempt, waited)
                continue
            self.gate.answered()
            return value

    def _failed(self, what: str, exc: Exception, attempt: int, waited: float) -> int:
        """Tell the gate how a request failed, and raise when the call must give up. Returns the attempts
        the failure used: none for a 429 that names its window (waited out: the Hub's are minutes long)."""
        if self._classify(exc) == "fatal":
            self.gate.answered()  # 404, 412, ...: the Hub is up and said no
            raise self._translate(what, exc) from exc
        window = _rate_limit_window(exc)
        if window is not None:
            self.gate.refused("rate-limited", max(window, self.base_delay))
            if waited + window <= self.rate_limit_wait:
                return 0
            raise self._translate(what, exc) from exc
        self.gate.refused("rate-limited" if _status(exc) == 429 else "unavailable", None)
        if attempt == self.attempts - 1:
            raise self._translate(what, exc) from exc
        return 1

    def ensure_repos(self) -> None:
        """Create missing repos (private except results) and refuse a public references/submissions repo."""
        from huggingface_hub.errors import HfHubHTTPError

        for area, repo in self.repos.items():
            private = area in PRIVATE_AREAS
            try:
                self._call(
                    f"create {repo}",
                    functools.partial(
                        self.api.create_repo, repo, repo_type="dataset", private=private, exist_ok=True
                    ),
                )
            except StoreError as exc:
                # A read-only token may not create; that is fine when the repo already exists.
                if not isinstance(exc.__cause__, HfHubHTTPError) or _status(exc.__cause__) not in (401, 403):
                    raise
            info = self._call(
                f"info {repo}", functools.partial(self.api.dataset_info, repo, expand=["private"])
            )
            if private and not info.private:
                raise StoreError(f"refusing to use public repo {repo!r} for private area {area!r}")

    # -- the commit budget -------------------------------------------------------------------------------

    def pace(self, area: str) -> float:
        """Wait for this thread's next commit slot to `area` (the following commit() uses it); returns the
        seconds waited. commit_with_retry calls it before reading the head, so a paced writer does not
        build on a head that moves while it waits."""
        before = time.time()
        slot = self.budget.take(self._repo(area))
        self._paced.__dict__[area] = slot
        return max(0.0, time.time() - before)

    def unpace(self, area: str) -> None:
        """Give back a slot taken with pace() that no commit used (nothing to change)."""
        if area in self._paced.__dict__:
            self.budget.refund(self._repo(area), self._paced.__dict__.pop(area))

    def _slot(self, area: str) -> float | None:
        """The slot for this commit attempt: the one pace() took, else a new one."""
        if area in self._paced.__dict__:
            return self._paced.__dict__.pop(area)
        return self.budget.take(self._repo(area))

    def budget_status(self) -> dict[str, dict]:
        """The commit budget of each repo this store writes: commits in the window, cap, pacing."""
        return {area: self.budget.status(repo) for area, repo in sorted(self.repos.items())}

    def budget_tight(self, area: str) -> bool:
        """Are commits to `area` being paced? (Callers then skip commits they can do without.)"""
        return self.budget.tight(self._repo(area))

    # -- Store interface ---------------------------------------------------------------------------

    def head(self, area: str) -> str:
        repo = self._repo(area)
        # Only the commit: without `expand` the answer lists every file of the repository (`siblings`),
        # megabytes of JSON per call once a board holds thousands of submissions.
        info = self._call(
            f"head of {area}",
            lambda: self.api.dataset_info(repo, revision=self.revision, expand=["sha"]),
        )
        if info.sha is None:  # the Hub always names a revision's commit; a server that does not is broken
            raise StoreError(f"head of {area}: the server named no commit")
        return info.sha

    def read(self, area: str, path: str, revision: str | None = None) -> bytes | None:
        repo = self._repo(area)
        check_path(path)
        rev = check_revision(revision) if revision is not None else self.revision
        known, data = self.cache.lookup(repo, rev, path)
        if known:
            return data
        return self._call(f"read {area}/{path}@{rev}", lambda: self._fetch(repo, path, rev))

    def read_many(
        self, area: str, paths: Iterable[str], revision: str | None = None
    ) -> dict[str, bytes | None]:
        """`read` of each path: those the read cache cannot answer are named in one paths-info request per
        `PATHS_INFO_BATCH` (their content ids), and only the ones whose bytes it does not hold are fetched.
        A quota check reads every record its submitter sent today, at a head that moved since: one request
        and the records that changed, where it was one GET per record."""
        from huggingface_hub import RepoFile

        repo = self._repo(area)
        rev = check_revision(revision) if revision is not None else self.revision
        out: dict[str, bytes | None] = {}
        unknown = []
        for path in dict.fromkeys(paths):
            check_path(path)
            known, data = self.cache.lookup(repo, rev, path)
            if known:
                out[path] = data
            else:
                unknown.append(path)
        if len(unknown) < 2:  # one GET costs no more than one paths-info
            return out | {path: self.read(area, path, revision) for path in unknown}
        for start in range(0, len(unknown), PATHS_INFO_BATCH):
            batch = unknown[start : start + PATHS_INFO_BATCH]
            infos = self._call(
                f"paths-info {area}@{rev} ({len(batch)} paths)",
                functools.partial(self.api.get_paths_info, repo, batch, revision=rev, repo_type="dataset"),
            )
            files = [info for info in infos if isinstance(info, RepoFile)]  # a folder is no file
            # An LFS file's content id is its sha256 (the git blob id names only its pointer), as `_fetch`
            # keeps it.
            oids = {info.path: info.lfs.sha256 if info.lfs else info.blob_id for info in files}
            for path in batch:
                cached = self.cache.blob(oids.get(path))
                if cached is not None:
                    self.cache.learn(repo, rev, path, oids[path], cached)
                    out[path] = cached
                elif path in oids:
                    out[path] = self.read(area, path, revision)
                else:  # no such file at `rev` (or a folder: not a file either)
                    self.cache.learn(repo, rev, path, None, None)
                    out[path] = None
        return out

    def _fetch(self, repo: str, path: str, rev: str) -> bytes | None:
        """One GET of `path` at `rev` (its headers name the commit and the content id: answered from the
        read cache when it holds those bytes), or None when `rev` holds no such file. A file the Hub
        redirects is in LFS (`_from_cdn`); a large one not in the cache is read with hf_hub_download (its
        disk cache)."""
        from huggingface_hub import hf_hub_url
        from huggingface_hub.errors import RemoteEntryNotFoundError
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

        url = hf_hub_url(repo, path, repo_type="dataset", revision=rev, endpoint=self.endpoint)
        # identity: the ETag and Content-Length are the file's own, as huggingface_hub asks for them
        headers = build_hf_headers(token=self.api.token) | {"Accept-Encoding": "identity"}
        with get_session().stream("GET", url, headers=headers, follow_redirects=False) as response:
            commit = response.headers.get("X-Repo-Commit") or (rev if _COMMIT_SHA.fullmatch(rev) else None)
            if response.status_code >= 400:
                response.read()
                try:
                    hf_raise_for_status(response)
                except RemoteEntryNotFoundError:
                    self.cache.learn(repo, commit, path, None, None)
                    return None
            if response.status_code != 200:  # LFS: the Hub redirects to its CDN
                response.read()
                return self._from_cdn(repo, path, commit, rev, url, response.headers)
            oid = _normalize_etag(response.headers.get("X-Linked-Etag") or response.headers.get("ETag"))
            cached = self.cache.blob(oid)
            length = int(response.headers.get("Content-Length") or 0)
            if cached is not None and length >= self.cache.reuse_over:  # large and known: not fetched again
                self.cache.learn(repo, commit, path, oid, cached)
                return cached
            if cached is None and length > self.cache.max_blob:
                return self._download(repo, path, commit or rev)
            data = response.read()
        if oid is not None:
            self.cache.learn(repo, commit, path, oid, data)
        return data

    def _from_cdn(  # noqa: PLR0913
        self, repo: str, path: str, commit: str | None, rev: str, url: str, headers
    ) -> bytes | None:
        """A file kept in LFS, from the Hub's redirect: it names the CDN's address and the file's sha256
        (X-Linked-Etag). Bytes this process already holds under that sha256 cost nothing more; else one
        GET from the CDN (another host: no Authorization header goes there), used only when it hashes to
        the sha256 (and kept when the read cache takes its size). Also past 16 MB: hf_hub_download would
        ask the Hub again (a HEAD) and write the file to its disk cache. A redirect that does not say goes
        through hf_hub_download."""
        from urllib.parse import urljoin

        from huggingface_hub.utils import get_session, hf_raise_for_status

        sha = _normalize_etag(headers.get("X-Linked-Etag"))
        location = headers.get("Location")
        if not (sha and _SHA256.fullmatch(sha) and location):
            return self._download(repo, path, commit or rev)
        data = self.cache.blob(sha)
        if data is None:
            response = get_session().get(urljoin(url, location), follow_redirects=True)
            hf_raise_for_status(response)
            data = response.content
            if hashlib.sha256(data).hexdigest() != sha:  # torn on the way: ask the library's own path
                return self._download(repo, path, commit or rev)
        self.cache.learn(repo, commit, path, sha, data)
        return data

    def _download(self, repo: str, path: str, rev: str) -> bytes | None:
        from huggingface_hub.errors import RemoteEntryNotFoundError

        try:
            local = self.api.hf_hub_download(
                repo, path, repo_type="dataset", revision=rev, cache_dir=self.cache_dir
            )
        except RemoteEntryNotFoundError:
            return None
        return Path(local).read_bytes()

    def list(self, area: str, prefix: str = "", revision: str | None = None) -> list[str]:
        repo = self._repo(area)
        check_prefix(prefix)
        rev = check_revision(revision) if revision is not None else self.revision
        # The tree below the prefix's folder only: listing the whole repository (list_repo_files) costs a
        # page request per 1,000 files of it, so a publish's small listings grew with the board.
        folder = prefix.rpartition("/")[0]

        def files() -> list[str]:
            from huggingface_hub import RepoFile
            from huggingface_hub.errors import RemoteEntryNotFoundError

            try:
                tree = self.api.list_repo_tree(
                    repo, folder or None, recursive=True, revision=rev, repo_type="dataset"
                )
                return [e.path for e in tree if isinstance(e, RepoFile)]
            except RemoteEntryNotFoundError:  # no such folder (yet)
                return []

        return sorted(
            p
            for p in self._call(f"list {area}/{prefix}@{rev}", files)
            if p.startswith(prefix) and _visible(p)
        )

    def commit(
        self,
        area: str,
        add: dict[str, bytes],
        delete: builtins.list[str],
        message: str,
        parent: str | None = None,
    ) -> str:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete
        from huggingface_hub.errors import RemoteEntryNotFoundError

        repo = self._repo(area)
        check_ops(add, delete)
        if parent is not None:
            check_revision(parent)
        nonce = uuid.uuid4().hex
        what = f"commit to {area}"
        ambiguous, attempt, waited = False, 0, 0.0
        while True:
            waited += self._wait_for_gate(what, waited)
            if ambiguous:
                landed = self._find_landed(area, nonce, parent)
                if landed:
                    return landed
            # Fresh operation objects per attempt: huggingface_hub keeps upload state on them.
            ops: list = [
                CommitOperationAdd(path_in_repo=p, path_or_fileobj=bytes(d)) for p, d in sorted(add.items())
            ]
            ops += [CommitOperationDelete(path_in_repo=p) for p in sorted(delete)]
            slot = self._slot(area)
            try:
                info = self.api.create_commit(
                    repo,
                    ops,
                    commit_message=message,
                    commit_description=f"{NONCE_KEY} {nonce}",
                    repo_type="dataset",
                    revision=self.revision,
                    parent_commit=parent,
                )
                self.budget.landed(repo, slot)
                self.gate.answered()
                self._learn_own_commit(repo, info.oid, add, delete, parent)
                return info.oid
            except Exception as exc:
                if _status(exc) in (412, 429):  # refused before it was applied: the Hub did not count it
                    self.budget.refund(repo, slot)
                else:  # the Hub may have counted it (conservative either way)
                    self.budget.landed(repo, slot)
                if isinstance(exc, RemoteEntryNotFoundError):
                    raise StoreError(f"{what}: cannot delete missing files (among {sorted(delete)})") from exc
                # The commit limit's 429 names its window: waited out like any other.
                attempt += self._failed(what, exc, attempt, waited)
                ambiguous = ambiguous or self._classify(exc) == "ambiguous"

    def _learn_own_commit(
        self, repo: str, revision: str, add: dict[str, bytes], delete: builtins.list[str], parent: str | None
    ) -> None:
        """This process's own commit: its files are known; made on `parent`, so is the rest of its tree."""
        for p, d in add.items():
            self.cache.learn(repo, revision, p, git_blob_oid(bytes(d)), bytes(d))
        for p in delete:
            self.cache.learn(repo, revision, p, None, None)
        if parent is not None:  # the Hub applied it on exactly `parent` (a moved head answers 412)
            self.cache.carry(repo, parent, revision, {*add, *delete})

    def _find_landed(self, area: str, nonce: str, parent: str | None) -> str | None:
        """The id of a commit carrying `nonce` among the newest ones (back to `parent`), if any."""
        for entry in self.history(area, limit=50, full_message=True):
            if NONCE_KEY in entry["message"] and nonce in entry["message"]:
                return entry["revision"]
            if entry["revision"] == parent:
                break
        return None

    def local_snapshot(self, area: str, revision: str | None = None) -> Path:
        repo = self._repo(area)
        sha = check_revision(revision) if revision is not None else self.head(area)
        path = self._call(
            f"snapshot {area}@{sha}",
            lambda: self.api.snapshot_download(
                repo,
                repo_type="dataset",
                revision=sha,
                cache_dir=self.cache_dir,
                ignore_patterns=[".gitattributes"],
            ),
        )
        return Path(path)

    def tag(self, area: str, name: str, revision: str, message: str) -> None:
        repo = self._repo(area)
        check_revision(name)
        check_revision(revision)
        if name not in self.tags(area):
            self._call(  # exist_ok: a 409 from a concurrent tagger is checked below like an older tag
                f"tag {name} of {area}",
                lambda: self.api.create_tag(
                    repo, tag=name, revision=revision, tag_message=message, repo_type="dataset", exist_ok=True
                ),
            )
        existing = self.tags(area).get(name)
        if existing != revision:
            raise ConflictError(f"area {area!r}: tag {name!r} already names {str(existing)[:12]}")

    def tags(self, area: str) -> dict[str, str]:
        repo = self._repo(area)
        refs = self._call(f"tags of {area}", lambda: self.api.list_repo_refs(repo, repo_type="dataset"))
        return {ref.name: ref.target_commit for ref in refs.tags}

    def history(self, area: str, limit: int = 50, full_message: bool = False) -> builtins.list[dict]:
        repo = self._repo(area)
        # list_repo_commits walks every page; fine for the small repos this project keeps.
        commits = self._call(
            f"history of {area}",
            lambda: self.api.list_repo_commits(repo, repo_type="dataset", revision=self.revision),
        )
        return [
            {
                "revision": c.commit_id,
                "message": c.message if full_message else c.title,
                "date": c.created_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
            }
            for c in commits[:limit]
        ]


def _ledger(config: Config) -> Ledger:
    """The widest ledger the configuration allows: the broker's Redis (every machine), else a folder in
    DATA_DIR (the processes of this machine)."""
    url = config.celery_broker_url or ""
    if url.startswith(("redis://", "rediss://")):
        return RedisLedger(url, config.celery_key_prefix)
    return FileLedger(config.data_dir / "hub-budget")
