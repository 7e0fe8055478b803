"""The canary (issue 22, "Done when"): no public output depends on a private-slice label.

Two VARM reference sets that agree on every public-slice item and differ on every private-slice item (each
private row's gold target is changed, so its record, JREM and T-F1 change; label and cue subsets stay, so
the strata and the slices are the same), installed with the same slice key, run the same scripted session:
60 varied uploads by six submitters over the REST API (near-copies, a private one made public, a hidden
one), each scored and published by the pipeline's own code, Compare calls, a dry-run and a real re-score.
Every REST answer (anonymous, as each owner, as a maintainer) and every file at the results head must be
byte-identical between the two worlds, once the one thing that must differ is set aside: the reference
set's published identity (a hash of the whole set), made the same in both. A third world that changes
public-slice items (the positive control) must differ.

The clock is frozen and submission ids are a counter, so the two runs are the same byte for byte whenever
nothing depends on the private slice. The same web process serves the Gradio UI: at the end of the session
every Gradio endpoint listed by the app's own `/gradio_api/info` (a new one is covered without editing
this test) is called as every viewer, with the submissions' ids and a dev predictions file where it takes
them; those that change state (submit, make public, finals, re-score, moderate) are left to the REST and
service calls above, and cutting a release is left out (a release publishes the private slice by design).
"""

from __future__ import annotations

import json
import random
import shutil
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat
from fastapi.testclient import TestClient

from scoring.protocol import NO_TARGET
from scoring.slices import parse_slice_key, public_mask
from scoring.tracks import get_track
from space.uploads import upload_folder
from tests.conftest_pipeline import DEMO, RecordingEnqueuer

USERS = ("alice", "bob", "carol", "dave", "erin", "frank")
MAINTAINER = "maud"
TOKENS = {user: f"tok-{user}-canary-0123456789" for user in (*USERS, MAINTAINER)}
# Gradio endpoints that change state: the session drives the same Service methods through REST above.
STATE_CHANGING = {
    "/submit",
    "/make_public",
    "/save_finals",
    "/maint_rescore",
    "/maint_moderate",
    "/maint_cut_release",
}
SUBMISSIONS = 60
KEY = bytes(range(1, 33))
IDENTITY = "c" * 64
SIGNING_KEY = (
    Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    .private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    .decode()
)


class FrozenClock(datetime):
    @classmethod
    def now(cls, tz=None):  # noqa: ARG003 - every caller asks for UTC
        return datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)


def _bundle(out: Path, change) -> Path:
    """The demo VARM bundle with `change(row_index, record)` applied to the test rows and their subset
    copies (references only: no baselines, no train)."""
    shutil.copytree(DEMO / "varm", out, ignore=shutil.ignore_patterns("baselines", "train.jsonl"))
    rows = [json.loads(line) for line in (out / "test.jsonl").read_text().splitlines() if line.strip()]
    changed = {r["id"]: change(k, dict(r)) for k, r in enumerate(rows)}

    def write(path: Path) -> None:
        kept = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        path.write_text("".join(json.dumps(changed[r["id"]], ensure_ascii=False) + "\n" for r in kept))

    write(out / "test.jsonl")
    for subset in (out / "subsets").glob("*.jsonl"):
        write(subset)
    return out


def _public(bundle: Path) -> np.ndarray:
    refs = get_track("varm").load_references(bundle / "test.jsonl", bundle / "subsets")
    return public_mask(KEY, refs.ids, refs.strata())


def _other_target(record: dict) -> dict:
    """The same row with another gold target (rows without a target keep theirs): its record changes."""
    if record["target"] and record["target_type"] != NO_TARGET:
        new = record["target"] + "甲"
        record["cot"] = record["cot"].replace(f"[T:{record['target']}]", f"[T:{new}]")
        record["target"] = new
    return record


