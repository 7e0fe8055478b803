"""A small, stdlib-only, in-memory Hugging Face Hub for tests (wire protocol of huggingface_hub 2.4.0).

Implements /work/shared/notes/hub-and-gradio.md §2.2: repo create/delete/info, preupload, ndjson commits
(stale parentCommit -> 412), tree (Link pagination, page size from FAKEHUB_PAGE_SIZE), resolve HEAD/GET
(X-Repo-Commit, ETag, Range), commits, refs, paths-info, whoami-v2, agent-harnesses, and validate-yaml
(called before a README.md is committed; only an unclosed front matter is rejected), and the OpenID
discovery document a Space's OAuth routes fetch (authorize/token endpoints named, not implemented).

Test controls (no auth): POST /_fake/faults {"path_regex", "status", "count", "delay", "method", "after",
"headers"} (headers: sent with an injected status, e.g. Retry-After on a 429)
makes the next `count` matching requests sleep `delay` seconds and/or answer `status` (with "after": true
the request is processed first and its answer replaced, like a response lost after the write landed);
POST /_fake/reset clears faults and counters; GET /_fake/stats gives per-route request counts and
GET /_fake/sent the body bytes answered per route; GET /_fake/busy the seconds spent handling requests per
route (the test server's own cost, which a benchmark of the client can set apart); GET /_fake/reads the file
reads (resolve) by repo and path with ids and numbers as "*";
GET /_fake/commits gives the unix times of the commits made since the last reset, by repo id.

The Hub's commit rate limit (a repository takes 128 commits per hour; the 129th gets 429 with its retry
time) is emulated when FAKEHUB_COMMITS_PER_HOUR is set: more commits than that to one repo within
FAKEHUB_COMMIT_WINDOW seconds (default 3600; smaller to compress time in a benchmark) answer 429 with
`Retry-After`, counted in stats as "429 commit".

Run: python tests/fakehub.py [--port 0] -> prints "FAKEHUB READY http://127.0.0.1:<port>".
Tags: POST /api/<type>s/<repo>/tag/<revision> {"tag", "message"} (409 when the tag exists), listed by refs
and usable as a revision.

LFS (legacy: huggingface_hub with HF_HUB_DISABLE_XET, as worker/process_env.py sets it): preupload
answers "lfs" for a path an LFS rule of the repo's .gitattributes matches (`*.bin` from the start, as in
the Hub's default file) or a file over FAKEHUB_LFS_OVER bytes (default 10 MiB, the Hub's threshold). The
client then asks `POST /<type>s/<repo>.git/info/lfs/objects/batch`, PUTs the bytes to the href it names,
POSTs the verify href, and commits an `lfsFile`. The upload href, and the Location a resolve of an LFS file
redirects to (302 with X-Linked-Etag = the sha256 and X-Linked-Size, as the Hub's CDN redirect), are on
http://localhost:<port>, another host than the endpoint's 127.0.0.1, so the client treats them as a CDN (no
Authorization sent); the verify href is the Hub's own, as on the Hub. Tree and paths-info entries of LFS
files carry the pointer's git oid and an `lfs` object. Stats count "POST lfs-batch", "PUT lfs-upload",
"POST lfs-verify" and "GET lfs-cdn". Not emulated: Xet, PRs, branches other than main.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from bisect import bisect_left, insort
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

TOKENS = {"hf_test_write_token": "tester", "hf_test_other": "other"}
REPO_TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}
GITATTRIBUTES = b"*.bin filter=lfs diff=lfs merge=lfs -text\n"
PAST_ALL = "\U0010ffff"  # sorts after every character a path holds: prefix + PAST_ALL ends prefix's range


def git_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Commit:
    id: str
    parent: str | None
    files: dict[str, bytes]
    title: str
    message: str
    date: str
    author: str
    lfs: frozenset[str] = frozenset()  # the paths kept as LFS pointers
    # Every path in order: a listing or a lookup takes its folder's slice by bisection, as the Hub answers
    # from the folder's own git tree, so the test server's cost does not grow with the repository.
    paths: list[str] = field(default_factory=list)


def folder_span(paths: list[str], folder: str, lo: int = 0, hi: int | None = None) -> tuple[int, int]:
    """The index range of the sorted `paths` below `folder` ("" for all of them)."""
    hi = len(paths) if hi is None else hi
    if not folder:
        return lo, hi
    prefix = folder + "/"
    return bisect_left(paths, prefix, lo, hi), bisect_left(paths, prefix + PAST_ALL, lo, hi)


def holds_folder(commit: Commit, folder: str) -> bool:
    """A file of `commit` lies below `folder` (a path, not "" nor ending in "/")."""
    start, end = folder_span(commit.paths, folder) if folder and not folder.endswith("/") else (0, 0)
    return start < end


def lfs_pointer(data: bytes) -> bytes:
    sha = hashlib.sha256(data).hexdigest()
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(data)}\n".encode()


def lfs_rules(files: dict[str, bytes]) -> list[str]:
    """The patterns .gitattributes sends through LFS (`<pattern> filter=lfs ...`)."""
    lines = files.get(".gitattributes", b"").decode("utf-8", "replace").splitlines()
    return [line.split()[0] for line in lines if "filter=lfs" in line.split()[1:]]


def goes_lfs(files: dict[str, bytes], path: str, size: int) -> bool:
    name = path.rsplit("/", 1)[-1]
    matched = any(fnmatch.fnmatchcase(path if "/" in rule else name, rule) for rule in lfs_rules(files))
    return matched or size > STATE.lfs_over


@dataclass
class Repo:
    type: str  # "model" | "dataset" | "space"
    id: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    main: str = ""
    tags: dict[str, str] = field(default_factory=dict)  # name -> commit id

    def resolve(self, rev: str) -> Commit | None:
        return self.commits.get(self.main if rev == "main" else self.tags.get(rev, rev))


class HubError(Exception):
    def __init__(self, status: int, message: str, code: str | None = None, headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.headers = status, message, code, headers or {}


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.repos: dict[tuple[str, str], Repo] = {}
        self.faults: list[dict] = []
        self.stats: Counter[str] = Counter()
        self.sent: Counter[str] = Counter()  # body bytes answered, by the same routes
        self.busy: Counter[str] = Counter()  # seconds spent handling, by the same routes
        self.read_kinds: Counter[str] = Counter()  # file reads (resolve) by repo and path, ids as "*"
        self.page_size = int(os.environ.get("FAKEHUB_PAGE_SIZE", "1000"))
        self.commit_times: dict[str, list[float]] = {}  # repo id -> unix times of commits since reset
        self.all_commit_times: dict[str, list[float]] = {}  # the same, never reset (the rate limit's)
        limit = os.environ.get("FAKEHUB_COMMITS_PER_HOUR")
        self.commit_limit = int(limit) if limit else None
        self.commit_window = float(os.environ.get("FAKEHUB_COMMIT_WINDOW") or 3600)
        self.lfs_over = int(os.environ.get("FAKEHUB_LFS_OVER") or 10 * 1024 * 1024)
        self.lfs_objects: dict[str, bytes] = {}  # sha256 -> bytes uploaded (kept across commits and repos)

    def check_commit_rate(self, repo_id: str, now: float) -> None:
        """429 with Retry-After when `repo_id` already had `commit_limit` commits in the window (the caller
        holds the lock). Counted from every commit since start, not since reset: the Hub does not forget."""
        if self.commit_limit is None:
            return
        recent = [t for t in self.all_commit_times.get(repo_id, []) if t > now - self.commit_window]
        self.all_commit_times[repo_id] = recent
        if len(recent) >= self.commit_limit:
            self.stats["429 commit"] += 1
            retry = max(1, int(recent[0] + self.commit_window - now + 1))
            raise HubError(
                429,
                f"You have exceeded the rate limit for repository commits "
                f"({self.commit_limit} per hour). You can retry this action in about "
                f"{retry} seconds.",
                headers={"Retry-After": str(retry)},
            )

    def log_commit(self, repo_id: str, now: float) -> None:
        self.commit_times.setdefault(repo_id, []).append(now)
        self.all_commit_times.setdefault(repo_id, []).append(now)

    def new_commit(  # noqa: PLR0913
        self,
        repo: Repo,
        files: dict[str, bytes],
        title: str,
        message: str,
        author: str,
        lfs: frozenset[str] = frozenset(),
        paths: list[str] | None = None,
    ) -> Commit:
        """`paths`: sorted(files) when the caller kept it up to date from the parent's."""
        parent = repo.main or None
        seed = f"{repo.id}\n{parent}\n{time.time_ns()}\n{os.urandom(8).hex()}".encode()
        commit = Commit(
            hashlib.sha1(seed).hexdigest(),
            parent,
            files,
            title,
            message,
            now_iso(),
            author,
            lfs,
            sorted(files) if paths is None else paths,
        )
        repo.commits[commit.id] = commit
        repo.main = commit.id
        return commit

    def take_fault(self, method: str, path: str) -> dict | None:
        with self.lock:
            for fault in self.faults:
                if (
                    fault["count"] > 0
                    and fault.get("method", method) == method
                    and re.search(fault["path_regex"], path)
                ):
                    fault["count"] -= 1
                    return dict(fault)
        return None


