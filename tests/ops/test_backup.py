"""``redpoll backup`` and ``redpoll restore`` with real processes: a backup
taken while a serve takes posts comes back in a fresh data directory, and
a serve started on it has every post acknowledged before the backup began,
in its author's followers' homes too, with the media files and the key
pairs that sign federation. What they refuse, each in one line."""

from __future__ import annotations

import io
import json
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from PIL import Image
from support.cli import own_env, redpoll  # noqa: F401
from support.rest import bearer, make_app, sign_up  # noqa: F401

from redpoll.api.process import ServeProcess

ACTIVITY = {"Accept": "application/activity+json"}


def png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (900, 700), (200, 120, 20)).save(out, "PNG")
    return out.getvalue()


def post(http, token: str, text: str, **data) -> dict:
    r = http.post(
        "/api/v1/statuses",
        headers={**bearer(token), "Idempotency-Key": uuid.uuid4().hex},
        data={"status": text, **data},
    )
    assert r.status_code == 200, r.text
    return r.json()


def home_ids(http, token: str) -> set[str]:
    seen: set[str] = set()
    max_id = None
    while True:
        r = http.get(
            "/api/v1/timelines/home",
            headers=bearer(token),
            params={"limit": 40, **({"max_id": max_id} if max_id else {})},
        )
        assert r.status_code == 200, r.text
        page = r.json()
        if not page:
            return seen
        seen |= {s["id"] for s in page}
        max_id = page[-1]["id"]


def public_keys(http, logins: list[str]) -> dict[str, str]:
    out = {}
    for login in logins:
        r = http.get(f"/users/{login}", headers=ACTIVITY)
        assert r.status_code == 200, r.text
        out[login] = r.json()["publicKey"]["publicKeyPem"]
    r = http.get("/actor", headers=ACTIVITY)
    assert r.status_code == 200, r.text
    out["instance"] = r.json()["publicKey"]["publicKeyPem"]
    return out


