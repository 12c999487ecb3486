"""ActivityPub servers played by a test: real HTTP servers on loopback that
serve the documents a test puts on them."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from redpoll.federation import documents, signing


class Host:
    """A server played by the test: documents by path, each with the media
    type it is served as, and every GET it answered counted by path."""

    def __init__(self):
        self.docs: dict[str, tuple[dict, str]] = {}
        #: path -> where it redirects (301)
        self.redirects: dict[str, str] = {}
        self.gets: list[str] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                host.gets.append(self.path)
                if self.path in host.redirects:
                    self.send_response(301)
                    self.send_header("Location", host.redirects[self.path])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                doc, media = host.docs.get(self.path, (None, ""))
                body = json.dumps(doc).encode() if doc else b"{}"
                self.send_response(200 if doc else 404)
                self.send_header("Content-Type", media or "application/activity+json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.name = f"127.0.0.1:{self.server.server_address[1]}"
        self.base = f"http://{self.name}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def put(self, path: str, doc: dict, media: str = "application/activity+json") -> str:
        self.docs[path] = (doc, media)
        return self.base + path

    def actor(self, name: str, pair: signing.KeyPair, key_id: str | None = None) -> str:
        uri = f"{self.base}/users/{name}"
        self.put(
            f"/users/{name}",
            {
                "@context": documents.CONTEXT,
                "id": uri,
                "type": "Person",
                "preferredUsername": name,
                "inbox": f"{uri}/inbox",
                "publicKey": {
                    "id": key_id or f"{uri}#main-key",
                    "owner": uri,
                    "publicKeyPem": pair.public_pem,
                },
            },
        )
        return uri

    def close(self):
        self.server.shutdown()
