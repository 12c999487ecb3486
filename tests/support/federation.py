"""Two real Redpoll instances on loopback and a remote peer that signs its
requests: what the federation tests talk to."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from mastodon import Mastodon

from redpoll import Redpoll
from redpoll.api.process import ServeProcess
from redpoll.federation import documents, inbox, signing
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob
from support.mastodon import LOOSE_LIMITS

#: The public URL the federation tests' in-process engines answer as
#: (nothing listens there: their peers are played in process).
HERE = "http://127.0.0.1:1"


async def public_note(fed, who, text: str) -> int:
    """A public Note by the remote account ``who`` (kept here), its Create
    processed by the inbox as a peer's would be: the status id it got."""
    note_id = f"{who.uri}/statuses/{time.time_ns()}"
    create = {
        "id": f"{note_id}/activity",
        "type": "Create",
        "actor": who.uri,
        "object": {
            "id": note_id,
            "type": "Note",
            "attributedTo": who.uri,
            "content": f"<p>{text}</p>",
            "to": [documents.PUBLIC],
            "cc": [],
        },
    }
    await inbox.process(
        fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(create))
    )
    return int(await fed.store.get(fed_keys.note(note_id)))


@pytest.fixture
async def fed(settings):
    """The engine as the inbox runs it, on the test's database: federating
    as :data:`HERE`, loopback addresses allowed."""
    rp = await Redpoll.open(settings.with_(public_url=HERE, federation_loopback=True))
    yield rp
    await rp.close()


PASSWORD = "correct horse battery"


METRICS = "fed-test-metrics-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Instance:
    def __init__(self, tmp, name: str, **extra: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.host = f"127.0.0.1:{self.port}"
        env = {
            "REDIS_URL": "",
            "REDPOLL_DATA_DIR": str(tmp / name),
            "REDPOLL_PUBLIC_URL": self.url,
            "REDPOLL_FEDERATION_LOOPBACK": "1",
            "REDPOLL_JOB_CLAIM_MS": "500",
            "REDPOLL_POLL_EXPIRES_MIN_S": "1",
            "REDPOLL_METRICS_TOKEN": METRICS,
            **LOOSE_LIMITS,
            **extra,
        }
        self.proc = ServeProcess(env, args=["--port", str(self.port)])

    def person(self, login: str) -> Mastodon:
        cid, secret = Mastodon.create_app("fed-test", api_base_url=self.url)
        app = Mastodon(client_id=cid, client_secret=secret, api_base_url=self.url)
        token = app.create_account(login, PASSWORD, f"{login}@example.org", agreement=True)
        return Mastodon(access_token=token, api_base_url=self.url)

    def idle(self) -> bool:
        """No job waiting or running (what was received has been applied)."""
        text = httpx.get(f"{self.url}/metrics", headers={"Authorization": f"Bearer {METRICS}"}).text
        line = [x for x in text.splitlines() if x.startswith("redpoll_jobs_queued ")][0]
        return float(line.split()[1]) == 0

    def settle(self) -> None:
        eventually(self.idle, what="the job queue emptied")


class Peer:
    """Another server, played by this test: its actors' documents served
    over http on loopback, activities signed with their keys
    (redpoll.federation.signing), and what is delivered to its inboxes kept."""

    def __init__(self):
        self.pair = signing.KeyPair.generate()
        self.docs: dict[str, dict] = {}
        #: files served as they are: path -> (bytes, Content-Type)
        self.files: dict[str, tuple[bytes, str]] = {}
        #: every GET answered, by path
        self.gets: list[str] = []
        self.received: list[dict] = []
        #: each delivery whole: its path, headers, raw body and body
        self.deliveries: list[dict] = []
        peer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                peer.gets.append(self.path)
                if self.path in peer.files:
                    data, media_type = peer.files[self.path]
                    self.send_response(200)
                    self.send_header("Content-Type", media_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                doc = peer.docs.get(self.path)
                body = json.dumps(doc).encode() if doc else b"{}"
                self.send_response(200 if doc else 404)
                self.send_header("Content-Type", "application/activity+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                peer.received.append(json.loads(body))
                peer.deliveries.append(
                    {
                        "path": self.path,
                        "raw": body,
                        "body": json.loads(body),
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                    }
                )
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def actor(self, name: str) -> str:
        uri = f"{self.base}/users/{name}"
        self.docs[f"/users/{name}"] = {
            "@context": documents.CONTEXT,
            "id": uri,
            "type": "Person",
            "preferredUsername": name,
            "inbox": f"{uri}/inbox",
            "endpoints": {"sharedInbox": f"{self.base}/inbox"},
            "publicKey": {
                "id": f"{uri}#main-key",
                "owner": uri,
                "publicKeyPem": self.pair.public_pem,
            },
        }
        return uri

    def post(self, inbox: str, activity: dict) -> int:
        body = json.dumps(activity).encode()
        headers = signing.sign(
            self.pair,
            f"{activity['actor']}#main-key",
            "POST",
            inbox,
            body,
            {"content-type": "application/activity+json"},
        )
        return httpx.post(inbox, content=body, headers=headers).status_code

    def vote(self, inbox: str, actor: str, question: str, author: str, title: str, **extra):
        """A vote as Mastodon sends one: a Create of a Note naming the option."""
        vote_id = f"{actor}#votes/{uuid.uuid4().hex}"
        note = {
            "id": vote_id,
            "type": "Note",
            "name": title,
            "attributedTo": actor,
            "to": [author],
            "inReplyTo": question,
            **extra,
        }
        return self.post(
            inbox,
            {
                "id": f"{vote_id}/activity",
                "type": "Create",
                "actor": actor,
                "to": [author],
                "object": note,
            },
        )

    def close(self):
        """Taken down: nothing answers at its address any more."""
        self.server.shutdown()
        self.server.server_close()


def eventually(check, timeout: float = 30.0, what: str = "it"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"{what} never happened (last: {last!r})")


OTHER = signing.KeyPair.generate()


def actor_doc(host: str, name: str) -> dict:
    return {
        "id": f"https://{host}/users/{name}",
        "type": "Person",
        "preferredUsername": name,
        "inbox": f"https://{host}/users/{name}/inbox",
        "publicKey": {
            "id": f"https://{host}/users/{name}#main-key",
            "publicKeyPem": OTHER.public_pem,
        },
    }