def test_a_backup_taken_under_load_restores_everything_acknowledged_before_it(tmp_path):
    first_dir, second_dir, backup_dir = tmp_path / "first", tmp_path / "second", tmp_path / "bk"
    federation = {
        "REDPOLL_PUBLIC_URL": "http://127.0.0.1:9",
        "REDPOLL_FEDERATION_LOOPBACK": "1",
    }
    env = own_env(tmp_path, REDPOLL_DATA_DIR=str(first_dir), **federation)
    with ServeProcess(env) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        app = make_app(http)
        (alice, alice_id), (bob, _), (carol, _) = (
            sign_up(http, app, name) for name in ("alice", "bob", "carol")
        )
        logins = ["alice", "bob"]
        for token in (bob, carol):
            r = http.post(f"/api/v1/accounts/{alice_id}/follow", headers=bearer(token))
            assert r.status_code == 200, r.text
        r = http.post(
            "/api/v2/media",
            headers=bearer(alice),
            files={"file": ("a.png", png(), "image/png")},
            data={"description": "an orange square"},
        )
        assert r.status_code in (200, 202), r.text
        media_id = r.json()["id"]
        for _ in range(600):
            got = http.get(f"/api/v1/media/{media_id}", headers=bearer(alice))
            if got.status_code == 200:
                break
            time.sleep(0.05)
        assert got.status_code == 200, got.text
        with_media = post(http, alice, "with a picture", **{"media_ids[]": media_id})
        files = {
            urlsplit(with_media["media_attachments"][0][which]).path
            for which in ("url", "preview_url")
        }
        originals = {path: http.get(path).content for path in files}
        assert all(originals.values()) and len(originals) == 2
        keys_before = public_keys(http, logins)

        # posts, acknowledged one after another, while the backup is taken
        acked: list[tuple[float, str]] = []
        stop = threading.Event()

        def load() -> None:
            with httpx.Client(base_url=srv.url, timeout=30) as client:
                n = 0
                while not stop.is_set():
                    status = post(client, alice, f"under load {n}")
                    acked.append((time.monotonic(), status["id"]))
                    n += 1
                    time.sleep(0.004)  # (at most ~250/s: the homes' 1,000 hold them all)

        loader = threading.Thread(target=load, daemon=True)
        loader.start()
        time.sleep(1.0)
        began = time.monotonic()
        made = redpoll(["backup", str(backup_dir)], env)
        ended = time.monotonic()
        time.sleep(0.3)
        stop.set()
        loader.join(30)
        assert made.returncode == 0, made.stderr
        assert made.stdout.startswith("backed up "), made.stdout
        before = [sid for at, sid in acked if at < began]
        after = [sid for at, sid in acked if at > ended]
        assert len(before) >= 5 and after, (len(before), len(after))  # it was under load
        assert len(acked) < 1000
        before.append(with_media["id"])

    manifest = json.loads((backup_dir / "manifest.json").read_text())
    assert manifest["snapshot"]["instance_key_pair"] is True
    assert len(manifest["media"]["files"]) == 2
    for path in backup_dir.rglob("*"):  # secrets inside: its owner's alone
        assert path.stat().st_mode & 0o077 == 0, path

    env2 = own_env(tmp_path, REDPOLL_DATA_DIR=str(second_dir), **federation)
    restored = redpoll(["restore", str(backup_dir)], env2)
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout.startswith("restored "), restored.stdout
    # a data directory that is not empty is refused, in one line
    again = redpoll(["restore", str(backup_dir)], env2)
    assert again.returncode == 1
    assert again.stderr.strip().splitlines()[-1] == (
        f"Error: data directory {second_dir} is not empty: restore into an empty one "
        "(set REDPOLL_DATA_DIR), or move this one away first"
    )

    with ServeProcess(env2) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        for sid in before:
            r = http.get(f"/api/v1/statuses/{sid}", headers=bearer(bob))
            assert r.status_code == 200, (sid, r.text)
        # the homes: fan-out queued before the backup runs on the restored data
        deadline = time.monotonic() + 60
        while True:
            missing = {
                who: set(before) - home_ids(http, token)
                for who, token in (("bob", bob), ("carol", carol))
            }
            if not any(missing.values()) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert not any(missing.values()), {k: len(v) for k, v in missing.items()}
        for path, content in originals.items():
            r = http.get(path)
            assert r.status_code == 200 and r.content == content, path
        assert public_keys(http, logins) == keys_before
        # the restored server goes on taking posts
        assert post(http, alice, "after the restore")["id"]


def test_backup_and_restore_say_what_they_refuse_in_one_line(tmp_path):
    env = own_env(tmp_path, REDIS_URL="redis://127.0.0.1:9/0")
    for command in ("backup", "restore"):
        target = tmp_path / command
        target.mkdir()
        done = redpoll([command, str(target)], env)
        assert done.returncode == 1
        assert done.stderr.strip().splitlines() == [
            f"Error: redpoll {command} works on the embedded server's data directory; "
            "REDIS_URL names a Redis server of your own: copy it with its own tools "
            "(docs/operating.md, Backing up)"
        ], done.stderr
    env = own_env(tmp_path, REDPOLL_DATA_DIR=str(tmp_path / "nothing"))
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x")
    done = redpoll(["backup", str(full)], env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: backup directory {full} is not empty: name a new one"
    )
    done = redpoll(["restore", str(full)], env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {full} is not a redpoll backup, or an unfinished one (no manifest.json)"
    )
    done = redpoll(["backup", str(tmp_path / "new")], env)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: data directory {tmp_path / 'nothing'} holds no database to back up"
    )


def test_a_backup_whose_files_were_changed_is_refused(tmp_path):
    env = own_env(tmp_path, REDPOLL_DATA_DIR=str(tmp_path / "data"))
    assert redpoll(["stats"], env).returncode == 0  # a database, made
    assert redpoll(["backup", str(tmp_path / "bk")], env).returncode == 0
    snapshot = tmp_path / "bk" / "dump.rdb"
    snapshot.write_bytes(snapshot.read_bytes()[:-8])
    env2 = own_env(tmp_path, REDPOLL_DATA_DIR=str(tmp_path / "data2"))
    done = redpoll(["restore", str(tmp_path / "bk")], env2)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {snapshot} is missing or not the one the backup wrote (SHA-256)"
    )
    assert not Path(tmp_path / "data2").exists()
