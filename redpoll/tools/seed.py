"""`redpoll seed`: a synthetic network with heavy-tailed popularity."""

from __future__ import annotations

import asyncio
import itertools
import random
import sys

import click

from ..engine.engine import Redpoll
from . import Console

#: Requests the seeder keeps in flight.
SEED_CONCURRENCY = 64


def zipf_weights(n: int, alpha: float) -> list[float]:
    """Cumulative weights: user k is followed with probability ~ 1/(k+1)^alpha."""
    return list(itertools.accumulate(1.0 / (k + 1) ** alpha for k in range(n)))


def draw_follows(rng: random.Random, n: int, avg: int, alpha: float) -> list[set[int]]:
    """For each user index, the indexes it follows: counts are geometric around
    ``avg``; targets are Zipf-distributed, so a few users get most followers."""
    cum = zipf_weights(n, alpha)
    plan = []
    for me in range(n):
        want = min(n - 1, int(rng.expovariate(1 / avg)) + 1) if n > 1 else 0
        picked: set[int] = set()
        while len(picked) < want:
            for target in rng.choices(range(n), cum_weights=cum, k=want - len(picked)):
                if target != me:
                    picked.add(target)
        plan.append(picked)
    return plan


async def _gather_bounded(label: str, jobs: list, total: int) -> None:
    gate = asyncio.Semaphore(SEED_CONCURRENCY)
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:

        async def one(make):
            async with gate:
                await make()
            bar.update(1)

        await asyncio.gather(*(one(j) for j in jobs))


async def build(
    rp: Redpoll, users: int, posts: int, avg_follows: int, alpha: float, seed: int
) -> dict:
    rng = random.Random(seed)
    prefix = f"u{seed}x{rng.randrange(36**4):x}"
    made = []

    async def sign(i):
        made.append((i, await rp.accounts.sign_up(f"{prefix}_{i}")))

    await _gather_bounded("users  ", [lambda i=i: sign(i) for i in range(users)], users)
    ids = [u.id for _, u in sorted(made, key=lambda pair: pair[0])]
    plan = draw_follows(rng, users, avg_follows, alpha)
    edges = [(ids[a], ids[b]) for a, targets in enumerate(plan) for b in targets]
    await _gather_bounded(
        "follows", [lambda e=e: rp.relations.follow(*e) for e in edges], len(edges)
    )
    authors = rng.choices(ids, k=posts)
    await _gather_bounded(
        "posts  ",
        [lambda a=a, i=i: rp.statuses.post(a, f"post {i} from {a}") for i, a in enumerate(authors)],
        posts,
    )
    return {"users": users, "follows": len(edges), "posts": posts, "first_user_id": ids[0]}


@click.command()
@click.option("--users", type=click.IntRange(1, 10_000_000), default=1000, show_default=True)
@click.option("--posts", type=click.IntRange(0, 100_000_000), default=5000, show_default=True)
@click.option(
    "--avg-follows",
    type=click.IntRange(1, 100_000),
    default=20,
    show_default=True,
    help="Mean number of accounts each user follows.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0.1, 3.0),
    default=1.1,
    show_default=True,
    help="Zipf exponent of popularity: higher means a heavier head.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed.")
@click.option(
    "--drain/--no-drain",
    default=True,
    show_default=True,
    help="Run the deferred fan-out jobs before returning.",
)
@click.pass_obj
def seed(
    console: Console, users: int, posts: int, avg_follows: int, alpha: float, seed: int, drain: bool
) -> None:
    """Build a synthetic network: N users, heavy-tailed follows, M posts."""

    async def go():
        async with await Redpoll.open(console.settings()) as rp:
            summary = await build(rp, users, posts, avg_follows, alpha, seed)
            if drain:
                await rp.drain(timeout=3600)
            return summary | await rp.stats()

    for name, value in console.run(go()).items():
        click.echo(f"{name:>18}: {value:,}")