def _uploads() -> list[tuple[str, bytes, dict]]:
    """The scripted session's uploads: (identity, file, form) — baselines mixed row by row."""
    names = ("lexicon", "majority", "char-ngram")
    files = {n: (DEMO / "varm" / "baselines" / f"{n}.test.jsonl").read_text().splitlines() for n in names}
    rng = random.Random(22)
    out = []
    for i in range(SUBMISSIONS):
        base, other = rng.sample(names, 2)
        share = rng.choice((0.0, 0.003, 0.05, 0.2, 0.5))  # 0.003: a near-copy of an earlier upload
        lines = [o if rng.random() < share else b for b, o in zip(files[base], files[other], strict=True)]
        form = {"track": "varm", "model_name": f"system {i}"}
        if i % 17 == 5:
            form["private"] = "true"
        out.append((USERS[i % len(USERS)], ("\n".join(lines) + "\n").encode(), form))
    return out


class InlineEnqueuer(RecordingEnqueuer):
    """Compare answered in-process by the worker's own function (the Celery task calls the same)."""

    def __init__(self, store) -> None:
        super().__init__()
        self.store = store

    def compare(self, track: str, a_id: str, b_id: str) -> dict:
        from worker.gold.compare import compare

        return compare(self.store, track, a_id, b_id)


def _gradio_calls(
    client: TestClient, outputs: dict[str, bytes], sids: list[tuple[str, str]], top: list
) -> int:
    """Every Gradio endpoint but the state-changing ones, as every viewer; the answers go into `outputs`.
    Returns how many calls completed (not an error)."""
    info = client.get("/gradio_api/info").json()["named_endpoints"]
    dev = (DEMO / "varm" / "baselines" / "lexicon.dev.jsonl").read_bytes()
    [dev_path] = client.post("/gradio_api/upload", files={"files": ("dev.jsonl", dev)}).json()
    folder = str(upload_folder())
    viewers = {None: "", **{user: TOKENS[user] for user in (*USERS, MAINTAINER)}}
    pairs = [(top[0], top[1]), (top[1], top[2]), (top[0], top[-1])]
    completed = 0
    for name, endpoint in sorted(info.items()):
        if name in STATE_CHANGING:
            continue
        params = [p["parameter_name"] for p in endpoint["parameters"]]
        calls = [{}]
        if "token" in params:
            calls = [{"token": token, "viewer": v} for v, token in viewers.items()]
        if "sid" in params:
            calls = [
                {"sid": sid, "token": viewers[v], "viewer": v}
                for owner, sid in sids[::3]
                for v in (None, owner, MAINTAINER)
            ]
        if {"a", "b"} <= set(params):
            calls = [{"a": a, "b": b} for a, b in pairs]
        for call in calls:
            given = {
                "track": "varm",
                "lang": "en",
                "path": {"path": dev_path, "orig_name": "dev.jsonl", "meta": {"_type": "gradio.FileData"}},
                "systems": top[:3],
                "page": 1,
                "number": 1,
                "baselines": True,
                **call,
            }
            data = [
                given.get(p["parameter_name"], p["parameter_default"] if p["parameter_has_default"] else None)
                for p in endpoint["parameters"]
            ]
            event = client.post(f"/gradio_api/call{name}", json={"data": data}).json()["event_id"]
            stream = client.get(f"/gradio_api/call{name}/{event}").text
            last = [line for line in stream.splitlines() if line.startswith(("event:", "data:"))][-2:]
            completed += last[0] == "event: complete"
            answer = "\n".join(last).replace(dev_path, "<upload>").replace(folder, "<uploads>")
            outputs[f"gradio {name} {sorted((k, str(v)) for k, v in call.items())}"] = answer.encode()
    return completed


