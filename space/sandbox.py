"""The web process's own file-system boundary: Linux Landlock (kernel >= 5.13), no root needed.

A Space runs every process of the container as one uid, so file permissions cannot keep the web process
away from the workers' references. Landlock can: an unprivileged process may give up, for itself and its
future children, every file access outside the rules it lists. `restrict` lists everything except the
private paths (the local store's areas the web store does not open, the workers' Hub cache, the demo's
test gold), so the web process can still read its code, libraries, uploads and the rest of the store,
and an attacker who gets code running in it cannot open, list, change or remove a reference file.
Landlock also stops it from tracing or reading the memory and environment (/proc/PID/mem,
/proc/PID/environ) of processes outside its domain, such as the workers.

Landlock only grants: a rule allows an access for a whole directory tree. So "everything but P" is built
from the siblings of every directory on the way from / to P (each granted in full) — the directories on
that way themselves get no right, so a file *created later* directly in one of them (not in a sibling
tree) is out of reach. The caller makes what the web process will need before restricting (`prepare`).

Only the calling thread and the threads and children it starts later are restricted: call `restrict`
before any other thread exists (numpy's BLAS pool starts threads at import), which `restrict` checks.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import tempfile
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path

# linux/landlock.h
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_SCOPE_SIGNAL = 1 << 1  # ABI 6: no signals to processes outside the domain (the workers)
_PR_SET_NO_NEW_PRIVS = 38
# The file-system rights of each ABI version (bit k is right k of linux/landlock.h).
_FS_RIGHTS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_FILE_RIGHTS = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) | (1 << 15)  # execute, write, read, truncate, ioctl
_SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict


class SandboxUnavailable(RuntimeError):
    """Landlock cannot be used here (kernel, architecture, threads); the message says why."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]  # fmt: skip


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscalls() -> tuple[int, int, int]:
    numbers = _SYSCALLS.get(platform.machine())
    if numbers is None:
        raise SandboxUnavailable(f"Landlock is not wired for {platform.machine()}")
    return numbers


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when the kernel has none (or it is disabled)."""
    try:
        create, _, _ = _syscalls()
    except SandboxUnavailable:
        return 0
    version = _libc().syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(version, 0)


def _fs_rights(abi: int) -> int:
    return _FS_RIGHTS[max(v for v in _FS_RIGHTS if v <= abi)]


def allowed_roots(private: Iterable[Path]) -> list[Path]:
    """What to grant so that everything but the `private` paths stays reachable: every entry of each
    directory on the way from / to a private path, except the private paths and that way itself."""
    private = {Path(os.path.abspath(p)) for p in private}
    if not private:
        return [Path("/")]
    on_the_way = {parent for p in private for parent in p.parents}
    grant = []
    for directory in sorted(on_the_way):
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            # A symbolic link gets no rule: what it points to is judged where it is (a rule on a link to a
            # folder on the way, such as pytest's `pytest-current`, would grant that whole folder).
            if path not in private and path not in on_the_way and not entry.is_symlink():
                grant.append(path)
    return grant


def restrict(private: Iterable[Path]) -> int:
    """Restrict this process (and its future threads and children) to everything but `private`; returns
    the Landlock ABI version used. Raises SandboxUnavailable when it cannot (nothing is restricted then)."""
    private = [Path(os.path.abspath(p)) for p in private]
    if len(os.listdir("/proc/self/task")) != 1:
        raise SandboxUnavailable("another thread already runs: it would stay unrestricted")
    abi = abi_version()
    if abi < 1:
        raise SandboxUnavailable("the kernel has no Landlock (Linux >= 5.13 with landlock in its LSM list)")
    create, add_rule, restrict_self = _syscalls()
    libc, rights = _libc(), _fs_rights(abi)
    attr = _RulesetAttr(rights, 0, _SCOPE_SIGNAL if abi >= 6 else 0)
    size = ctypes.c_size_t(ctypes.sizeof(attr))
    ruleset = libc.syscall(create, ctypes.byref(attr), size, ctypes.c_uint32(0))
    if ruleset < 0:
        raise SandboxUnavailable(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for path in allowed_roots(private):
            _grant(libc, add_rule, ruleset, path, rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise SandboxUnavailable(f"no_new_privs: {os.strerror(ctypes.get_errno())}")
        if libc.syscall(restrict_self, ruleset, ctypes.c_uint32(0)):
            raise SandboxUnavailable(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    return abi


def _grant(libc: ctypes.CDLL, add_rule: int, ruleset: int, path: Path, rights: int) -> None:
    """One rule: every right beneath `path` (a file gets the rights that apply to files)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:  # gone meanwhile, or a dangling link: nothing to grant
        return
    try:
        is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
        rule = _PathBeneathAttr(rights if is_dir else rights & _FILE_RIGHTS, fd)
        if libc.syscall(add_rule, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)):
            raise SandboxUnavailable(f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def unreadable(path: Path) -> bool:
    """True when this process is refused `path` (the live check behind health's `sandbox` line)."""
    try:
        if Path(path).is_dir():
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read(1)
    except PermissionError:
        return True
    except OSError as exc:
        return exc.errno == errno.EACCES
    return False


# --- the web process's boundary (policy) ----------------------------------------------------------------

_state: dict = {"status": "off", "private": []}


def workers_hub_cache(env: Mapping[str, str]) -> Path:
    """The Hub cache the workers use (huggingface_hub's rule, read without importing it)."""
    explicit = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def prepare(data_dir: Path, repo_data: Path, store: str, env: MutableMapping[str, str]) -> list[Path]:
    """Make what the restricted web process will need, point its own temporary files and (with the Hub
    store) its own Hub cache at folders it may use, and return the private paths: the local store's
    references area, the workers' Hub cache, and the demo's test gold."""
    from worker.store import WEB_AREAS, WORKER_AREAS  # no huggingface_hub import: HF_HOME is set below

    data_dir = Path(data_dir).resolve()
    private = [data_dir / "store" / area for area in sorted(WORKER_AREAS - WEB_AREAS)]
    for needed in [*(f"store/{area}" for area in sorted(WEB_AREAS)), "heartbeats", "hub-budget"]:
        (data_dir / needed).mkdir(parents=True, exist_ok=True)
    if store == "hub":
        private.append(workers_hub_cache(env).resolve())
        web_home = data_dir / "web-hf-home"  # the web process's own downloads of the results and submissions
        web_home.mkdir(parents=True, exist_ok=True)
        for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_XET_CACHE", "HF_ASSETS_CACHE"):
            env.pop(name, None)
        env["HF_HOME"] = str(web_home)
    for path in private:
        path.mkdir(parents=True, exist_ok=True)  # a folder made later would be outside every rule
    demo = Path(repo_data) / "demo"
    if demo.is_dir():
        private += sorted(demo.glob("*/test.jsonl")) + sorted(p for p in demo.glob("*/subsets") if p.is_dir())
    on_the_way = {parent for p in private for parent in p.parents}
    if Path(tempfile.gettempdir()).resolve() in on_the_way:  # new temporary files would be out of reach
        env["TMPDIR"] = tempfile.mkdtemp(prefix="web-tmp-")
        tempfile.tempdir = None  # read TMPDIR again
    return private


def enter(private: list[Path]) -> str:
    """Restrict this process to everything but `private`; returns the status line health shows."""
    abi = restrict(private)
    _state.update(status=f"landlock ABI {abi}", private=list(private))
    return status()


def not_entered(reason: str) -> None:
    _state.update(status=f"off: {reason}", private=[])


def status() -> str:
    """Health's `sandbox` line, checked live: "landlock ABI N: K private paths unreadable", or which one
    this process can read (then the boundary is broken), or why there is none."""
    if not _state["private"]:
        return _state["status"]
    readable = [str(p) for p in _state["private"] if Path(p).exists() and not unreadable(p)]
    if readable:
        return f"BROKEN: {_state['status']} but {readable[0]} is readable"
    return f"{_state['status']}: {len(_state['private'])} private paths unreadable"
