"""Account search against a large index, on a throwaway embedded server:

    python -m redpoll.tools.search_bench [--users 100000] [--rounds 200]

Writes ``--users`` user records with random one-to-three-word display names
and indexes them (index_account.lua, pipelined), then times
``Redpoll.search`` for accounts (limit 40) on a few query shapes and prints
the median and 95th percentile of each, the index's entries and the memory
its two keys take (MEMORY USAGE).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import string
import tempfile
import time
from pathlib import Path

from .. import Redpoll, Settings
from ..accounts import account_index
from ..core import keys
from ..search import search
from ..storage.server import EmbeddedServer


async def run(users: int, rounds: int) -> list[str]:
    server = EmbeddedServer(Path(tempfile.mkdtemp(prefix="redpoll-search-bench-")) / "data")
    server.start()
    rp = await Redpoll.open(Settings(redis_url=server.url))
    out = []
    try:
        rnd = random.Random(1)
        words = [
            "".join(rnd.choices(string.ascii_lowercase, k=rnd.randint(3, 9))) for _ in range(5000)
        ]
        sha = rp.store.scripts["index_account"].sha
        pipe = rp.store.client.pipeline(transaction=False)
        for uid in range(1, users + 1):
            login, name = f"user{uid}", " ".join(rnd.choices(words, k=rnd.randint(1, 3)))
            pipe.hset(
                keys.user(uid),
                mapping={
                    "id": uid,
                    "login": login,
                    "name": name,
                    "bio": "",
                    "at": 0,
                    "followers": 0,
                    "following": 0,
                    "posts": 0,
                    "rev": 1,
                },
            )
            pipe.evalsha(
                sha,
                2,
                keys.SEARCH_ACCOUNTS,
                keys.SEARCH_INDEXED,
                uid,
                1,
                *account_index.account_terms(login, name),
            )
            if uid % 2000 == 0:
                await pipe.execute()
                pipe = rp.store.client.pipeline(transaction=False)
        await pipe.execute()
        for q in ("user1", "ab", words[0][:3], words[1], f"user{users}", "zzzz"):
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                found = await rp.discovery.search(search.Query(q=q, type="accounts", limit=40))
                times.append(time.perf_counter() - start)
            times.sort()
            out.append(
                f"q={q!r:14} hits={len(found.accounts):3} "
                f"median={statistics.median(times) * 1000:.2f} ms "
                f"p95={times[int(len(times) * 0.95) - 1] * 1000:.2f} ms"
            )
        client = rp.store.client
        entries = await client.zcard(keys.SEARCH_ACCOUNTS)
        size = sum(
            [
                await client.memory_usage(k, samples=0)
                for k in (keys.SEARCH_ACCOUNTS, keys.SEARCH_INDEXED)
            ]
        )
        out.append(f"{users} users, {entries} index entries, index keys {size / 1e6:.1f} MB")
    finally:
        await rp.close()
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    for line in asyncio.run(run(args.users, args.rounds)):
        print(line)


if __name__ == "__main__":
    main()