def _world(tmp: Path, bundle: Path, monkeypatch) -> dict[str, bytes]:
    """Run the session on a fresh store holding `bundle`; every public output, by name."""
    import worker.gold.install
    import worker.gold.references
    import worker.gold.rescore
    import worker.records
    import worker.service.intake
    import worker.store.local
    from space.auth import Auth
    from space.server import create_app
    from worker.config import Config
    from worker.gold.install import install
    from worker.service import Service
    from worker.store import layout, open_store

    for module in (worker.records, worker.service.intake, worker.gold.rescore, worker.store.local):
        monkeypatch.setattr(module, "datetime", FrozenClock)
    # The reference set's published identity is the one thing that must differ (a hash or a commitment of
    # the whole set): set aside, the same in both worlds.
    monkeypatch.setattr(worker.gold.references, "references_sha256", lambda *args: IDENTITY)
    monkeypatch.setattr(worker.gold.install, "bundle_sha256", lambda *args: IDENTITY)
    monkeypatch.setenv("SIGNING_KEY", SIGNING_KEY)  # one key for both worlds (Ed25519 is deterministic)
    counter = iter(range(1, 10_000))
    monkeypatch.setattr(worker.service.intake.secrets, "token_hex", lambda n: f"{next(counter):0{2 * n}x}")

    config = Config(
        data_dir=tmp / "data",
        host="127.0.0.1",
        quota_per_day=1000,
        attempts_per_day=1000,
        maintainers=(MAINTAINER,),
    )
    store = open_store(config)
    install(store, "varm", bundle, kind="demo")
    store.commit("references", {layout.slice_key("varm"): KEY.hex().encode()}, [], "the canary's key")
    install(store, "varm", bundle, kind="demo")  # the same set again: its public manifest names the new key's

    (Path(config.data_dir) / "tokens.json").write_text(json.dumps({t: u for u, t in TOKENS.items()}))
    monkeypatch.setenv("AUTH", "token")
    # Each world's own Gradio upload folder: another app's clean-up (at its exit, or its TTL sweep) of a
    # shared /tmp/gradio removed this session's upload mid-run. Its name is set aside in the answers.
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp / "gradio"))
    service = Service(config, store, InlineEnqueuer(store), head_ttl=0.0)
    app = create_app(config, service=service, auth=Auth(config, "token"), with_ui=True)
    with TestClient(app) as client:  # the context runs the app's lifespan: Gradio's queue
        return _session(config, store, service, client)


def _auth(user: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}