STATE = State()


def file_entry(commit: Commit, path: str) -> dict:
    data = commit.files[path]
    if path not in commit.lfs:
        return {"type": "file", "path": path, "size": len(data), "oid": git_oid(data)}
    pointer = lfs_pointer(data)
    lfs = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": len(pointer)}
    return {"type": "file", "path": path, "size": len(data), "oid": git_oid(pointer), "lfs": lfs}


def folder_entry(folder: str) -> dict:
    return {"type": "directory", "path": folder, "oid": hashlib.sha1(folder.encode()).hexdigest()}


def tree_entries(commit: Commit, base: str, recursive: bool) -> list[dict]:
    """Tree listing below folder `base` ("" for the root): files and folders, sorted by path. Without
    `recursive`, a child folder's files are skipped by bisection, not read one by one."""
    prefix = base + "/" if base else ""
    paths = commit.paths
    i, end = folder_span(paths, base)
    entries: dict[str, dict] = {}
    while i < end:
        path = paths[i]
        parts = path[len(prefix) :].split("/")
        for depth in range(1, len(parts) if recursive else min(len(parts), 2)):
            folder = prefix + "/".join(parts[:depth])
            entries[folder] = folder_entry(folder)
        if recursive or len(parts) == 1:
            entries[path] = file_entry(commit, path)
            i += 1
        else:
            i = folder_span(paths, prefix + parts[0], i, end)[1]
    return [entries[k] for k in sorted(entries)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as huggingface_hub's pooled client expects
    disable_nagle_algorithm = True  # TCP_NODELAY: avoids ~40 ms Nagle/delayed-ACK stalls per request
    server_version = "fakehub/1"

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on us (timeout tests); nothing to answer

    def log_message(self, fmt: str, *args) -> None:
        if os.environ.get("FAKEHUB_VERBOSE"):
            super().log_message(fmt, *args)

    # -- plumbing -------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self.dispatch("GET")

    def do_HEAD(self) -> None:
        self.dispatch("HEAD")

    def do_POST(self) -> None:
        self.dispatch("POST")

    def do_DELETE(self) -> None:
        self.dispatch("DELETE")

    def do_PUT(self) -> None:
        self.dispatch("PUT")

    def read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunks = []
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            chunks.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline().strip():  # trailers, up to the empty line
            pass
        return b"".join(chunks)

    def body(self) -> bytes:
        return self._body

    def json_body(self) -> dict:
        return json.loads(self.body() or b"{}")

    def send(
        self, status: int, payload: object = None, headers: dict | None = None, raw: bytes | None = None
    ) -> None:
        data = raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
        self.send_response(status)
        headers = {"Content-Type": "application/json", **(headers or {})}
        for key, value in headers.items():
            self.send_header(key, str(value))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
            if getattr(self, "_route", None):
                with STATE.lock:
                    STATE.sent[self._route] += len(data)

    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{self.headers.get('Host') or f'{host}:{port}'}"

    def user(self) -> str | None:
        """The caller's user name; None when anonymous; 401 for an unknown token."""
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return None
        user = TOKENS.get(auth[7:].strip())
        if user is None:
            raise HubError(401, "Invalid credentials in Authorization header")
        return user

    def dispatch(self, method: str) -> None:
        # One handler instance serves every request of a keep-alive connection: reset per-request state,
        # and always consume the body so the next request starts at the right byte.
        self.__dict__.pop("send", None)
        self._route = None
        self._body = self.read_body()
        split = urlsplit(self.path)
        path, query = split.path, parse_qs(split.query)
        try:
            if path.startswith("/_fake/"):
                return self.admin(method, path)
            route = self._route = self.route_name(method, path)
            began = time.perf_counter()
            with STATE.lock:
                STATE.stats[route] += 1
            fault = STATE.take_fault(method, self.path)
            if fault and fault.get("delay"):
                time.sleep(float(fault["delay"]))
            if fault and fault.get("status") and not fault.get("after"):
                return self.send(
                    int(fault["status"]),
                    {"error": f"injected {fault['status']}"},
                    fault.get("headers") or None,
                )
            if fault and fault.get("status"):
                # Apply the request, then "lose" the answer: the caller sees only the injected status.
                self.send = lambda *a, **k: Handler.send(self, int(fault["status"]), {"error": "injected"})
            self.handle_api(method, path, query)
            with STATE.lock:
                STATE.busy[route] += time.perf_counter() - began
        except HubError as err:
            headers = {"X-Error-Message": err.message, **err.headers}
            if err.code:
                headers["X-Error-Code"] = err.code
            self.send(err.status, {"error": err.message}, headers)
        except Exception as err:  # a bug in the fake: say so loudly rather than hang the client
            self.send(500, {"error": f"fakehub internal error: {err!r}"})

    @staticmethod
    def route_name(method: str, path: str) -> str:
        parts = path.split("/")
        for name in ("resolve", "preupload", "commit", "tree", "commits", "refs", "paths-info", "revision"):
            if name in parts[2:]:
                return f"{method} {name}"
        if path.startswith("/_lfs/"):
            return {"PUT": "PUT lfs-upload", "POST": "POST lfs-verify"}.get(method, f"{method} lfs-cdn")
        if path.endswith(".git/info/lfs/objects/batch"):
            return "POST lfs-batch"
        return f"{method} {path if path.startswith('/api/repos') or path.count('/') <= 2 else 'info'}"

    def admin(self, method: str, path: str) -> None:
        if method == "POST" and path == "/_fake/faults":
            fault = {"count": 1, **self.json_body()}
            re.compile(fault["path_regex"])
            with STATE.lock:
                STATE.faults.append(fault)
            return self.send(200, {"ok": True})
        if method == "POST" and path == "/_fake/reset":
            with STATE.lock:
                STATE.faults.clear()
                STATE.stats.clear()
                STATE.sent.clear()
                STATE.busy.clear()
                STATE.read_kinds.clear()
                STATE.commit_times.clear()
            return self.send(200, {"ok": True})
        if method == "GET" and path == "/_fake/stats":
            with STATE.lock:
                return self.send(200, dict(STATE.stats))
        if method == "GET" and path == "/_fake/sent":
            with STATE.lock:
                return self.send(200, dict(STATE.sent))
        if method == "GET" and path == "/_fake/busy":
            with STATE.lock:
                return self.send(200, dict(STATE.busy))
        if method == "GET" and path == "/_fake/reads":
            with STATE.lock:
                return self.send(200, dict(STATE.read_kinds))
        if method == "GET" and path == "/_fake/commits":
            with STATE.lock:
                return self.send(200, {repo: list(times) for repo, times in STATE.commit_times.items()})
        raise HubError(404, f"unknown admin route {path}")

    # -- the Hub API ----------------------------------------------------------------------------------

    def handle_api(self, method: str, path: str, query: dict[str, list[str]]) -> None:
        parts = [unquote(p) for p in path.split("/")[1:]]  # segments were quoted with safe=""
        if path.startswith("/_lfs/"):
            return self.lfs_storage(method, path)
        if method == "POST" and path.endswith(".git/info/lfs/objects/batch"):
            kind = parts[0] if len(parts) == 7 else "models"
            if len(parts) not in (6, 7) or kind not in REPO_TYPES:
                raise HubError(404, "not found")
            return self.lfs_batch(REPO_TYPES[kind], f"{parts[-6]}/{parts[-5].removesuffix('.git')}")
        if method == "GET" and path == "/.well-known/openid-configuration":  # the Space OAuth's provider
            base = self.base_url()
            return self.send(
                200,
                {
                    "issuer": base,
                    "authorization_endpoint": f"{base}/oauth/authorize",
                    "token_endpoint": f"{base}/oauth/token",
                    "userinfo_endpoint": f"{base}/oauth/userinfo",
                    "jwks_uri": f"{base}/oauth/jwks",
                },
            )
        if method == "GET" and path == "/api/agent-harnesses":
            return self.send(200, {"standardEnvVars": [], "harnesses": {}})
        if method == "GET" and path == "/api/whoami-v2":
            user = self.user()
            if user is None:
                raise HubError(401, "Invalid credentials in Authorization header")
            return self.send(
                200,
                {
                    "type": "user",
                    "name": user,
                    "fullname": user.title(),
                    "email": None,
                    "avatarUrl": "",
                    "orgs": [],
                    "auth": {"type": "access_token"},
                },
            )
        if method == "POST" and path == "/api/validate-yaml":  # sent before committing a README.md
            content = self.json_body().get("content", "")
            if content.startswith("---\n") and "\n---" not in content[3:]:  # the fake checks only this
                return self.send(400, {"errors": [{"message": "unclosed YAML front matter"}], "warnings": []})
            return self.send(200, {"errors": [], "warnings": []})
        if method == "POST" and path == "/api/repos/create":
            return self.create_repo()
        if method == "DELETE" and path == "/api/repos/delete":
            return self.delete_repo()
        if parts[0] == "api" and len(parts) >= 4 and parts[1] in REPO_TYPES:
            repo_type, repo_id, rest = REPO_TYPES[parts[1]], f"{parts[2]}/{parts[3]}", parts[4:]
            return self.repo_api(method, repo_type, repo_id, rest, query)
        if method in ("GET", "HEAD") and "resolve" in parts:
            i = parts.index("resolve")
            kind = parts[0] if i == 3 else "models"
            if i not in (2, 3) or kind not in REPO_TYPES:
                raise HubError(404, "not found")
            raw = path.split("/")[1:]
            return self.resolve(
                REPO_TYPES[kind],
                f"{parts[i - 2]}/{parts[i - 1]}",
                unquote(raw[i + 1]),
                unquote("/".join(raw[i + 2 :])),
            )
        raise HubError(404, f"fakehub: no route for {method} {path}")

    def repo_url(self, repo: Repo) -> str:
        prefix = "" if repo.type == "model" else f"{repo.type}s/"
        return f"{self.base_url()}/{prefix}{repo.id}"

    def repo_for(self, repo_type: str, repo_id: str, write: bool = False) -> Repo:
        user = self.user()
        with STATE.lock:
            repo = STATE.repos.get((repo_type, repo_id))
        owner = repo_id.split("/")[0]
        if repo is None or (repo.private and user != owner):
            status = 401 if user is None else 404
            raise HubError(status, "Repository not found", "RepoNotFound")
        if write and user != owner:
            raise HubError(403, f"You don't have the rights to write to {repo_id}")
        return repo

    def create_repo(self) -> None:
        body, user = self.json_body(), self.user()
        if user is None:
            raise HubError(401, "Invalid credentials in Authorization header")
        owner = body.get("organization") or user
        if owner != user:
            raise HubError(403, f"You don't have the rights to create repos under {owner}")
        repo_type = body.get("type") or "model"
        repo_id = f"{owner}/{body['name']}"
        private = body.get("visibility", "private" if body.get("private") else "public") == "private"
        with STATE.lock:
            existing = STATE.repos.get((repo_type, repo_id))
            if existing is None:
                repo = Repo(repo_type, repo_id, private)
                STATE.new_commit(
                    repo, {".gitattributes": GITATTRIBUTES}, "initial commit", "initial commit", user
                )
                STATE.repos[(repo_type, repo_id)] = repo
        if existing is not None:
            url = self.repo_url(existing)
            return self.send(409, {"error": "You already created this repo", "url": url})
        self.send(200, {"url": self.repo_url(repo), "name": repo_id, "id": repo_id})

    def delete_repo(self) -> None:
        body = self.json_body()
        owner = body.get("organization") or self.user()
        repo = self.repo_for(body.get("type") or "model", f"{owner}/{body['name']}", write=True)
        with STATE.lock:
            STATE.repos.pop((repo.type, repo.id), None)
        self.send(200, {})

    def commit_for(self, repo: Repo, rev: str) -> Commit:
        with STATE.lock:
            commit = repo.resolve(rev)
        if commit is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        return commit

    def repo_api(self, method: str, repo_type: str, repo_id: str, rest: list[str], query: dict) -> None:
        action = rest[0] if rest else ""
        repo = self.repo_for(repo_type, repo_id, write=action in ("commit", "tag"))
        if method == "GET" and action in ("", "revision"):
            commit = self.commit_for(repo, rest[1] if len(rest) > 1 else "main")
            expand = query.get("expand")  # as the Hub: only these properties (and the ids)
            listed = not expand or "siblings" in expand  # every file of the repo: built only when asked
            info = {
                "id": repo.id,
                "_id": repo.id,
                "sha": commit.id,
                "private": repo.private,
                "lastModified": commit.date,
                "siblings": [{"rfilename": p} for p in commit.paths] if listed else [],
                "tags": [],
                "downloads": 0,
                "likes": 0,
                "disabled": False,
                "gated": False,
            }
            if expand:
                info = {k: v for k, v in info.items() if k in ("id", "_id", *expand)}
            return self.send(200, info)
        if method == "POST" and action == "preupload":
            return self.send(200, {"files": self.preupload(self.commit_for(repo, rest[1]))})
        if method == "POST" and action == "commit":
            return self.commit(repo, rest[1] if len(rest) > 1 else "main")
        if method == "GET" and action == "tree":
            commit = self.commit_for(repo, rest[1])
            base = "/".join(rest[2:]).strip("/")
            if base and base not in commit.files and not holds_folder(commit, base):
                raise HubError(404, f"{base} does not exist", "EntryNotFound")
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            return self.paginated(tree_entries(commit, base, recursive), query)
        if method == "GET" and action == "commits":
            commit, out = self.commit_for(repo, rest[1] if len(rest) > 1 else "main"), []
            with STATE.lock:
                while commit is not None:
                    out.append(
                        {
                            "id": commit.id,
                            "title": commit.title,
                            "message": commit.message,
                            "date": commit.date,
                            "authors": [{"user": commit.author, "avatar": ""}],
                        }
                    )
                    commit = repo.commits.get(commit.parent) if commit.parent else None
            return self.paginated(out, query)
        if method == "GET" and action == "refs":
            return self.send(
                200,
                {
                    "branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": repo.main}],
                    "converts": [],
                    "tags": [
                        {"name": name, "ref": f"refs/tags/{name}", "targetCommit": target}
                        for name, target in sorted(repo.tags.items())
                    ],
                    "pullRequests": [],
                },
            )
        if method == "POST" and action == "tag":
            commit, name = self.commit_for(repo, unquote(rest[1])), self.json_body().get("tag", "")
            with STATE.lock:
                if name in repo.tags:
                    raise HubError(409, f"Tag {name} already exists")
                repo.tags[name] = commit.id
            return self.send(200, {})
        if method == "POST" and action == "paths-info":
            wanted = parse_qs(self.body().decode()).get("paths", [])
            commit, entries = self.commit_for(repo, rest[1]), []
            for path in sorted(set(wanted)):  # each looked up, not found in a listing of the repository
                if path in commit.files:
                    entries.append(file_entry(commit, path))
                elif holds_folder(commit, path):
                    entries.append(folder_entry(path))
            return self.send(200, entries)
        raise HubError(404, f"fakehub: no route for {method} /api/{repo_type}s/{repo_id}/{'/'.join(rest)}")

    def preupload(self, commit: Commit) -> list[dict]:
        """Each file's upload mode, and the id of the remote file at its path (an LFS file's sha256, as
        the client compares it with its own: the same means unchanged)."""
        out = []
        for wanted in self.json_body().get("files", []):
            path = wanted["path"]
            lfs = wanted.get("size", 0) > 0 and goes_lfs(commit.files, path, int(wanted.get("size", 0)))
            oid = None
            if path in commit.files:
                data = commit.files[path]
                oid = hashlib.sha256(data).hexdigest() if path in commit.lfs else git_oid(data)
            out.append(
                {"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": oid}
            )
        return out

    def cdn_url(self, route: str) -> str:
        """An address on another host than the endpoint (localhost, not 127.0.0.1): the client's "CDN"."""
        return f"http://localhost:{self.server.server_address[1]}{route}"

    def lfs_batch(self, repo_type: str, repo_id: str) -> None:
        self.repo_for(repo_type, repo_id, write=True)
        body = self.json_body()
        if body.get("operation") != "upload":
            raise HubError(400, "fakehub: LFS batch supports the upload operation only")
        objects = []
        for obj in body.get("objects", []):
            oid, size = obj["oid"], int(obj["size"])
            entry = {"oid": oid, "size": size, "authenticated": True}
            with STATE.lock:
                known = oid in STATE.lfs_objects
            if not known:
                entry["actions"] = {
                    "upload": {"href": self.cdn_url(f"/_lfs/upload/{oid}")},
                    "verify": {"href": f"{self.base_url()}/_lfs/verify"},  # the Hub's own, not the CDN's
                }
            objects.append(entry)
        self.send(200, {"transfer": "basic", "objects": objects, "hash_algo": "sha256"})

    def lfs_storage(self, method: str, path: str) -> None:
        """The "CDN": PUT of an upload (its bytes must hash to the oid), verify, GET of an object."""
        parts = path.split("/")
        if method == "PUT" and len(parts) == 4 and parts[2] == "upload":
            data, oid = self.body(), parts[3]
            if hashlib.sha256(data).hexdigest() != oid:
                raise HubError(400, "fakehub: the uploaded bytes do not hash to the object id")
            with STATE.lock:
                STATE.lfs_objects[oid] = data
            return self.send(200, raw=b"")
        if method == "POST" and path == "/_lfs/verify":
            body = self.json_body()
            with STATE.lock:
                data = STATE.lfs_objects.get(body.get("oid", ""))
            if data is None or len(data) != body.get("size"):
                raise HubError(404, "fakehub: no such LFS object")
            return self.send(200, {})
        if method in ("GET", "HEAD") and len(parts) == 4 and parts[2] == "objects":
            with STATE.lock:
                data = STATE.lfs_objects.get(parts[3])
            if data is None:
                raise HubError(404, "fakehub: no such LFS object")
            headers = {"ETag": f'"{parts[3]}"', "Content-Type": "application/octet-stream"}
            return self.send(200, headers=headers, raw=data)
        raise HubError(404, f"fakehub: no LFS route for {method} {path}")

    def paginated(self, items: list, query: dict) -> None:
        start = int(query.get("cursor", ["0"])[0])
        end = start + STATE.page_size
        headers = {}
        if end < len(items):
            params = {k: v[0] for k, v in query.items() if k != "cursor"} | {"cursor": str(end)}
            qs = "&".join(f"{quote(k)}={quote(v)}" for k, v in params.items())
            headers["Link"] = f'<{self.base_url()}{urlsplit(self.path).path}?{qs}>; rel="next"'
        self.send(200, items[start:end], headers)

    def commit(self, repo: Repo, rev: str) -> None:
        if rev != "main":
            raise HubError(404, f"Invalid rev id: {rev} (fakehub commits to main only)", "RevisionNotFound")
        lines = [json.loads(line) for line in self.body().splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise HubError(400, "first ndjson line must be the header")
        header = lines[0]["value"]
        with STATE.lock:
            now = time.time()
            STATE.check_commit_rate(repo.id, now)
            parent = header.get("parentCommit")
            if parent and parent != repo.main:
                raise HubError(412, "A commit has happened since. Please refresh and try again.")
            head = repo.commits[repo.main]
            files, lfs, paths = dict(head.files), set(head.lfs), list(head.paths)

            def put(path: str, data: bytes) -> None:
                if path not in files:
                    insort(paths, path)
                files[path] = data

            for line in lines[1:]:
                key, value = line["key"], line["value"]
                if key == "file":
                    put(value["path"], base64.b64decode(value["content"]))
                    lfs.discard(value["path"])
                elif key == "lfsFile":
                    data = STATE.lfs_objects.get(value["oid"])
                    if data is None or len(data) != value["size"]:
                        raise HubError(422, f"LFS object {value['oid']} of {value['path']} was not uploaded")
                    put(value["path"], data)
                    lfs.add(value["path"])
                elif key == "deletedFile":
                    if value["path"] not in files:
                        raise HubError(404, f"File {value['path']} doesn't exist", "EntryNotFound")
                    del files[value["path"]]
                    del paths[bisect_left(paths, value["path"])]
                    lfs.discard(value["path"])
                elif key == "deletedFolder":
                    folder = value["path"].rstrip("/")  # "" or "/": no folder, nothing deleted
                    start, end = folder_span(paths, folder) if folder else (0, 0)
                    for gone in paths[start:end]:
                        del files[gone]
                        lfs.discard(gone)
                    del paths[start:end]
                else:
                    raise HubError(400, f"fakehub does not support {key!r} operations")
            title, description = header.get("summary", ""), header.get("description", "")
            message = f"{title}\n\n{description}" if description else title
            commit = STATE.new_commit(repo, files, title, message, self.user() or "", frozenset(lfs), paths)
            STATE.log_commit(repo.id, now)
        self.send(
            200,
            {
                "commitOid": commit.id,
                "commitUrl": f"{self.repo_url(repo)}/commit/{commit.id}",
                "pullRequestUrl": None,
            },
        )

    def resolve(self, repo_type: str, repo_id: str, rev: str, path: str) -> None:
        with STATE.lock:
            STATE.read_kinds[
                f"{repo_id.rsplit('/', 1)[-1]}: {re.sub(r'[0-9a-f]{8,}|[0-9]+', '*', path)}"
            ] += 1
        repo = self.repo_for(repo_type, repo_id)
        commit = self.commit_for(repo, rev)
        data = commit.files.get(path)
        if data is None:
            raise HubError(404, "Entry not found", "EntryNotFound", {"X-Repo-Commit": commit.id})
        if path in commit.lfs:  # the Hub redirects to its CDN; the file's own id and size ride along
            sha = hashlib.sha256(data).hexdigest()
            headers = {
                "X-Repo-Commit": commit.id,
                "ETag": f'"{git_oid(lfs_pointer(data))}"',
                "X-Linked-Etag": f'"{sha}"',
                "X-Linked-Size": str(len(data)),
                "Location": self.cdn_url(f"/_lfs/objects/{sha}"),
            }
            return self.send(302, headers=headers, raw=b"")
        headers = {
            "X-Repo-Commit": commit.id,
            "ETag": f'"{git_oid(data)}"',
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
        }
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
        if match and data:
            start = int(match[1]) if match[1] else max(0, len(data) - int(match[2] or 0))
            end = min(int(match[2]), len(data) - 1) if match[1] and match[2] else len(data) - 1
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            return self.send(206, headers=headers, raw=data[start : end + 1])
        self.send(200, headers=headers, raw=data)


def start(extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """Run this server as a subprocess on a free port; returns (process, base URL). Stop with stop()."""
    proc = subprocess.Popen(
        [sys.executable, __file__, "--port", "0", "--exit-on-eof"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **(extra_env or {})},
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("FAKEHUB READY "):
        stop(proc)
        raise RuntimeError(f"fakehub did not start (said {line!r})")
    return proc, line.split()[-1]


def stop(proc: subprocess.Popen) -> None:
    proc.kill()  # our own child, by its handle
    proc.wait(timeout=10)
    for pipe in (proc.stdin, proc.stdout):
        if pipe:
            pipe.close()


def serve(host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--exit-on-eof",
        action="store_true",
        help="exit when stdin closes, so a killed test runner leaves no orphan server",
    )
    args = parser.parse_args()
    if args.exit_on_eof:
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    server = serve(args.host, args.port)
    host, port = server.server_address[:2]
    print(f"FAKEHUB READY http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
