"""A viewer's every way of reading (REST, SSE, WebSocket) for the leak tests."""

from __future__ import annotations

import asyncio
import json

import httpx
from mastodon import Mastodon
from websockets.exceptions import ConnectionClosed


class WS:
    """A Mastodon WebSocket: every message read, in order."""

    def __init__(self, ws):
        self.ws = ws
        self.messages: list[dict] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                self.messages.append(json.loads(raw))
        except ConnectionClosed:  # the test closed it
            pass

    def ids(self, stream: str, name: str = "update") -> list[str]:
        return [
            str(json.loads(m["payload"])["id"])
            for m in self.messages
            if m.get("event") == name and m["stream"][0] == stream
        ]

    def errors(self) -> list[dict]:
        return [m for m in self.messages if "error" in m]


def sse(http: httpx.AsyncClient, path: str, token: str, **headers):
    return http.stream("GET", path, headers={"Authorization": f"Bearer {token}", **headers})


def ws_url(base: str, token: str, **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"access_token": token, **params}.items())
    return base.replace("http", "ws") + "/api/v1/streaming?" + query


async def call(fn, *args, **kw):
    return await asyncio.to_thread(fn, *args, **kw)


async def me(api: Mastodon) -> str:
    return (await call(api.me))["id"]


# --- scopes ------------------------------------------------------------------------------------
def scoped(base: str, email: str, scopes: list[str]) -> Mastodon:
    """A token of the same account with only ``scopes`` (password grant)."""
    cid, secret = Mastodon.create_app(
        "scoped", api_base_url=base, scopes=["read", "write", "follow"]
    )
    r = httpx.post(
        base + "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": cid,
            "client_secret": secret,
            "username": email,
            "password": "correct horse battery",
            "scope": " ".join(scopes),
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["scope"] == " ".join(scopes)
    return Mastodon(access_token=r.json()["access_token"], api_base_url=base)