def _session(config, store, service, client: TestClient) -> dict[str, bytes]:
    from worker.gold.compare import compare
    from worker.gold.publish import Publisher
    from worker.gold.references import ReferenceCache
    from worker.gold.rescore import chunks_done, finalize, plan, score_chunk, stamp
    from worker.gold.scoring_job import score_submission
    from worker.store import layout

    cache, publisher = ReferenceCache(store), Publisher(store)
    outputs: dict[str, bytes] = {}

    def get(name: str, path: str, user: str | None = None, **params) -> None:
        headers = _auth(user)
        answer = client.get(f"/api/v1{path}", params=params, headers=headers)
        outputs[f"{name} {path} {sorted(params.items())} as {user}"] = (
            str(answer.status_code).encode() + b" " + answer.content
        )

    ids: list[tuple[str, str]] = []
    for step, (user, data, form) in enumerate(_uploads()):
        answer = client.post(
            "/api/v1/submissions", data=form, files={"file": ("p.jsonl", data)}, headers=_auth(user)
        )
        outputs[f"upload {step}"] = str(answer.status_code).encode() + b" " + answer.content
        if answer.status_code != 202:
            continue
        sid = answer.json()["submission_id"]
        ids.append((user, sid))
        if answer.json()["status"] == "held":
            continue
        score_submission(store, cache.get, "varm", sid, time_limit=300)
        publisher.publish("varm")
        if step % 10 == 9:  # now and then: the board, Compare of the top two, a hide, a make-public
            get(f"board {step}", "/leaderboard", track="varm")
            rows = service.leaderboard("varm")["rows"]
            if len(rows) >= 2:
                pair = (rows[0]["submission_id"], rows[1]["submission_id"])
                outputs[f"compare {step}"] = json.dumps(
                    compare(store, "varm", *pair), sort_keys=True
                ).encode()
        if step == 30:
            service.moderate(sid, actor=MAINTAINER, hidden=True, reason="canary hide")
            publisher.publish("varm")
        if step == 40:
            private = [s for u, s in ids if service.submission(s, viewer=u).get("private")]
            for s in private[:1]:
                client.post(f"/api/v1/submissions/{s}/make-public", headers=_auth(USERS[0]))
            publisher.publish("varm")

    for dry_run in (True, False):  # a re-score under the same scorer: every version is kept, a report made
        run = stamp()
        for index, chunk in enumerate(plan(store, "varm")):
            score_chunk(store, cache.get("varm"), "varm", run, index, chunk, dry_run)
        finalize(store, publisher, "varm", run, MAINTAINER, dry_run, chunks_done(store, "varm", run))

    for user, sid in ids:
        for viewer in (None, user, MAINTAINER):
            get("submission", f"/submissions/{sid}", viewer)
    for user in USERS:
        get("mine", "/me/submissions", user, track="varm")
    get("board", "/leaderboard", track="varm")
    get("board", "/leaderboard", track="varm", sort="jrem", page_size=7, page=2)
    for fmt in ("json", "csv"):
        get("download", "/leaderboard/download", track="varm", format=fmt)
    get("tracks", "/tracks")
    for name in ("test_inputs.jsonl", "dev.jsonl", "subsets.json", "dev_subsets.json", "reference_set.json"):
        get("public", f"/public/varm/{name}")
    for path in store.list("results", ""):
        outputs[f"file {path}"] = store.read("results", path) or b""
    top = [row["submission_id"] for row in service.leaderboard("varm")["rows"]]
    outputs["gradio calls completed"] = str(_gradio_calls(client, outputs, ids, top)).encode()
    assert parse_slice_key(store.read("references", layout.slice_key("varm")).decode()) == KEY
    return outputs


@pytest.mark.slow
def test_public_outputs_do_not_depend_on_private_slice_labels(tmp_path, monkeypatch):
    base = _bundle(tmp_path / "a", lambda k, r: r)
    public = _public(base)
    private_changed = _bundle(tmp_path / "b", lambda k, r: r if public[k] else _other_target(r))
    assert np.array_equal(_public(private_changed), public)  # the same slices: only private gold differs
    public_changed = _bundle(tmp_path / "c", lambda k, r: _other_target(r) if public[k] and k % 3 == 0 else r)

    first = _world(tmp_path / "world-a", base, monkeypatch)
    second = _world(tmp_path / "world-b", private_changed, monkeypatch)
    assert len(first) > 200 and sum(name.startswith("upload") for name in first) == SUBMISSIONS
    assert sum(b'"status":"published"' in v for n, v in first.items() if n.startswith("submission")) >= 20
    # the session went through every kind of answer: held near-copies, the Ladder's "not released", Compare
    assert any(b'"status":"held"' in v for n, v in first.items() if n.startswith("upload"))
    assert any(b'"released":false' in v for n, v in first.items() if n.startswith("submission"))
    assert sum(n.startswith("compare") for n in first) >= 3
    # Gradio: dozens of calls answered (not refused), the board and Compare among them.
    assert int(first["gradio calls completed"]) >= 50, first["gradio calls completed"]
    answered = [n for n, v in first.items() if n.startswith("gradio /") and v.startswith(b"event: complete")]
    assert any(n.startswith("gradio /leaderboard ") for n in answered), answered
    assert any(n.startswith("gradio /compare ") for n in answered), answered
    different = sorted(name for name in first.keys() | second.keys() if first.get(name) != second.get(name))
    assert different == [], [(n, first.get(n, b"")[:400], second.get(n, b"")[:400]) for n in different[:5]]

    control = _world(tmp_path / "world-c", public_changed, monkeypatch)  # positive control
    assert any(first.get(name) != control.get(name) for name in first)
