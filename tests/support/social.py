"""Followers made in bulk for the fan-out tests."""

from __future__ import annotations


async def audience(rp, author, n, prefix):
    fans = []
    for i in range(n):
        fan = await rp.accounts.sign_up(f"{prefix}{i}")
        await rp.relations.follow(fan.id, author.id)
        fans.append(fan)
    await rp.drain()  # the follow notifications' jobs: tests count the queue
    return fans
