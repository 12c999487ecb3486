"""The database's layout version and the migrations that bring it up to
date: each feature package declares its own (``<package>/migrations.py``,
redpoll.storage.migration says what a step must be); this runner collects
them in number order, above the features.

keys.LAYOUT holds the version (the last migration made) and the cursor of
one in progress. :func:`run` makes what is due under keys.LAYOUT_LOCK: one
process migrates, the others wait (logging once whom for) and find nothing
left to do. Each step's cursor is recorded after it (layout_record.lua,
fenced by the lock), so a run cut short anywhere goes on from its last
recorded step, and the step run again leaves what one run leaves.

:func:`at_open` is what every engine (and ``redpoll serve``, before it
starts its HTTP processes) does when it opens a database: nothing when the
layout is current; the due migrations when none of them must be run by
hand; else a ConfigError of one line that says to run ``redpoll migrate``.
A database whose layout is newer than this release knows is refused too.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from redis.exceptions import RedisClusterException, RedisError

from ..accounts import migrations as accounts_migrations
from ..conversations import migrations as conversations_migrations
from ..core import keys, limits
from ..core.errors import ConfigError
from ..core.models import now_ms
from ..federation import migrations as federation_migrations
from ..relations import migrations as relations_migrations
from ..search import migrations as search_migrations
from ..storage.migration import Migration
from ..storage.store import Store
from ..timelines import migrations as timelines_migrations

log = logging.getLogger("redpoll.migrate")


def collect(*declared: Sequence[Migration]) -> list[Migration]:
    """The migrations of every package, in number order: 1, 2, 3... with no
    gap and no number twice (a RuntimeError names the fault)."""
    found = sorted((m for group in declared for m in group), key=lambda m: m.number)
    for place, m in enumerate(found, start=1):
        if m.number != place:
            raise RuntimeError(
                f"migration numbers must run 1, 2, 3...: {m.name} is {m.number}, expected {place}"
            )
    return found


MIGRATIONS: list[Migration] = collect(
    accounts_migrations.MIGRATIONS,
    conversations_migrations.MIGRATIONS,
    relations_migrations.MIGRATIONS,
    federation_migrations.MIGRATIONS,
    search_migrations.MIGRATIONS,
    timelines_migrations.MIGRATIONS,
)


@dataclass(frozen=True)
class Layout:
    """What keys.LAYOUT says."""

    #: the last migration made (0: none recorded)
    version: int
    #: whether the database records a layout at all (False: from before
    #: layout versions, or new)
    recorded: bool
    #: cursors of migrations in progress, by number
    cursors: dict[int, str] = field(default_factory=dict)


async def layout(store: Store) -> Layout:
    raw = await store.hgetall(keys.LAYOUT)
    fields = {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in (raw.items() if isinstance(raw, dict) else zip(raw[0::2], raw[1::2]))
    }
    cursors = {
        int(name.removeprefix("cursor.")): value
        for name, value in fields.items()
        if name.startswith("cursor.")
    }
    return Layout(int(fields.get("version", 0)), bool(fields), cursors)


def due(version: int, migrations: Sequence[Migration] = MIGRATIONS) -> list[Migration]:
    return [m for m in migrations if m.number > version]


def refuse_newer(version: int, migrations: Sequence[Migration]) -> None:
    latest = migrations[-1].number if migrations else 0
    if version > latest:
        raise ConfigError(
            f"the database's layout is version {version}, newer than this release "
            f"knows (up to {latest}): run the release that wrote it, or a newer one"
        )


def refusal(m: Migration) -> ConfigError:
    return ConfigError(
        f"the database needs migration {m.number} ({m.name}: {m.about}), which must "
        "be run by hand: stop every redpoll process on this database, then run "
        "`redpoll migrate` (docs/operating.md, Upgrading)"
    )


@dataclass
class Made:
    """What one migration of a run did."""

    migration: Migration
    #: "made", or "found made" (the flag of the release before layout versions)
    how: str
    items: int = 0
    steps: int = 0
    seconds: float = 0.0
    #: False when the run stopped before its end (``max_steps``)
    finished: bool = True

    def line(self) -> str:
        m = self.migration
        head = f"migration {m.number} ({m.name}: {m.about})"
        if self.how == "found made":
            return f"{head}: made before layout versions (its flag is set); recorded"
        state = "made" if self.finished else "cut short, to go on from where it stopped"
        steps = f"{self.steps} step{'' if self.steps == 1 else 's'}"
        return f"{head}: {state}, {self.items} changed in {steps}, {self.seconds:.1f} s"


@dataclass
class Report:
    before: int
    after: int
    made: list[Made] = field(default_factory=list)
    #: another process migrated while this one waited
    waited: bool = False


@asynccontextmanager
async def hold(store: Store) -> AsyncIterator[tuple[str, list[bool]]]:
    """Hold keys.LAYOUT_LOCK (waiting while another process does, saying
    so once); yields (who this holder is, [waited]). Renewed every third of
    its time to live while held; released at the end."""
    who = f"{uuid.uuid4().hex} {socket.gethostname()} {os.getpid()}"
    ttl = limits.MIGRATION_LOCK_TTL_MS
    waited = [False]
    while not await store.run("layout_lock", [keys.LAYOUT_LOCK], ["take", who, ttl]):
        if not waited[0]:
            holder = (await store.get(keys.LAYOUT_LOCK) or b"").decode().split(" ", 1)
            log.info(
                "waiting for another process, which is migrating the database (%s)",
                holder[1] if len(holder) > 1 else "it just finished",
            )
            waited[0] = True
        await asyncio.sleep(limits.MIGRATION_WAIT_POLL_S)

    async def renew() -> None:
        while True:
            await asyncio.sleep(ttl / 3000)
            try:
                if not await store.run("layout_lock", [keys.LAYOUT_LOCK], ["renew", who, ttl]):
                    log.warning("the migration lock expired and another process holds it now")
            except Exception as exc:  # the database away: the steps say so themselves
                log.warning("could not renew the migration lock: %s", exc)

    renewer = asyncio.create_task(renew())
    try:
        yield who, waited
    finally:
        renewer.cancel()
        try:
            await store.run("layout_lock", [keys.LAYOUT_LOCK], ["release", who])
        except Exception as exc:  # (it expires by itself)
            log.warning("could not release the migration lock: %s", exc)


async def run(
    store: Store,
    *,
    by_hand: bool = False,
    migrations: Sequence[Migration] = MIGRATIONS,
    max_steps: int | None = None,
    batch: int | None = None,
) -> Report:
    """Make the due migrations, in order, under the lock. ``by_hand``: those
    marked so too (``redpoll migrate``); without it one of them due is a
    ConfigError (:func:`refusal`) before anything runs. ``max_steps``: stop
    after that many steps in all (their cursor recorded: the next run goes
    on from there); ``batch``: items per step instead of each migration's
    own. Steps are idempotent and each records its cursor after it, so any
    run cut short is finished by running again."""
    first = await layout(store)
    refuse_newer(first.version, migrations)
    if not due(first.version, migrations):
        return Report(first.version, first.version)
    async with hold(store) as (who, waited):
        now = await layout(store)  # another process may have made them meanwhile
        refuse_newer(now.version, migrations)
        todo = due(now.version, migrations)
        if not by_hand and (manual := next((m for m in todo if m.by_hand), None)):
            raise refusal(manual)
        report = Report(now.version, now.version, waited=waited[0])
        steps = 0
        for m in todo:
            if m.done_before is not None and await store.exists(m.done_before):
                await _record(store, who, m, "done", f"{now_ms()} found made")
                report.made.append(Made(m, "found made"))
                report.after = m.number
                log.info("%s", report.made[-1].line())
                continue
            made = Made(m, "made")
            report.made.append(made)
            cursor = now.cursors.get(m.number, "")
            if cursor:
                log.info("migration %d (%s): going on from %s", m.number, m.name, cursor)
            started = last_said = time.monotonic()
            while cursor is not None:
                if max_steps is not None and steps >= max_steps:
                    made.finished = False
                    made.seconds = time.monotonic() - started
                    log.info("%s", made.line())
                    return report
                cursor, changed = await m.step(store, cursor, batch or m.batch)
                steps += 1
                made.steps += 1
                made.items += changed
                if cursor is not None:
                    await _record(store, who, m, "cursor", cursor)
                if time.monotonic() - last_said > limits.MIGRATION_PROGRESS_LOG_S:
                    last_said = time.monotonic()
                    log.info(
                        "migration %d (%s): at %s, %d changed so far",
                        m.number,
                        m.name,
                        cursor,
                        made.items,
                    )
            made.seconds = time.monotonic() - started
            if m.done_before is not None:  # for processes of the release before
                await store.set(m.done_before, now_ms())
            await _record(store, who, m, "done", f"{now_ms()} {made.items} changed")
            report.after = m.number
            log.info("%s", made.line())
        return report


async def _record(store: Store, who: str, m: Migration, what: str, value: str) -> None:
    if not await store.run(
        "layout_record", [keys.LAYOUT_LOCK, keys.LAYOUT], [who, m.number, what, value]
    ):
        raise ConfigError(
            f"migration {m.number} ({m.name}) lost the migration lock to another "
            "process; it goes on there"
        )


async def at_open(store: Store, migrations: Sequence[Migration] = MIGRATIONS) -> Report:
    """What opening a database does: one read when its layout is current;
    else the due migrations (none by hand) under the lock, or the one-line
    ConfigError that says to run ``redpoll migrate``."""
    now = await layout(store)
    refuse_newer(now.version, migrations)
    todo = due(now.version, migrations)
    if manual := next((m for m in todo if m.by_hand), None):
        raise refusal(manual)
    if not todo:
        return Report(now.version, now.version)
    return await run(store, migrations=migrations)


async def before_serving(url: str, cluster: bool) -> Report:
    """:func:`at_open` on its own connection: what ``redpoll serve`` does
    once before it starts its HTTP processes (which then find the layout
    current)."""
    store = Store.connect(url, cluster)
    try:
        await store.load_scripts()
        return await at_open(store)
    except (RedisError, RedisClusterException, OSError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(
            f"the database's migrations stopped: {message}; start again, they go on "
            "from their last step"
        ) from None
    finally:
        await store.close()
