"""The Python API: one object that owns the connection (and, by default, the
embedded server) and offers every action of the SPEC as a method.

    async with await Redpoll.open() as rp:
        alice = await rp.sign_up("alice")
        ...
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from redis.exceptions import RedisClusterException, RedisError

from . import (account_index, relations, bookmarks, boosts, conversation, deleting, favourites, follows,
               interactions, keys, lists, notifications, posting, search, statuses, timelines,
               users)
from .errors import ConfigError
from .health import DATABASE
from .jobs import JobQueue
from .models import Page, Status, User
from .server import EmbeddedServer, reach
from .settings import Settings, redact
from .store import Store
from .worker import Worker
from . import topology


log = logging.getLogger("redpoll.engine")


class Redpoll:
    def __init__(self, store: Store, settings: Settings, server: EmbeddedServer | None = None,
                 url: str | None = None):
        self.store = store
        self.settings = settings
        self.server = server
        #: the Redis URL this engine talks to, as :meth:`open` worked it out
        #: (REDIS_URL, or the embedded server's): what a component that needs
        #: its own connection (the stream's event reader) connects to
        self.url = url or settings.redis_url or (server.url if server is not None else None)
        self.queue = JobQueue(store)

    @classmethod
    async def open(cls, settings: Settings | None = None) -> "Redpoll":
        """Connect to ``settings.redis_url``; else attach to the embedded server
        already running on ``settings.data_dir``, or start it (and own it)."""
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
                raise ConfigError(f"{exc} (REDIS_URL)") from None
        store = Store.connect(url, settings.cluster)
        self = cls(store, settings, server, url)
        try:
            await store.load_scripts()
            await store.adopt_epoch()
            await self.queue.ensure_groups()
            # once per database: users from before the search index existed
            await account_index.index_missing(store)
            # once per database: reply counts from before hidden replies were left out
            await conversation.recount_replies(store)
        except (RedisError, RedisClusterException, OSError) as exc:
            await self.close()
            # one line naming the setting, not a traceback
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise ConfigError(f"cannot reach the database, {where}: {message}") from None
        log.info("database: %s", where)
        # how this process notices the database is back after an outage
        DATABASE.watch(store.alive, store.renew_connections)
        return self

    async def close(self) -> None:
        DATABASE.forget(self.store.alive)
        await self.store.close()
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)

    async def __aenter__(self) -> "Redpoll":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # --- users -------------------------------------------------------------
    async def sign_up(self, login: str, **fields: Any) -> User:
        return await users.sign_up(self.store, self.queue, login, **fields)

    async def get_user(self, uid) -> User:
        return await users.get_user(self.store, uid)

    async def get_users(self, uids) -> list[User]:
        return await users.get_users(self.store, uids)

    async def lookup(self, login: str) -> User:
        return await users.lookup(self.store, login)

    async def update_profile(self, uid, **fields: Any) -> User:
        return await users.update_profile(self.store, uid, **fields)

    async def check_password(self, login: str, password: str) -> User | None:
        return await users.check_password(self.store, login, password)

    async def search(self, query: search.Query) -> search.Results:
        return await search.search(self.store, query)

    # --- statuses ------------------------------------------------------------
    async def post(self, author_id, text, extra=None, in_reply_to=None) -> Status:
        return await posting.post(self.store, self.queue, self.settings, author_id, text, extra,
                                  in_reply_to)

    async def get_status(self, sid) -> Status:
        return await statuses.get_status(self.store, sid)

    async def get_statuses(self, ids) -> list[Status]:
        return await statuses.get_statuses(self.store, ids)

    async def delete_status(self, sid, by_user) -> None:
        await deleting.delete_status(self.store, self.queue, sid, by_user)

    # --- timelines -------------------------------------------------------------
    async def home_timeline(self, uid, **cursors: Any) -> Page:
        return await timelines.home(self.store, uid, idle_after_s=self.settings.idle_after_s,
                                    **cursors)

    async def profile_timeline(self, uid, **cursors: Any) -> Page:
        return await timelines.profile(self.store, uid, **cursors)

    async def public_timeline(self, **cursors: Any) -> Page:
        return await timelines.public(self.store, **cursors)

    async def list_timeline(self, owner, lid, **cursors: Any) -> Page:
        return await timelines.list_timeline(self.store, owner, lid, **cursors)

    # --- following ---------------------------------------------------------------
    async def follow(self, uid, target) -> bool:
        return await follows.follow(self.store, self.queue, uid, target)

    async def unfollow(self, uid, target) -> bool:
        return await follows.unfollow(self.store, self.queue, uid, target)

    async def is_following(self, uid, target) -> bool:
        return await follows.is_following(self.store, uid, target)

    async def following_ids(self, uid) -> frozenset[int]:
        return await follows.following_ids(self.store, uid)

    # blocks and mutes
    async def block(self, uid, target) -> None:
        await relations.block(self.store, self.queue, uid, target)

    async def unblock(self, uid, target) -> None:
        await relations.unblock(self.store, uid, target)

    async def mute(self, uid, target, duration_s=0, notifications: bool = True):
        return await relations.mute(self.store, uid, target, duration_s, notifications)

    async def unmute(self, uid, target) -> None:
        await relations.unmute(self.store, uid, target)

    async def relation(self, uid, target) -> relations.Relation:
        return await relations.relation(self.store, uid, target)

    async def hidden_ids(self, uid) -> frozenset[int]:
        return await relations.hidden_ids(self.store, uid)

    async def followers(self, uid, **page: Any):
        return await follows.followers(self.store, uid, **page)

    async def following(self, uid, **page: Any):
        return await follows.following(self.store, uid, **page)

    # --- lists ---------------------------------------------------------------------
    async def create_list(self, owner, title) -> lists.UserList:
        return await lists.create_list(self.store, owner, title)

    async def get_lists(self, owner) -> list[lists.UserList]:
        return await lists.get_lists(self.store, owner)

    async def get_list(self, owner, lid) -> lists.UserList:
        return await lists.get_list(self.store, owner, lid)

    async def rename_list(self, owner, lid, title) -> lists.UserList:
        return await lists.rename_list(self.store, owner, lid, title)

    async def delete_list(self, owner, lid) -> None:
        await lists.delete_list(self.store, owner, lid)

    async def add_to_list(self, owner, lid, member) -> bool:
        return await lists.add_member(self.store, owner, lid, member)

    async def remove_from_list(self, owner, lid, member) -> bool:
        return await lists.remove_member(self.store, self.queue, owner, lid, member)

    async def list_members(self, owner, lid) -> list[User]:
        return await lists.members(self.store, owner, lid)

    async def list_member_ids(self, owner, lid) -> frozenset[int]:
        return await lists.member_ids(self.store, owner, lid)

    # --- the conversation -------------------------------------------------------
    async def favourite(self, uid, sid) -> bool:
        return await favourites.set_favourite(self.store, self.queue, uid, sid, True)

    async def unfavourite(self, uid, sid) -> bool:
        return await favourites.set_favourite(self.store, self.queue, uid, sid, False)

    async def boost(self, uid, sid) -> int:
        return await boosts.boost(self.store, self.queue, self.settings, uid, sid)

    async def unboost(self, uid, sid) -> bool:
        return await boosts.unboost(self.store, self.queue, uid, sid)

    async def bookmark(self, uid, sid) -> bool:
        return await bookmarks.set_bookmark(self.store, uid, sid, True)

    async def unbookmark(self, uid, sid) -> bool:
        return await bookmarks.set_bookmark(self.store, uid, sid, False)

    async def status_states(self, viewer, sids) -> list[interactions.StatusState]:
        return await interactions.states(self.store, viewer, list(sids))

    async def notifications(self, uid, **query: Any) -> list[notifications.Notification]:
        return await notifications.page(self.store, uid, **query)

    # --- background work ---------------------------------------------------------------
    def worker(self, name: str | None = None) -> Worker:
        return Worker(self.store, self.settings, name)

    async def drain(self, timeout: float = 60.0) -> None:
        """Run jobs in this process until the queue is empty (demo and tests)."""
        stop = asyncio.Event()
        task = asyncio.create_task(self.worker("drain").run(stop))
        try:
            deadline = asyncio.get_running_loop().time() + timeout
            while await self.queue.depth() > 0:
                if asyncio.get_running_loop().time() > deadline:
                    raise TimeoutError("jobs still queued after drain timeout")
                await asyncio.sleep(0.02)
        finally:
            stop.set()
            await task

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
        return {"users": users,
                "statuses": counts.get("statuses", 0) - counts.get("deleted", 0),
                "queue_depth": await self.queue.depth(),
                "used_memory_bytes": memory}
