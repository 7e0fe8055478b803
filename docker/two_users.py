"""Prepare the data folder for two OS users; run as root by the entrypoint before it steps down.

Started as root, the image runs the workers as `user` and the web process as `web` (Dockerfile). They
share DATA_DIR through group `varm`: every folder of its shared part is group-writable and passes the group
on to what is made in it (setgid), and both users run with umask 007. The workers' private paths (the
store's areas the web store never opens, the workers' Hub cache, the demo's test gold: the same list the
web process's Landlock boundary uses, `space.sandbox.prepare`) belong to `user` alone, mode 0700/0600, so
the web user cannot open them whatever its own process does.

Idempotent and cheap when nothing changed: it only writes an owner or a mode that differs, so a data folder
left by a one-user run (a Space, an earlier image, a `podman exec` as root) is handed over on the next start.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(APP))

from space import sandbox  # noqa: E402  (the app's own folder, added above)

WORKERS, WEB, SHARED = "user", "web", "varm"
SHARED_DIR_BITS = stat.S_ISGID | 0o770
SHARED_FILE_BITS = 0o660
# DATA_DIR's own folders the workers keep to themselves: Redis's, and `workers` (Celery beat's schedule, a
# pickle shelf: a file the web user could write would run its code as the workers).
WORKERS_ONLY = ("redis", "workers")
# Folders holding the workers' entries beside shared ones: sticky, so the web user can neither remove nor
# rename what is not its own (a private folder moved aside and replaced by one of its making).
STICKY = ("", "store")


def private_paths(data_dir: Path, env: dict[str, str]) -> list[Path]:
    """The workers' private paths, made if missing (the web process's own folders are made as well)."""
    return sandbox.prepare(data_dir, APP / "data", env.get("STORE", "local"), dict(env))


def _set(path: Path, uid: int, gid: int, mode: int) -> None:
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        return  # a link is judged where it points
    if (st.st_uid, st.st_gid) != (uid, gid):
        os.lchown(path, uid, gid)
    if stat.S_IMODE(st.st_mode) != mode:
        path.chmod(mode)


def share(data_dir: Path, private: set[Path], owner: int, group: int) -> None:
    """DATA_DIR's shared part: group `varm`, group read/write, nothing for others; what root made (this
    script, a `podman exec` as root) goes to `user`."""
    for root, dirs, files in os.walk(data_dir):
        here = Path(root)
        dirs[:] = [d for d in dirs if here / d not in private]
        for path, bits in [(here, SHARED_DIR_BITS), *((here / f, SHARED_FILE_BITS) for f in files)]:
            st = path.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                # A second name of a file made elsewhere (a hard link to a private file, where the kernel
                # allows one): opening it to the group would open the original.
                print(f"two_users: left alone (hard link): {path}", file=sys.stderr)
                continue
            uid = owner if st.st_uid == 0 else st.st_uid
            mode = (stat.S_IMODE(st.st_mode) | bits) & ~0o007
            if not stat.S_ISDIR(st.st_mode):
                mode &= ~stat.S_ISGID
            elif path.relative_to(data_dir).as_posix() in {"." if s == "" else s for s in STICKY}:
                mode |= stat.S_ISVTX
            _set(path, uid, group, mode)


def seal(private: list[Path], data_dir: Path, home: Path, owner: int, owner_group: int) -> None:
    """The workers' private paths: theirs alone. Only the path itself is closed; a folder's contents need no
    change, since nobody else can pass through it."""
    for path in private:
        if not path.exists():
            continue
        _set(path, owner, owner_group, 0o700 if path.is_dir() else 0o600)
        if path.is_relative_to(data_dir):
            continue
        # Outside DATA_DIR (the workers' Hub cache, made just now by root if it was missing) the folders on
        # the way through the workers' home go to `user` and stay passable: the web process's boundary
        # check `stat`s each private path.
        for parent in path.parents:
            if not parent.is_relative_to(home):
                break
            st = parent.stat()
            if st.st_uid == 0:
                os.lchown(parent, owner, owner_group)
            if not st.st_mode & 0o001:
                parent.chmod(stat.S_IMODE(st.st_mode) | 0o001)


def main() -> int:
    if os.geteuid() != 0:
        print("two_users.py: run as root (the entrypoint does, before it steps down)", file=sys.stderr)
        return 2
    data_dir = Path(os.environ.get("DATA_DIR", "/home/user/data")).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    workers = pwd.getpwnam(WORKERS)
    private = private_paths(data_dir, dict(os.environ))
    for name in WORKERS_ONLY:
        (data_dir / name).mkdir(exist_ok=True)
        private.append(data_dir / name)
    inside = {p for p in private if p.is_relative_to(data_dir)}
    share(data_dir, inside, workers.pw_uid, grp.getgrnam(SHARED).gr_gid)
    seal(private, data_dir, Path(workers.pw_dir), workers.pw_uid, workers.pw_gid)
    print(
        f"two_users: {data_dir} shared by {WORKERS} and {WEB}; {len(private)} private paths {WORKERS}'s alone"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
