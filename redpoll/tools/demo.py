"""`redpoll demo`: the engine end to end in a few seconds."""

from __future__ import annotations

import asyncio
import random

import click

from ..core.settings import Settings
from ..engine.engine import Redpoll

PEOPLE = ["ada", "grace", "alan", "edsger", "barbara", "ken", "dennis", "margaret"]
LINES = [
    "shipping it",
    "reading about skip lists",
    "coffee first",
    "who broke main?",
    "pair programming today",
    "the tests are green",
    "writing the README",
    "lunch?",
]


async def run_demo(settings: Settings) -> None:
    async with await Redpoll.open(settings) as rp:
        rng = random.Random(7)
        # a new set of logins each run: the demo can run again on the same data
        run_tag = random.SystemRandom().randrange(36**6)
        users = []
        for name in PEOPLE:
            login = f"{name}_{run_tag:x}"
            users.append(await rp.accounts.sign_up(login, display_name=name.title()))
        for u in users:
            for v in rng.sample(users, 4):
                if v.id != u.id:
                    await rp.relations.follow(u.id, v.id)
        for _ in range(24):
            author = rng.choice(users)
            await rp.statuses.post(author.id, rng.choice(LINES), {"location": "52.52,13.40"})
        stop = asyncio.Event()
        worker = asyncio.create_task(rp.worker("demo").run(stop))
        while await rp.queue.depth():
            await asyncio.sleep(0.05)
        stop.set()
        await worker
        me = users[0]
        me = await rp.accounts.get_user(me.id)
        click.echo(
            f"\nhome timeline of @{me.login} (follows {me.following}, followed by {me.followers}):"
        )
        for status in await rp.timelines.home(me.id, limit=10):
            click.echo(f"  {status.id:>6}  @{status.login:<16} {status.text}")
        click.echo(f"\nstats: {await rp.stats()}")
