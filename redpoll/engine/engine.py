"""The Python API: one object that owns the connection (and, by default, the
embedded server), runs the jobs, and offers every action of the network
through its areas (redpoll.engine.areas), one per part of it.

    async with await Redpoll.open() as rp:
        alice = await rp.accounts.sign_up("alice")
        await rp.statuses.post(alice.id, "hello")
        ...
"""

from __future__ import annotations

import asyncio
import logging

from redis.exceptions import RedisClusterException, RedisError

from ..accounts import activity
from ..bus import queue as jobs
from ..bus.queue import JobQueue
from ..core import keys
from ..core.errors import ConfigError
from ..core.health import DATABASE
from ..core.settings import Settings, redact
from ..media.storage import open_storage
from ..storage import topology
from ..storage.server import EmbeddedServer, reach
from ..storage.store import Store
from . import migrate as migrations
from .admin import Desk
from .areas.accounts import Accounts
from .areas.annual import Annual
from .areas.archives import Archives
from .areas.auth import Auth
from .areas.base import Deps
from .areas.collections import Collections
from .areas.discovery import Discovery
from .areas.federation import Federation
from .areas.filters import Filters
from .areas.imports import Imports
from .areas.instance import Instance
from .areas.lists import Lists
from .areas.media import Media
from .areas.moderation import Moderation
from .areas.notifications import Notifications
from .areas.push import Push
from .areas.relations import Relations
from .areas.statuses import Statuses
from .areas.tags import Tags
from .areas.timelines import Timelines
from .worker import Worker

log = logging.getLogger("redpoll.engine")


class Redpoll:
    def __init__(
        self,
        store: Store,
        settings: Settings,
        server: EmbeddedServer | None = None,
        url: str | None = None,
    ):
        self.store = store
        self.settings = settings
        self.server = server
        #: the Redis URL this engine talks to, as :meth:`open` worked it out
        #: (REDIS_URL, or the embedded server's): what a component that needs
        #: its own connection (the stream's event reader) connects to
        self.url = url or settings.redis_url or (server.url if server is not None else None)
        self.queue = JobQueue(store)
        #: where uploaded files go (redpoll.media.storage)
        self.media_storage = open_storage(settings)
        deps = Deps(store, self.queue, settings, self.media_storage)
        self.accounts = Accounts(deps)
        self.auth = Auth(deps)
        self.statuses = Statuses(deps)
        self.timelines = Timelines(deps)
        self.relations = Relations(deps)
        self.lists = Lists(deps)
        self.collections = Collections(deps)
        self.filters = Filters(deps)
        self.notifications = Notifications(deps)
        self.push = Push(deps)
        self.media = Media(deps)
        self.tags = Tags(deps)
        self.federation = Federation(deps)
        self.instance = Instance(deps)
        self.moderation = Moderation(deps)
        self.annual = Annual(deps)
        self.discovery = Discovery(deps, self.federation)
        self.imports = Imports(deps)
        self.archives = Archives(deps)
        #: the admin API's actions (redpoll.engine.admin), each with its actor
        self.admin = Desk(store, self.queue, self.accounts.purge_later, settings)

    @classmethod
    async def open(cls, settings: Settings | None = None, *, migrate: bool = True) -> Redpoll:
        """Connect to ``settings.redis_url``; else attach to the embedded server
        already running on ``settings.data_dir``, or start it (and own it).
        Then bring the database's layout up to date (redpoll.engine.migrate:
        a ConfigError of one line if a migration due must be run by hand),
        unless ``migrate`` is False (``redpoll migrate`` itself)."""
        settings = settings or Settings.from_env()
        server = None
        url = settings.redis_url
        where = settings.database()
        if url is None:
            url = await asyncio.to_thread(EmbeddedServer.running_in, settings.data_dir)
            if url is not None:
                where += f", server already running at {redact(url)}"
        if url is None:
            server = EmbeddedServer.for_data_dir(settings.data_dir, fsync=settings.fsync)
            # started from this (the main) thread on purpose: the server is
            # told to exit when the thread that started it ends (PDEATHSIG)
            server.start()
            url = server.url
            where += f", server started at {redact(url)}"
        if settings.redis_url is not None:
            # one PING with a time limit first: a URL where nothing answers,
            # or something that is not Redis, is one line (ConfigError)
            try:
                await asyncio.to_thread(reach, url, settings.cluster)
            except ConfigError as exc:
                raise ConfigError(f"{exc} ({where})") from None
        store = Store.connect(url, settings.cluster)
        self = cls(store, settings, server, url)
        try:
            await store.load_scripts()
            await store.adopt_epoch()
            await self.queue.ensure_groups()
            if migrate:
                await migrations.at_open(store)
        except ConfigError:
            await self.close()
            raise
        except (RedisError, RedisClusterException, OSError) as exc:
            await self.close()
            # one line naming the setting, not a traceback
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise ConfigError(f"cannot reach the database, {where}: {message}") from None
        log.info("database: %s", where)
        # how this process notices the database is back after an outage
        DATABASE.watch(topology.of(store).alive, store.renew_connections)
        return self

    async def close(self) -> None:
        self.accounts.cancel_purges()
        DATABASE.forget(topology.of(self.store).alive)
        await self.store.close()
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)

    async def __aenter__(self) -> Redpoll:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def ping(self) -> None:
        await self.store.ping()

    async def job_figures(self) -> jobs.JobFigures:
        return await jobs.job_figures(self.store)

    def worker(self, name: str | None = None) -> Worker:
        return Worker(self.store, self.settings, name)

    async def drain(self, timeout: float = 60.0) -> None:
        """Run jobs in this process until the queue is empty, the jobs due by
        now included (moved onto the queue as a worker's timer would), for
        the demo and the tests."""
        stop = asyncio.Event()
        # (no periodic jobs: a drain ends when the queue is empty)
        task = asyncio.create_task(
            Worker(self.store, self.settings, "drain", periodic=False).run(stop)
        )
        try:
            deadline = asyncio.get_running_loop().time() + timeout
            while await self.queue.promote_due() > 0 or await self.queue.depth() > 0:
                if asyncio.get_running_loop().time() > deadline:
                    raise TimeoutError("jobs still queued after drain timeout")
                await asyncio.sleep(0.02)
        finally:
            stop.set()
            await task

    async def usage(self) -> dict:
        """NodeInfo's usage: accounts, statuses, and accounts active in the
        last 30 and 180 days (redpoll.accounts.activity)."""
        figures = await self.stats()
        month, half_year = await activity.active_within(self.store, 30, 180)
        return {
            "users": {"total": figures["users"], "activeMonth": month, "activeHalfyear": half_year},
            "localPosts": figures["statuses"],
        }

    async def stats(self) -> dict:
        # users: counted by their sign-up's journal (jobs.SignUpJob) and by an
        # account's purge (moderation.purge_account), each exactly once in the
        # step that finishes the job; keys.STATS holds what was counted before
        # (a database from an older version), adding the same way
        raw = await self.store.hgetall(keys.STATS)
        before = {k.decode(): int(v) for k, v in raw.items()}
        counts = await self.queue.counts()
        memory = await topology.of(self.store).used_memory()
        users = before.get("users", 0) + counts.get("users", 0) - counts.get("users_gone", 0)
        return {
            "users": users,
            "statuses": counts.get("statuses", 0) - counts.get("deleted", 0),
            "queue_depth": await self.queue.depth(),
            "used_memory_bytes": memory,
        }
