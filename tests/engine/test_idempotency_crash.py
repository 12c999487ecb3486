"""A client that retries a post with the same
Idempotency-Key across a crash of ``redpoll serve`` gets the first status,
never a second one.

A real ``redpoll serve`` is SIGKILLed at a random point while posts are in
flight; it is started again and every key is sent again, the ones that were
answered and the ones that were not. Afterwards each key has exactly one
status, and an answered key's retry returns the status first answered.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import httpx
from support.mastodon import serve_env  # noqa: F401
from support.names import unique  # noqa: F401
from support.rest import PASSWORD, bearer  # noqa: F401

from redpoll import Redpoll, Settings
from redpoll.api.process import ServeProcess
from redpoll.core import keys

ROUNDS = 4
POSTS_PER_ROUND = 200
RETRIERS = 16


async def make_poster(base_url: str) -> str:
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as http:
        app = (
            await http.post(
                "/api/v1/apps",
                data={
                    "client_name": "crash",
                    "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                    "scopes": "read write follow",
                },
            )
        ).json()
        tok = (
            await http.post(
                "/oauth/token",
                data={
                    "grant_type": "client_credentials",
                    "scope": "read write follow",
                    "client_id": app["client_id"],
                    "client_secret": app["client_secret"],
                },
            )
        ).json()
        name = unique("crash")
        r = await http.post(
            "/api/v1/accounts",
            headers=bearer(tok["access_token"]),
            data={
                "username": name,
                "email": f"{name}@example.com",
                "password": PASSWORD,
                "agreement": "true",
            },
        )
        assert r.status_code == 200, r.text
        return r.json()["access_token"]


async def post(http: httpx.AsyncClient, token: str, key: str):
    """The status id answered, or None if the request got no answer."""
    try:
        r = await http.post(
            "/api/v1/statuses",
            headers={**bearer(token), "Idempotency-Key": key},
            data={"status": f"posted under {key}"},
        )
    except httpx.HTTPError:
        return None
    assert r.status_code == 200, r.text
    return r.json()["id"]


async def test_retries_across_a_sigkill_of_serve_post_each_key_once(server):
    rng = random.Random(8)
    env = serve_env(server)
    srv = ServeProcess(env).start()
    token = await make_poster(srv.url)
    answered: dict[str, str] = {}
    all_keys: list[str] = []
    cut_short: list[int] = []  # posts per round that got no answer
    try:
        for round_ in range(ROUNDS):
            batch = [f"r{round_}-{n}-{unique('k')}" for n in range(POSTS_PER_ROUND)]
            all_keys += batch
            async with httpx.AsyncClient(base_url=srv.url, timeout=30) as http:
                tasks = [asyncio.create_task(post(http, token, key)) for key in batch]
                # SIGKILL once a random few have been answered: the others
                # are then somewhere in flight (a delay after the first answer
                # instead let an idle machine answer every post before it)
                enough = rng.randint(1, POSTS_PER_ROUND // 3)
                while sum(t.done() for t in tasks) < enough:
                    await asyncio.sleep(0.001)
                srv.process.kill()
                results = await asyncio.gather(*tasks)
            cut_short.append(sum(r is None for r in results))
            srv.process.wait()
            srv.close()
            answered.update({k: sid for k, sid in zip(batch, results) if sid is not None})
            srv = ServeProcess(env).start()
            # every key again, answered or not, as clients that retry do
            # (RETRIERS of them at a time)
            async with httpx.AsyncClient(base_url=srv.url, timeout=60) as http:
                gate = asyncio.Semaphore(RETRIERS)

                async def retry(key: str) -> str | None:
                    async with gate:
                        return await post(http, token, key)

                again = await asyncio.gather(*(retry(key) for key in all_keys))
            for key, sid in zip(all_keys, again):
                assert sid is not None
                if key in answered:
                    assert sid == answered[key], f"key {key}: retry got another status"
                answered[key] = sid
    finally:
        srv.stop()
        srv.close()

    assert sum(cut_short) > 0 and sum(cut_short) < ROUNDS * POSTS_PER_ROUND, cut_short
    url, cluster, _ = server
    rp = await Redpoll.open(Settings(redis_url=url, cluster=cluster, job_claim_ms=500))
    try:
        await rp.drain(timeout=120)
        any_id = next(iter(answered.values()))
        author = (await rp.statuses.get_status(int(any_id))).user_id
        ids = [int(i) for i in await rp.store.client.zrange(keys.profile(author), 0, -1)]
        texts = Counter(s.text for s in await rp.statuses.get_statuses(ids))
        duplicates = {t: n for t, n in texts.items() if n > 1}
        assert not duplicates, duplicates
        assert set(texts) == {f"posted under {k}" for k in all_keys}
        assert sorted(int(i) for i in answered.values()) == sorted(ids)
        assert (await rp.accounts.get_user(author)).posts == len(all_keys)
    finally:
        await rp.close()
