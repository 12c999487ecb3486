"""The Python API: one object that owns the connection (and, by default, the
embedded server) and offers every action of the network as a method.

    async with await Redpoll.open() as rp:
        alice = await rp.sign_up("alice")
        ...
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from redis.exceptions import RedisClusterException, RedisError

from ..accounts import account, activity, auth, invites, markers, ratelimit, standing, two_factor
from ..admin import server
from ..annual import reports as annual
from ..bus import queue as jobs
from ..bus.queue import JobQueue
from ..collections import collections as featured_collections
from ..conversations import direct_messages, featured_tags, tags, thread_mutes
from ..core import keys, limits, validate
from ..core.errors import ConfigError, NotFound, RedpollError, StatusNotFound
from ..core.health import DATABASE
from ..core.models import Page, Status, User, now_ms
from ..core.settings import Settings, redact
from ..federation import domains, member_blocks, publish, remote, remote_media
from ..federation import followers as fed_followers
from ..federation import inbox as fed_inbox
from ..federation import outbox as fed_outbox
from ..federation import threads as fed_threads
from ..federation.jobs import ContextJob, DomainBlockJob, PollVoteJob
from ..filters import filters, rules
from ..instance import activity as server_activity
from ..instance import instance, registrations
from ..interactions import bookmarks, favourites
from ..lists import lists
from ..mail import address, confirmation, notices, recovery
from ..media import profile_images, uploads
from ..media import remote as remote_cache
from ..media.storage import LocalStorage, open_storage
from ..moderation import appeals, moderation
from ..notifications import notifications, requests
from ..pins import pins
from ..polls import polls
from ..portability import exports
from ..posting import boosts, deleting, editing, idempotency, posting
from ..push import subscriptions as push_subscriptions
from ..push import vapid
from ..quotes import quotes
from ..reading import directory as profile_directory
from ..reading import notification_view, pages
from ..records import state, statuses, users
from ..relations import (
    domain_blocks,
    endorsements,
    follow_requests,
    follows,
    notes,
    relations,
    relationship,
    visibility,
)
from ..scheduling import scheduled
from ..search import index as search_index
from ..search import search
from ..search.jobs import ReindexAuthorJob
from ..storage import topology
from ..storage.server import EmbeddedServer, reach
from ..storage.store import Store
from ..suggestions import suggestions as follow_suggestions
from ..timelines import timelines
from ..trends import links as trend_links
from ..trends import ranking
from ..trends import review as trend_review
from ..trends import statuses as trend_statuses
from . import migrate as migrations
from .admin import Desk
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
        #: accounts being purged after their owner deleted them (delete_own_account)
        self._purges: set[asyncio.Task] = set()
        #: the admin API's actions (redpoll.admin), each with its actor
        self.admin = Desk(store, self.queue, self._purge_later, settings)
        #: who this process recorded active today (redpoll.instance.activity)
        self._seen = server_activity.Seen()

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
        for task in self._purges:
            task.cancel()
        DATABASE.forget(topology.of(self.store).alive)
        await self.store.close()
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)

    async def __aenter__(self) -> Redpoll:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # --- users -------------------------------------------------------------
    async def sign_up(self, login: str, **fields: Any) -> User:
        return await account.sign_up(self.store, self.queue, login, **fields)

    async def get_user(self, uid) -> User:
        return await users.get_user(self.store, uid)

    async def get_users(self, uids) -> list[User]:
        return await users.get_users(self.store, uids)

    async def lookup(self, login: str) -> User:
        return await users.lookup(self.store, login)

    async def update_profile(self, uid, **fields: Any) -> User:
        """``indexable`` given: the account's statuses are indexed again (a
        job: their full-text family follows it)."""
        user = await account.update_profile(self.store, uid, **fields)
        if fields.get("indexable") is not None:
            await self.queue.enqueue(ReindexAuthorJob(user.id))
        return user

    async def check_password(self, login: str, password: str) -> User | None:
        return await account.check_password(self.store, login, password)

    async def search(self, query: search.Query) -> search.Results:
        """``resolve``: a ``name@host`` of another server is looked up there
        first (WebFinger), and shown first if found."""
        found = await search.search(self.store, query)
        if query.resolve and self.settings.public_url and query.type in (None, "accounts"):
            handle = query.q.strip().removeprefix("acct:").lstrip("@")
            if "@" in handle and not any(handle.lower().endswith("@" + h) for h in query.hosts):
                try:
                    user = await self.resolve_account(handle)
                except RedpollError as exc:
                    log.info("could not resolve %s: %s", handle, exc)
                else:
                    found.accounts[:] = [user] + [u for u in found.accounts if u.id != user.id]
        return found

    # --- federation (redpoll.federation) -----------------------------------------
    async def kept_remote_account(self, handle: str) -> User | None:
        """The account ``name@host`` of another server if it is kept here."""
        return await remote.kept_account(self.store, handle)

    async def resolve_account(self, handle: str) -> User:
        """The account ``name@host`` of another server, looked up there and kept."""
        here = fed_inbox.Here.of(self.settings)
        return await remote.resolve_handle(self.store, here.base, handle, loopback=here.loopback)

    async def domain_block(
        self, host: str, severity: str = "suspend", reject_media: bool = False
    ) -> domains.Block:
        return await domains.block(self.store, host, severity, reject_media)

    async def domain_unblock(self, host: str) -> bool:
        return await domains.unblock(self.store, host)

    async def domain_blocks(self) -> list[domains.Block]:
        return await domains.blocks(self.store)

    async def receive_activity(self, method: str, target: str, headers, body: bytes) -> bool:
        return await fed_inbox.receive(
            self.store, self.queue, self.settings, method, target, headers, body
        )

    async def authorize_fetch(self, method: str, target: str, headers) -> None:
        """Under Settings.authorized_fetch, a fetch of an actor, note or
        collection must be signed by an account of a server not suspended
        here (fed_inbox.Refused otherwise); without it, nothing is asked."""
        if self.settings.authorized_fetch:
            here = fed_inbox.Here.of(self.settings)
            await fed_inbox.authenticate(
                self.store, here, fed_inbox.signer_of(here, method, target, headers, None)
            )

    async def webfinger(self, resource: str) -> dict:
        return await publish.webfinger(self.store, self.settings, resource)

    async def host_meta(self) -> str:
        return publish.host_meta(self.settings)

    async def actor_document(self, login: str) -> dict:
        return await publish.actor(self.store, self.settings, login)

    async def instance_actor_document(self) -> dict:
        return await publish.instance_actor(self.store, self.settings)

    async def note_document(self, login: str, sid: int) -> dict:
        return await publish.note(self.store, self.settings, login, sid)

    async def replies_document(self, login: str, sid: int) -> dict:
        return await publish.replies(self.store, self.settings, login, sid)

    async def collection_document(self, login: str, which: str) -> dict:
        return await publish.collection(self.store, self.settings, login, which)

    # --- statuses ------------------------------------------------------------
    async def post(
        self,
        author_id,
        text,
        extra=None,
        in_reply_to=None,
        media=(),
        poll: polls.PollSpec | None = None,
        *,
        allowed_mentions: frozenset[int] | None = None,
    ) -> Status:
        """``media``: ids of the author's uploads to attach (at most 4);
        ``poll``: a poll with it (polls.spec); ``allowed_mentions``: the
        accounts it may mention (posting.prepare)."""
        return await posting.post(
            self.store,
            self.queue,
            self.settings,
            author_id,
            text,
            extra,
            in_reply_to,
            media,
            poll,
            allowed_mentions=allowed_mentions,
        )

    async def post_once(
        self,
        author_id,
        key: str,
        text,
        extra=None,
        in_reply_to=None,
        media=(),
        poll: polls.PollSpec | None = None,
        *,
        allowed_mentions: frozenset[int] | None = None,
    ) -> Status:
        """Post at most once per Idempotency-Key (redpoll.posting.idempotency)."""
        return await idempotency.post_once(
            self.store,
            self.queue,
            self.settings,
            author_id,
            key,
            text,
            extra,
            in_reply_to,
            media,
            poll,
            allowed_mentions=allowed_mentions,
        )

    async def get_status(self, sid) -> Status:
        return await statuses.get_status(self.store, sid)

    async def get_statuses(self, ids) -> list[Status]:
        return await statuses.get_statuses(self.store, ids)

    async def delete_status(self, sid, by_user) -> None:
        await deleting.delete_status(self.store, self.queue, sid, by_user)

    async def edit_status(
        self,
        uid,
        sid,
        text,
        *,
        spoiler_text: str = "",
        sensitive: bool = False,
        language: str | None = None,
        media=None,
        poll=editing.KEEP,
    ) -> Status:
        """Edit one's own status (redpoll.posting.editing); the status as
        edited. ``poll``: a polls.PollSpec, None (none), or as it is."""
        return await editing.edit(
            self.store,
            self.queue,
            uid,
            sid,
            text,
            spoiler_text=spoiler_text,
            sensitive=sensitive,
            language=language,
            media=media,
            poll=poll,
        )

    async def status_history(self, viewer, sid) -> tuple[Status, User | None, list[dict]]:
        """The versions of status ``sid`` if ``viewer`` may see it (the one
        visibility decision; StatusNotFound otherwise), oldest first, with
        the status and its author's record (None when gone)."""
        status = await self.seen_status(viewer, sid)
        found = await users.get_users(self.store, [status.user_id])
        return status, (found[0] if found else None), await editing.history(self.store, status)

    async def status_source(self, uid, sid) -> Status:
        """One's own status, for its source text; StatusNotFound for
        another's (as Mastodon: 404), or a missing one."""
        status = await self.get_status(sid)
        if status.user_id != validate.an_id(uid, "user_id"):
            raise StatusNotFound(f"status {sid} does not exist")
        return status

    # --- scheduled statuses (redpoll.scheduling) -----------------------------------
    async def schedule_status(
        self,
        author_id,
        at_ms: int,
        text,
        extra=None,
        in_reply_to=None,
        media=(),
        poll=None,
        key=None,
    ) -> scheduled.Scheduled:
        """A status to be posted at ``at_ms`` (at least 5 minutes ahead) by
        a job, once; ``poll`` kept as sent, ``key`` the Idempotency-Key."""
        return await scheduled.schedule(
            self.store, self.queue, author_id, at_ms, text, extra, in_reply_to, media, poll, key
        )

    async def scheduled_statuses(self, uid, **cursors: Any) -> list[scheduled.Scheduled]:
        return await scheduled.page(self.store, uid, **cursors)

    async def scheduled_status(self, uid, sid) -> scheduled.Scheduled:
        return await scheduled.get(self.store, uid, sid)

    async def reschedule_status(self, uid, sid, at_ms: int) -> scheduled.Scheduled:
        return await scheduled.reschedule(self.store, uid, sid, at_ms)

    async def cancel_scheduled_status(self, uid, sid) -> None:
        await scheduled.cancel(self.store, uid, sid)

    # --- media (redpoll.media) ---------------------------------------------------
    async def upload_media(
        self, owner, data: bytes, *, description=None, focus=None, wait: bool = True
    ) -> uploads.Upload:
        """Upload an image as an attachment to come: processed before this
        returns (``wait``), or after (the record says processing until then)."""
        upload, task = await uploads.start(
            self.store,
            self.queue,
            self.media_storage,
            validate.an_id(owner, "owner"),
            data,
            desc=uploads.description(description),
            focus_xy=uploads.focus(focus),
        )
        return await uploads.wait(task) if wait else upload

    async def media_attachment(self, owner, mid, *, description=None, focus=None) -> uploads.Upload:
        """``owner``'s upload ``mid`` not yet attached to a status, with a new
        description or focus when given (NotFound otherwise)."""
        changes = {}
        if description is not None:
            changes["desc"] = uploads.description(description)
        if focus is not None:
            changes["focus"] = uploads.focus(focus) or "0,0"
        return await uploads.get(
            self.store, validate.an_id(owner, "owner"), validate.an_id(mid, "id"), changes
        )

    async def sweep_media(self, now_ms: int | None = None) -> int:
        """Remove uploads never attached, older than a day as of ``now_ms``."""
        return await uploads.sweep(self.store, self.media_storage, now_ms)

    def media_file(self, name: str):
        """The local file of a stored name (None: not one, or not stored locally)."""
        storage = self.media_storage
        return storage.path(name) if isinstance(storage, LocalStorage) else None

    async def media_proxy(self, sid: int, aid: int, token: str, style: str) -> str:
        """Where the media proxy sends a client for a remote attachment (the
        copy kept here, or its server's URL, its fetch queued)."""
        return await remote_media.proxy_attachment(self.store, self.queue, sid, aid, token, style)

    async def media_proxy_profile(self, uid: int, kind: str) -> str:
        return await remote_media.proxy_profile_image(self.store, self.queue, uid, kind)

    async def media_cache_clear(self, older_than_s: float | None = None) -> int:
        """Drop the copies of other servers' media kept here: all of them, or
        those fetched more than ``older_than_s`` ago; how many."""
        bounds = remote_media.bounds(self.settings)
        age = 0 if older_than_s is None else older_than_s
        dropped = 0
        while True:
            done = await remote_cache.evict(
                self.store, self.media_storage, bounds, older_than_s=age
            )
            dropped += done
            if done < limits.REMOTE_MEDIA_EVICT_BATCH:
                return dropped

    async def media_cache_stats(self) -> tuple[int, int]:
        """(copies of other servers' media kept here, bytes they weigh)."""
        return await remote_cache.kept(self.store)

    async def update_credentials(self, uid, changes: dict, images: dict[str, bytes]) -> User:
        """The profile's fields (``update_profile``) and new profile images
        (``images``: kind avatar/header -> the uploaded bytes). Every image is
        checked and processed first, then their files stored, then the
        fields written, then the user record pointed at the new files. A
        refusal (422) or a storage failure (503) before the fields are
        written leaves everything as it was (the stored files are deleted
        by a job); after them, each image is pointed at on its own
        (profile_image.lua: atomic), so a clash (Conflict) leaves the
        fields new and that image old."""
        uid = validate.an_id(uid, "user_id")
        prepared = [await profile_images.prepare(kind, data) for kind, data in images.items()]
        written: list[profile_images.Written] = []
        try:
            for image in prepared:
                written.append(
                    await profile_images.write_files(
                        self.store, self.queue, self.media_storage, uid, image
                    )
                )
            user = await self.update_profile(uid, **changes)
        except BaseException:
            for image in written:  # (a failed write_files has abandoned its own)
                await profile_images.abandon(self.queue, uid, image)
            raise
        for image in written:
            await profile_images.point(self.store, self.queue, self.media_storage, uid, image)
        return await self.get_user(uid) if written else user

    async def remove_profile_image(self, uid, kind: str) -> User:
        """The avatar or header removed (profile_images.remove_image); the user."""
        await profile_images.remove_image(
            self.store, self.queue, validate.an_id(uid, "user_id"), kind
        )
        return await self.get_user(uid)

    # --- timelines -------------------------------------------------------------
    async def home_timeline(self, uid, **cursors: Any) -> Page:
        return await timelines.home(
            self.store, uid, idle_after_s=self.settings.idle_after_s, **cursors
        )

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
        changed = await follows.unfollow(self.store, self.queue, uid, target)
        if changed:  # a remote account hears of it (an Undo of the Follow)
            await fed_outbox.follow(self.store, self.queue, self.settings, uid, target, False)
        return changed

    async def is_following(self, uid, target) -> bool:
        return await follows.is_following(self.store, uid, target)

    async def following_ids(self, uid) -> frozenset[int]:
        return await follows.following_ids(self.store, uid)

    # blocks and mutes
    async def block(self, uid, target) -> None:
        await relations.block(self.store, self.queue, uid, target)
        # a remote account: its follow of uid ends here too, and its server hears of the block
        if await fed_outbox.follow(
            self.store, self.queue, self.settings, uid, target, True, kind="Block"
        ):
            await fed_followers.end_remote_follow(
                self.store, validate.an_id(uid, "user_id"), validate.an_id(target, "account_id")
            )

    async def unblock(self, uid, target) -> None:
        await relations.unblock(self.store, uid, target)
        await fed_outbox.follow(
            self.store, self.queue, self.settings, uid, target, False, kind="Block"
        )

    async def mute(self, uid, target, duration_s=0, notifications: bool = True):
        return await relations.mute(self.store, uid, target, duration_s, notifications)

    async def unmute(self, uid, target) -> None:
        await relations.unmute(self.store, uid, target)

    async def relation(self, uid, target) -> relations.Relation:
        return await relations.relation(self.store, uid, target)

    async def hidden_ids(self, uid) -> frozenset[int]:
        return await relations.hidden_ids(self.store, uid)

    async def hidden_of(self, uid) -> tuple[frozenset[int], frozenset[str]]:
        """Whom ``uid``'s streams hide (blocked either way, muted) and the
        domains ``uid`` blocks, read together."""
        ids, domains = await asyncio.gather(
            relations.hidden_ids(self.store, uid), domain_blocks.blocked(self.store, uid)
        )
        return ids, domains

    async def followers(self, uid, **page: Any):
        """Local and remote followers, newest first (federation.followers.listed)."""
        return await fed_followers.listed(self.store, uid, **page)

    async def following(self, uid, **page: Any):
        return await follows.following(self.store, uid, **page)

    # --- collections (redpoll.collections) ----------------------------------------
    async def create_collection(self, owner, **fields: Any):
        return await featured_collections.create(self.store, owner, **fields)

    async def update_collection(self, owner, cid, **fields: Any):
        return await featured_collections.update(self.store, owner, cid, **fields)

    async def delete_collection(self, owner, cid) -> None:
        await featured_collections.delete(self.store, owner, cid)

    async def collection(self, cid, viewer):
        """(collection, accounts) as ``viewer`` is shown them."""
        return await featured_collections.view(self.store, cid, viewer)

    async def collections_of(self, uid, viewer, **page: Any) -> list:
        return await featured_collections.of_account(self.store, uid, viewer, **page)

    async def collections_featuring(self, uid, viewer, **page: Any) -> list:
        return await featured_collections.featuring(self.store, uid, viewer, **page)

    async def collection_item(self, uid, cid, op: str, target):
        """``op``: 'add' (``target`` an account), 'remove' or 'revoke' (an item)."""
        act = {
            "add": featured_collections.add_item,
            "remove": featured_collections.remove_item,
            "revoke": featured_collections.revoke_item,
        }[op]
        return await act(self.store, uid, cid, target)

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

    async def unlistable(self, owner, ids) -> list[int]:
        return await lists.unlistable(self.store, owner, ids)

    async def remove_from_list(self, owner, lid, member) -> bool:
        return await lists.remove_member(self.store, self.queue, owner, lid, member)

    async def list_members(self, owner, lid) -> list[User]:
        return await lists.members(self.store, owner, lid)

    async def list_member_ids(self, owner, lid) -> frozenset[int]:
        return await lists.member_ids(self.store, owner, lid)

    # --- the conversation -------------------------------------------------------
    async def favourite(self, uid, sid) -> bool:
        changed = await favourites.set_favourite(self.store, self.queue, uid, sid, True)
        if changed:  # a remote status's server hears of it (a Like)
            await fed_outbox.like(self.store, self.queue, self.settings, uid, sid, True)
        return changed

    async def unfavourite(self, uid, sid) -> bool:
        changed = await favourites.set_favourite(self.store, self.queue, uid, sid, False)
        if changed:
            await fed_outbox.like(self.store, self.queue, self.settings, uid, sid, False)
        return changed

    async def boost(self, uid, sid) -> int:
        return await boosts.boost(self.store, self.queue, self.settings, uid, sid)

    async def unboost(self, uid, sid) -> bool:
        return await boosts.unboost(self.store, self.queue, uid, sid)

    async def bookmark(self, uid, sid) -> bool:
        return await bookmarks.set_bookmark(self.store, uid, sid, True)

    async def unbookmark(self, uid, sid) -> bool:
        return await bookmarks.set_bookmark(self.store, uid, sid, False)

    async def pin(self, uid, sid) -> Status:
        return await pins.pin(self.store, uid, sid)

    async def unpin(self, uid, sid) -> Status:
        return await pins.unpin(self.store, uid, sid)

    # --- polls (redpoll.polls) -------------------------------------------------------
    async def poll(self, viewer, pid) -> pages.Shown:
        """The status of poll ``pid`` (a poll's id is its status's) as
        ``viewer`` is shown it, with the votes; StatusNotFound when they
        may not see it, PollNotFound when it has no poll."""
        shown = await pages.one(self.store, viewer, pid)
        if not shown.statuses or polls.Poll.of(shown.statuses[0]) is None:
            raise polls.PollNotFound(f"poll {pid} does not exist")
        return shown

    async def vote(self, uid, pid, choices) -> pages.Shown:
        """``uid`` votes in poll ``pid`` (one they may see); as :meth:`poll` after.
        With federation on, the vote is journaled (jobs.PollVoteJob, held
        before it): what follows it for other servers (fed_outbox.after_vote,
        idempotent) is done here, or by a worker if this call is cut short."""
        status = await self.seen_status(uid, pid)
        if not self.settings.public_url:
            await polls.vote(self.store, uid, status.id, choices)
            await search_index.add_to_library(self.store, uid, status.id)  # (idempotent)
            return await self.poll(uid, status.id)
        held = await self.queue.hold(
            PollVoteJob(sid=status.id, author=status.user_id, uid=validate.an_id(uid, "user_id"))
        )
        try:
            await polls.vote(self.store, uid, status.id, choices)
        except RedpollError:  # refused, nothing written: nothing follows
            await self.queue.release(held)
            raise
        await search_index.add_to_library(self.store, uid, status.id)  # (idempotent)
        await fed_outbox.after_vote(self.store, self.queue, self.settings, uid, status.id)
        await self.queue.release(held)
        return await self.poll(uid, status.id)

    async def poll_states(self, statuses) -> dict[int, state.PollState]:
        """The votes of the polls among ``statuses`` as anyone is shown
        them (a stream's rendering), by status id, in one round trip."""
        commands, parse = polls.state_reads(None, list(statuses))
        return parse(await self.store.batch(commands)) if commands else {}

    # --- content filters (redpoll.filters) ------------------------------------------------
    async def filters(self, uid) -> list[filters.Filter]:
        return await filters.list_filters(self.store, uid)

    async def filter(self, uid, fid) -> filters.Filter:
        return await filters.get_filter(self.store, uid, fid)

    async def create_filter(self, uid, **fields: Any) -> filters.Filter:
        return await filters.create_filter(self.store, uid, **fields)

    async def update_filter(self, uid, fid, **fields: Any) -> filters.Filter:
        return await filters.update_filter(self.store, uid, fid, **fields)

    async def delete_filter(self, uid, fid) -> None:
        await filters.delete_filter(self.store, uid, fid)

    async def filter_keyword(self, uid, kid) -> tuple[filters.Filter, filters.Keyword]:
        return await filters.get_keyword(self.store, uid, kid)

    async def add_filter_keyword(self, uid, fid, keyword, whole_word=None) -> filters.Keyword:
        return await filters.add_keyword(self.store, uid, fid, keyword, whole_word)

    async def update_filter_keyword(
        self, uid, kid, keyword=None, whole_word=None
    ) -> filters.Keyword:
        return await filters.update_keyword(self.store, uid, kid, keyword, whole_word)

    async def delete_filter_keyword(self, uid, kid) -> None:
        await filters.delete_keyword(self.store, uid, kid)

    async def filter_status(self, uid, fsid) -> tuple[filters.Filter, filters.FilterStatus]:
        return await filters.get_status_filter(self.store, uid, fsid)

    async def add_filter_status(self, uid, fid, sid) -> filters.FilterStatus:
        """Filter a status ``uid`` may see (StatusNotFound otherwise)."""
        await self.seen_status(uid, sid)
        return await filters.add_status(self.store, uid, fid, sid)

    async def delete_filter_status(self, uid, fsid) -> None:
        await filters.delete_status_filter(self.store, uid, fsid)

    async def v1_filters(self, uid) -> list[tuple[filters.Filter, filters.Keyword]]:
        return await filters.v1_list(self.store, uid)

    async def v1_create_filter(self, uid, **fields: Any):
        return await filters.v1_create(self.store, uid, **fields)

    async def v1_update_filter(self, uid, kid, **fields: Any):
        return await filters.v1_update(self.store, uid, kid, **fields)

    async def active_filters(self, uid) -> rules.Active:
        """``uid``'s filters compiled, for a stream (redpoll.filters.rules)."""
        return await rules.active(self.store, uid)

    async def status_states(self, viewer, sids) -> list[state.StatusState]:
        return await state.states(self.store, viewer, list(sids))

    async def notifications(self, uid, **query: Any) -> list[notifications.Notification]:
        return await notifications.page(self.store, uid, **query)

    # --- what a viewer is shown (redpoll.reading.pages) ---------------------------------------------
    async def seen_status(self, viewer, sid) -> Status:
        """The status ``sid`` if ``viewer`` may see it; StatusNotFound
        otherwise, as for a status that does not exist."""
        return await visibility.require(self.store, viewer, await self.get_status(sid))

    async def show(self, viewer, statuses, *, also_users=()) -> pages.Shown:
        return await pages.show(self.store, viewer, statuses, also_users=also_users)

    async def status_page(self, viewer, sid) -> pages.Shown:
        return await pages.one(self.store, viewer, sid)

    async def statuses_page(self, viewer, sids) -> pages.Shown:
        return await pages.by_id(self.store, viewer, sids)

    async def quotes_page(self, uid, sid, **cursors: Any) -> pages.Shown:
        """The accepted quotes of ``uid``'s status ``sid``, newest first, as
        ``uid`` is shown them (redpoll.quotes.quoting_page)."""
        ids = await quotes.quoting_page(self.store, uid, sid, **cursors)
        found = await statuses.read_statuses(self.store, ids)
        return await pages.show(self.store, uid, found)

    async def revoke_quote(self, uid, sid, quoting_sid) -> pages.Shown:
        """``uid`` revokes the quote ``quoting_sid`` makes of their status
        ``sid``; the quoting status as ``uid`` is shown it."""
        quoting = await quotes.revoke(self.store, uid, sid, quoting_sid)
        return await pages.one(self.store, uid, quoting.id)

    async def set_quote_policy(self, uid, sid, policy: str | None) -> pages.Shown:
        """``uid``'s status ``sid`` gets the quote approval ``policy``."""
        status = await quotes.set_policy(self.store, uid, sid, policy)
        return await pages.one(self.store, uid, status.id)

    async def home_page(self, uid, **cursors: Any) -> pages.Shown:
        return await pages.filled(
            self.store, uid, lambda **c: self.home_timeline(uid, **c), cursors
        )

    async def list_page(self, owner, lid, **cursors: Any) -> pages.Shown:
        return await pages.filled(
            self.store, owner, lambda **c: self.list_timeline(owner, lid, **c), cursors
        )

    async def public_page(
        self, viewer, origin: str | None = None, only_media: bool = False, **cursors: Any
    ) -> pages.Shown:
        """``origin``: "local" or "remote" statuses only (pages.of_origin);
        ``only_media``: statuses with attachments only, the page read on
        past those without (pages.filled, at most limits.ONLY_MEDIA_READS
        more reads)."""
        if only_media:
            return await self._media_page(viewer, self.public_timeline, origin, cursors)
        return await pages.of_origin(
            self.store, viewer, await self.public_timeline(**cursors), origin, context="public"
        )

    async def tag_page(
        self,
        viewer,
        name,
        *,
        any_=(),
        all_=(),
        none=(),
        origin=None,
        only_media: bool = False,
        **cursors: Any,
    ) -> pages.Shown:
        """A hashtag's timeline (with ``any_``/``all_``/``none``: combined
        with other hashtags) as ``viewer`` is shown it (``origin`` and
        ``only_media`` as :meth:`public_page`)."""
        if any_ or all_ or none:

            async def read(**c: Any) -> Page:
                return await timelines.tag_combined(
                    self.store, name, any_=any_, all_=all_, none=none, **c
                )
        else:

            async def read(**c: Any) -> Page:
                return await timelines.tag(self.store, name, **c)

        if only_media:
            return await self._media_page(viewer, read, origin, cursors)
        return await pages.of_origin(
            self.store, viewer, await read(**cursors), origin, context="public"
        )

    async def _media_page(self, viewer, read, origin: str | None, cursors: dict) -> pages.Shown:
        """A public or hashtag page of statuses with attachments (of
        ``origin``, when named), filled by reading on (pages.filled)."""
        of_origin = pages.of_origin_rule(origin)
        keep = (
            pages.has_media
            if of_origin is None
            else (lambda s: pages.has_media(s) and of_origin(s))
        )
        return pages.without_silenced(
            await pages.filled(
                self.store,
                viewer,
                read,
                cursors,
                keep=keep,
                reads=limits.ONLY_MEDIA_READS,
                context="public",
            )
        )

    async def profile_page(
        self,
        viewer,
        uid,
        *,
        no_replies: bool = False,
        no_reblogs: bool = False,
        only_media: bool = False,
        tagged: str | None = None,
        **cursors: Any,
    ) -> pages.Shown:
        """``tagged``: only the public and unlisted statuses with that
        hashtag (a normalized name), as Mastodon's ``tagged=``."""
        read = (
            await timelines.profile_tagged(self.store, uid, tagged, **cursors)
            if tagged
            else await self.profile_timeline(uid, **cursors)
        )
        return await pages.profile(
            self.store,
            viewer,
            read,
            no_replies=no_replies,
            no_reblogs=no_reblogs,
            only_media=only_media,
        )

    async def pinned_page(self, viewer, uid) -> pages.Shown:
        """``uid``'s pinned statuses that ``viewer`` may see, the last pinned first."""
        await users.get_user(self.store, uid)  # an unknown account: UserNotFound
        return await pages.show(
            self.store, viewer, await pins.pinned(self.store, uid), context="account"
        )

    async def favourites_page(self, uid, **cursors: Any) -> pages.Shown:
        rows = await favourites.favourites_page(self.store, uid, **cursors)
        return await pages.marked(self.store, uid, rows)

    async def bookmarks_page(self, uid, **cursors: Any) -> pages.Shown:
        rows = await bookmarks.bookmarks_page(self.store, uid, **cursors)
        return await pages.marked(self.store, uid, rows)

    async def thread(self, viewer, sid) -> tuple[pages.Shown, frozenset[int]]:
        """A status's context; for a remote status, its thread is also
        fetched from its server by a job (at most once in a while), for the
        next time it is asked."""
        shown, ancestors = await pages.thread(self.store, viewer, sid)
        if self.settings.public_url:
            status = await self.get_status(sid)  # (the viewer may see it: pages.thread)
            if status.extra.get("uri") and await fed_threads.due(self.store, status.extra["uri"]):
                await self.queue.enqueue(ContextJob(status.id))
        return shown, ancestors

    async def favourited_by(self, sid, **page: Any):
        """Who favourited the status ``sid``: (users, cursor)."""
        return await favourites.favourited_by(self.store, sid, **page)

    async def reblogged_by(self, sid, **page: Any):
        """Who boosted the status ``sid``: (users, cursor)."""
        return await boosts.reblogged_by(self.store, sid, **page)

    # --- relationships and account pages --------------------------------------------------
    async def relationship(self, uid, target) -> relationship.Relationship:
        return await relationship.relationship(self.store, uid, target)

    async def relationships(self, uid, targets) -> list[relationship.Relationship]:
        return await relationship.relationships(self.store, uid, list(targets))

    async def block_domain(self, uid, domain) -> str:
        """``uid`` blocks ``domain`` (redpoll.relations.domain_blocks), then
        the follows both ways and the requests of its accounts end
        (redpoll.federation.member_blocks; again on a repeat, idempotent).
        The domain as kept."""
        host = domain_blocks.normalize(domain)
        # journaled: held before the block, released after its cleanup (a
        # call cut short is finished by the worker that replays it)
        held = await self.queue.hold(DomainBlockJob(uid, host))
        try:
            await domain_blocks.block(self.store, uid, host)
            await member_blocks.cleanup(self.store, self.queue, self.settings, uid, host)
        except RedpollError:
            await self.queue.release(held)
            raise
        await self.queue.release(held)
        return host

    async def unblock_domain(self, uid, domain) -> bool:
        return await domain_blocks.unblock(self.store, uid, domain)

    async def blocked_domains(self, uid, **page: Any) -> tuple[list[str], int | None]:
        return await domain_blocks.page(self.store, uid, **page)

    async def export(self, uid, kind: str, host: str, base: str) -> str:
        """``uid``'s CSV export ``kind`` (redpoll.portability.exports.FILES)."""
        return await exports.export(self.store, uid, kind, exports.Here(host, base), now_ms())

    async def endorse(self, uid, target, on: bool = True) -> bool:
        return await endorsements.endorse(self.store, uid, target, on)

    async def endorsements(self, uid, viewer, **page: Any):
        """The accounts ``uid`` endorses as ``viewer`` is shown them: (users, cursor)."""
        found, cursor = await endorsements.endorsements(self.store, uid, **page)
        return await relations.shown_accounts(self.store, viewer, found), cursor

    async def set_account_note(self, uid, target, comment) -> str:
        return await notes.set_note(self.store, uid, target, comment)

    async def lists_of(self, owner, member) -> list[lists.UserList]:
        return await lists.lists_of(self.store, owner, member)

    async def familiar_followers(self, viewer, targets) -> dict[int, list[User]]:
        """For each of ``targets``: the accounts ``viewer`` follows that
        follow it, as ``viewer`` is shown accounts (relations.shown_accounts)."""
        found = await follows.familiar_followers(self.store, viewer, list(targets))
        wanted = sorted({i for ids in found.values() for i in ids})
        shown = {
            u.id: u
            for u in await relations.shown_accounts(
                self.store, viewer, await users.get_users(self.store, wanted)
            )
        }
        return {t: [shown[i] for i in ids if i in shown] for t, ids in found.items()}

    async def follow_with_options(
        self, uid, target, reblogs: bool | None = None, notify: bool | None = None
    ) -> relationship.Relationship:
        rel = await relationship.follow(self.store, self.queue, uid, target, reblogs, notify)
        # a remote account is sent the Follow (again, if it was lost: its
        # server keeps one follow per pair)
        await fed_outbox.follow(self.store, self.queue, self.settings, uid, target, True)
        return rel

    async def credentials(self, uid) -> tuple[User, int]:
        """The user ``uid`` and how many follow requests wait for them."""
        user = await self.get_user(uid)
        return user, await follow_requests.count(self.store, user.id)

    async def blocked_accounts(self, uid, **page: Any) -> tuple[list[User], list[int]]:
        return await pages.accounts(
            self.store, await relations.blocked_page(self.store, uid, **page)
        )

    async def muted_accounts(
        self, uid, **page: Any
    ) -> tuple[list[User], list[int], dict[int, int]]:
        """The muted accounts, the page's marks, and when each mute ends
        (ms; 0: never), by account id."""
        rows = await relations.muted_terms_page(self.store, uid, **page)
        users, marks = await pages.accounts(self.store, [(t, mark) for t, mark, _ in rows])
        return users, marks, {t: ends for t, _, ends in rows}

    async def follow_requesters(self, uid, **page: Any) -> tuple[list[User], list[int]]:
        return await pages.accounts(
            self.store, await follow_requests.pending_page(self.store, uid, **page)
        )

    async def authorize_follow(self, owner, requester) -> bool:
        """``owner`` lets ``requester`` follow them (UserNotFound for an unknown requester)."""
        await self.get_user(requester)
        answered = await fed_inbox.answer_request(
            self.store, self.queue, self.settings, owner, requester, True
        )
        if answered is not None:  # a remote account's request (redpoll.federation)
            return answered
        return await follows.authorize_request(self.store, self.queue, owner, requester)

    async def reject_follow(self, owner, requester) -> bool:
        """``owner`` turns down ``requester``'s request (UserNotFound for an unknown requester)."""
        await self.get_user(requester)
        answered = await fed_inbox.answer_request(
            self.store, self.queue, self.settings, owner, requester, False
        )
        if answered is not None:
            return answered
        return await follow_requests.reject(self.store, owner, requester)

    # --- hashtags ---------------------------------------------------------------------------
    async def get_tag(self, viewer, name) -> tags.Tag:
        return await tags.get_tag(self.store, viewer, name)

    # --- muted threads -----------------------------------------------------------
    async def mute_thread(self, uid, sid, on: bool = True) -> None:
        """Mute (or unmute) the thread of status ``sid``, which ``uid`` must
        be able to see (redpoll.conversations.thread_mutes)."""
        uid = validate.an_id(uid, "user_id")
        status = await self.seen_status(uid, sid)
        await thread_mutes.mute(self.store, uid, status, on)

    # --- annual reports ----------------------------------------------------------
    def wrapstodon(self) -> int | None:
        """The year of the annual reports' campaign now, or None."""
        return annual.campaign(self.settings.wrapstodon)

    async def annual_reports(self, uid, year=None, *, unread_only=False) -> list[annual.Report]:
        """``uid``'s annual reports (of ``year`` only when it is named)."""
        uid = validate.an_id(uid, "user_id")
        if year is None:
            return await annual.reports(self.store, uid, unread_only=unread_only)
        one = await annual.report(self.store, uid, year)
        return [one] if one else []

    async def annual_report_state(self, uid, year) -> str:
        return await annual.state(self.store, uid, year, self.settings.wrapstodon)

    async def annual_report_generate(self, uid, year) -> bool:
        return await annual.request(self.store, self.queue, uid, year, self.settings.wrapstodon)

    async def annual_report_read(self, uid, year) -> bool:
        return await annual.mark_read(self.store, uid, year)

    # --- featured tags -----------------------------------------------------------
    async def featured_tags(self, uid) -> list[featured_tags.FeaturedTag]:
        return await featured_tags.featured(self.store, validate.an_id(uid, "user_id"))

    async def feature_tag(self, uid, name) -> featured_tags.FeaturedTag:
        return await featured_tags.feature(self.store, validate.an_id(uid, "user_id"), name)

    async def unfeature_tag(self, uid, fid: int) -> None:
        await featured_tags.unfeature_id(self.store, validate.an_id(uid, "user_id"), fid)

    async def set_featuring(self, uid, name, on: bool) -> tags.Tag:
        """Feature (``on``) or stop featuring ``#name`` (Mastodon's
        /tags/:name/feature); the tag as the viewer sees it."""
        uid = validate.an_id(uid, "user_id")
        if on:
            try:
                await featured_tags.feature(self.store, uid, name)
            except featured_tags.Taken:
                pass  # featured already: as asked
        else:
            await featured_tags.unfeature_name(self.store, uid, name)
        return await tags.get_tag(self.store, uid, name)

    async def featured_tag_suggestions(self, uid) -> list[tags.Tag]:
        names = await featured_tags.suggestions(self.store, validate.an_id(uid, "user_id"))
        return [await tags.get_tag(self.store, uid, n) for n in names]

    async def follow_tag(self, uid, name, on: bool = True) -> tags.Tag:
        return await tags.set_following(self.store, self.queue, uid, name, on)

    async def followed_tags(self, uid) -> list[tags.Tag]:
        names = await tags.followed(self.store, uid)
        return await tags.with_history(self.store, [tags.Tag(n, True, True) for n in names])

    # --- discovery: trends and suggestions ---------------------------------------------------
    @property
    def _trends_audience(self) -> trend_review.Audience:
        """Whom the public trends are read for (redpoll.trends.review)."""
        return trend_review.public(self.settings.trends_review)

    async def trending_tags(
        self, viewer, *, offset=None, limit=None, now: int | None = None
    ) -> list[tags.Tag]:
        return await tags.trending(
            self.store, viewer, offset=offset, limit=limit, now=now, audience=self._trends_audience
        )

    async def trending_links(
        self, *, offset=None, limit=None, now: int | None = None
    ) -> list[ranking.Trend]:
        return await ranking.trending(
            self.store, "link", offset=offset, limit=limit, now=now, audience=self._trends_audience
        )

    async def trending_page(
        self, viewer, *, offset=None, limit=None, now: int | None = None
    ) -> pages.Shown:
        """The trending statuses as ``viewer`` is shown them (mutes applied)."""
        sids = await trend_statuses.trending(
            self.store, offset=offset, limit=limit, now=now, audience=self._trends_audience
        )
        return await pages.timeline(
            self.store,
            viewer,
            await statuses.get_statuses(self.store, sids),
            muted=True,
            context="public",
        )

    async def directory(self, viewer, **query: Any) -> list[User]:
        """A page of the profile directory (redpoll.reading.directory)."""
        return await profile_directory.directory(self.store, viewer, **query)

    async def suggestions(self, uid, *, limit=None) -> list[follow_suggestions.Suggestion]:
        return await follow_suggestions.suggestions(self.store, uid, limit=limit)

    async def dismiss_suggestion(self, uid, target) -> None:
        await follow_suggestions.dismiss(self.store, uid, target)

    # --- direct conversations ---------------------------------------------------------------
    async def conversations(
        self, uid, **cursors: Any
    ) -> tuple[list[direct_messages.Conversation], pages.Shown, dict]:
        """A page of ``uid``'s direct conversations and what they show
        (redpoll.reading.pages.conversations)."""
        convs = await direct_messages.page(self.store, uid, **cursors)
        return (convs, *await pages.conversations(self.store, uid, convs))

    async def read_conversation(
        self, uid, conv, unread: bool = False
    ) -> tuple[direct_messages.Conversation, pages.Shown, dict]:
        """Mark a conversation read (or unread); the conversation and what it shows."""
        found = await direct_messages.mark_read(self.store, uid, conv, unread)
        return (found, *await pages.conversations(self.store, uid, [found]))

    async def remove_conversation(self, uid, conv) -> None:
        await direct_messages.remove(self.store, uid, conv)

    # --- notifications and markers --------------------------------------------------------
    async def notification_page(self, uid, **query: Any):
        return await pages.notification_page(self.store, uid, **query)

    async def notification(self, uid, nid):
        return await pages.notification(self.store, uid, nid)

    async def notification_groups(self, uid, **query: Any):
        return await pages.notification_groups(self.store, uid, **query)

    async def notification_group(self, uid, group_key, most: int):
        return await pages.notification_group(self.store, uid, group_key, most)

    async def dismiss_notification(self, uid, nid) -> None:
        await notifications.dismiss(self.store, uid, nid)

    async def dismiss_notification_group(self, uid, group_key) -> int:
        return await notifications.dismiss_group(self.store, uid, group_key)

    async def clear_notifications(self, uid) -> None:
        await notifications.clear(self.store, uid)

    # --- notification filtering (policy and requests) ------------------------------------
    async def notification_policy(self, uid) -> tuple[dict[str, str], tuple[int, int]]:
        """The policy and its summary (pending requests, their notifications)."""
        return (
            await requests.policy(self.store, uid),
            await pages.policy_summary(self.store, uid),
        )

    async def set_notification_policy(self, uid, changes: dict) -> None:
        await requests.set_policy(self.store, uid, changes)

    async def notification_requests(self, uid, **query: Any):
        return await pages.notification_requests(self.store, uid, **query)

    async def notification_request(self, uid, rid):
        return await pages.notification_request(self.store, uid, rid)

    async def accept_notification_requests(self, uid, ids: list) -> None:
        await requests.accept_many(self.store, uid, ids)

    async def dismiss_notification_requests(self, uid, ids: list) -> None:
        await requests.dismiss_many(self.store, uid, ids)

    async def accept_notification_request(self, uid, rid) -> None:
        await requests.accept(self.store, uid, rid)

    async def dismiss_notification_request(self, uid, rid) -> None:
        await requests.dismiss(self.store, uid, rid)

    async def unread_notifications(self, uid, cap: int) -> int:
        """Notifications newer than the ``notifications`` marker, at most ``cap``."""
        after = await markers.last_read(self.store, uid, "notifications")
        return len(await notification_view.unread(self.store, uid, after, cap))

    async def unread_notification_groups(self, uid, limit, **query: Any) -> int:
        """Notification groups with one newer than the ``notifications`` marker."""
        after = await markers.last_read(self.store, uid, "notifications")
        return await notification_view.unread_groups(self.store, uid, after, limit, **query)

    async def get_markers(self, uid, timelines_) -> list[markers.Marker]:
        return await markers.get_markers(self.store, uid, timelines_)

    async def set_markers(self, uid, positions: dict) -> list[markers.Marker]:
        return await markers.set_markers(self.store, uid, positions)

    # --- Web Push (redpoll.push) ------------------------------------------------------------
    async def vapid_key(self) -> str:
        """The server's VAPID public key (base64url), made once per database."""
        return (await vapid.server_key(self.store)).public

    async def push_subscribe(
        self,
        token: auth.Token,
        secret: str,
        *,
        endpoint,
        p256dh,
        auth_key,
        alerts=None,
        policy=None,
        standard: bool = False,
        base: str = "",
    ) -> push_subscriptions.Subscription:
        """Set the push subscription of ``token`` (``secret`` the token
        itself, which Mastodon's payload carries), replacing its last."""
        assert token.uid is not None
        return await push_subscriptions.subscribe(
            self.store,
            token.uid,
            token.digest,
            secret,
            endpoint_url=endpoint,
            key=p256dh,
            secret=auth_key,
            alerts_raw=alerts,
            policy_raw=policy,
            standard=standard,
            base=base,
            loopback=self.settings.federation_loopback,
        )

    async def push_subscription(self, token: auth.Token) -> push_subscriptions.Subscription | None:
        assert token.uid is not None
        return await push_subscriptions.get(self.store, token.uid, token.digest)

    async def update_push_subscription(
        self, token: auth.Token, alerts=None, policy=None
    ) -> push_subscriptions.Subscription | None:
        assert token.uid is not None
        return await push_subscriptions.update(self.store, token.uid, token.digest, alerts, policy)

    async def remove_push_subscription(self, token: auth.Token) -> bool:
        assert token.uid is not None
        return await push_subscriptions.remove(self.store, token.uid, token.digest)

    # --- reports --------------------------------------------------------------------------
    async def report(
        self,
        reporter,
        account,
        status_ids=(),
        comment: str = "",
        category: str = "other",
        rule_ids=(),
    ) -> tuple[moderation.Report, User]:
        """File a report; the report and the account it is about."""
        r = await moderation.report(
            self.store, reporter, account, status_ids, comment, category, rule_ids
        )
        return r, await self.get_user(r.account)

    # --- apps, tokens, rate limits --------------------------------------------------------
    async def create_app(self, name, redirect_uris, scopes=None, website=None):
        return await auth.create_app(self.store, name, redirect_uris, scopes, website)

    async def get_app(self, client_id) -> auth.App | None:
        return await auth.get_app(self.store, client_id)

    async def check_client(self, client_id, client_secret) -> auth.App:
        return await auth.check_client(self.store, client_id, client_secret)

    async def issue_token(self, app: auth.App, uid, scopes) -> tuple[str, int]:
        return await auth.issue_token(self.store, app, uid, scopes)

    async def app_token(self, client_id, uid, scopes) -> tuple[str, int] | None:
        return await auth.token_for_app(self.store, client_id, uid, scopes)

    async def register_with_token(self, client_id, scopes, form: auth.SignUp):
        user, issued = await auth.register_with_token(
            self.store, self.queue, client_id, scopes, form
        )
        # e-mail on: unconfirmed until its link is followed (redpoll.mail)
        await confirmation.signed_up(self.store, self.settings, user.id, client_id)
        return user, issued

    async def register(self, username, email, password, operator: bool = False) -> User:
        """auth.register: as the API's sign-up, or (``operator``) as ``redpoll
        admin create-user``."""
        return await auth.register(
            self.store, self.queue, username, email, password, operator=operator
        )

    async def password_grant_login(self, username, password, rate=None):
        """The user of a password grant, else None (also with two-factor on)."""
        return await auth.password_grant_login(self.store, username, password, rate)

    async def authorize_sign_in(self, app: auth.App, username, password, request, rate=None):
        """The authorize page's password step (auth.authorize_sign_in)."""
        return await auth.authorize_sign_in(self.store, app, username, password, request, rate)

    async def authorize_second_step(self, token, otp) -> auth.StepOutcome:
        """The authorize page's code step (auth.authorize_second_step)."""
        return await auth.authorize_second_step(
            self.store, token, otp, self.settings.rate_two_factor, self.settings.two_factor_key
        )

    # --- two-factor sign-in of one's own account (redpoll.accounts.two_factor) ----------
    async def two_factor_status(self, uid: int) -> two_factor.Status:
        return await two_factor.status(self.store, uid)

    async def two_factor_setup(self, uid: int, issuer: str) -> two_factor.Setup:
        """A new secret to confirm with a code; ``issuer``: the server's host,
        what the authenticator app shows with the login."""
        user = await users.get_user(self.store, uid)
        return await two_factor.begin_setup(
            self.store, uid, user.login, issuer, self.settings.two_factor_key
        )

    async def two_factor_enable(self, uid: int, code) -> list[str] | None:
        """On, with its recovery codes, if ``code`` confirms the set-up."""
        await two_factor.counted(self.store, uid, self.settings.rate_two_factor)
        return await two_factor.confirm_setup(self.store, uid, code, self.settings.two_factor_key)

    async def two_factor_disable(self, uid: int, password=None, code=None) -> bool:
        return await auth.disable_two_factor(
            self.store,
            uid,
            password,
            code,
            rate=self.settings.rate_login_account,
            code_rate=self.settings.rate_two_factor,
            key=self.settings.two_factor_key,
        )

    async def two_factor_recovery_codes(self, uid: int, password) -> list[str] | None:
        return await auth.new_recovery_codes(
            self.store, uid, password, self.settings.rate_login_account
        )

    # --- who may sign up, and invites (redpoll.instance.registrations, accounts.invites) ---
    async def registration_settings(self) -> registrations.Registrations:
        return await registrations.registrations(self.store)

    async def set_registrations(
        self, actor, mode: str, message=None, reason_required=None
    ) -> registrations.Registrations:
        return await server.set_registrations(self.store, actor, mode, message, reason_required)

    async def create_invite(self, actor, **options: Any) -> invites.Invite:
        return await invites.create(self.store, actor, **options)

    async def list_invites(self, actor) -> list[invites.Invite]:
        return await invites.listed(self.store, actor)

    async def get_invite(self, code) -> invites.Invite:
        return await invites.get(self.store, code)

    async def revoke_invite(self, actor, code) -> invites.Invite:
        return await invites.revoke(self.store, actor, code)

    async def redeem_code(self, app: auth.App, code, redirect_uri, verifier=None):
        return await auth.redeem_code(self.store, app, code, redirect_uri, verifier)

    async def revoke_token(self, client_id, client_secret, token) -> bool:
        """Revoke ``token`` for the client these credentials authenticate
        (OAuthError invalid_client when they do not)."""
        app = await self.check_client(client_id, client_secret)
        return await auth.revoke(self.store, app, token)

    # --- one's own account: sessions, password, deletion -------------------------------
    async def sessions(self, uid) -> list[auth.Session]:
        return await auth.sessions(self.store, uid)

    async def revoke_session(self, uid, session_id) -> bool:
        return await auth.revoke_session(self.store, uid, session_id)

    async def change_password(
        self, token: auth.Token, current, new, rate: ratelimit.Rate | None = None
    ) -> bool:
        """A new password if ``current`` is right; every other token revoked."""
        assert token.uid is not None
        return await auth.change_password(self.store, token.uid, current, new, token.digest, rate)

    async def delete_own_account(self, uid, password, rate: ratelimit.Rate | None = None) -> bool:
        """Delete the account ``uid`` if ``password`` is its own (False if not),
        as ``redpoll admin delete-account`` does: here the account is suspended,
        its tokens revoked and its statuses, follows, favourites and boosts
        undone; its keys are purged by a task once the jobs that started have
        drained (bounded wait). Cut short, the account stays suspended and
        hidden, and ``redpoll admin delete-account`` finishes it."""
        user = await auth.check_own_password(self.store, uid, password, rate)
        if user is None:
            return False
        await moderation.delete_account(self.store, self.queue, user.login)
        task = asyncio.create_task(self._purge_when_drained(user.id, user.login))
        self._purges.add(task)
        task.add_done_callback(self._purges.discard)
        return True

    def _purge_later(self, uid: int, login: str) -> None:
        """Purge a deleted account's keys by a task once its jobs drained
        (as for delete_own_account; cut short, ``redpoll admin
        delete-account`` finishes it)."""
        task = asyncio.create_task(self._purge_when_drained(uid, login))
        self._purges.add(task)
        task.add_done_callback(self._purges.discard)

    async def _purge_when_drained(
        self, uid: int, login: str, wait_s: float = limits.ACCOUNT_PURGE_WAIT_S
    ) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        try:
            while await self.queue.depth() > 0 and loop.time() < deadline:
                await asyncio.sleep(0.2)
            await moderation.purge_account(self.store, self.queue, uid, login)
        except (RedisError, RedpollError):
            log.exception("purging account %s: run redpoll admin delete-account %s", uid, login)

    # --- e-mail (redpoll.mail) ------------------------------------------------------------
    async def unconfirmed(self, uid: int, token_digest: str) -> bool:
        """Whether ``uid``'s address awaits confirmation (asked for a marked
        token, redpoll.accounts.standing: a confirmed account's token loses
        its mark here)."""
        return await standing.awaits_confirmation(self.store, uid, token_digest)

    async def resend_confirmation(self, token: auth.Token, email=None) -> None:
        await confirmation.resend(self.store, self.settings, token, email)

    async def email_confirmed(self, uid: int) -> bool:
        return await confirmation.confirmed(self.store, uid)

    async def follow_confirmation(self, raw, now: int | None = None) -> str | None:
        """The address a confirmation link confirmed, else None (address.AddressTaken)."""
        return await confirmation.follow(self.store, raw, now)

    async def request_password_reset(self, email) -> None:
        await recovery.request(self.store, self.settings, email)

    async def reset_link_valid(self, raw, now: int | None = None) -> bool:
        return await recovery.valid(self.store, raw, now)

    async def reset_password(self, raw, password, now: int | None = None) -> bool:
        return await recovery.reset(self.store, raw, password, now)

    async def change_email(self, uid: int, password, email, rate=None) -> str | None:
        return await address.change(self.store, self.settings, uid, password, email, rate)

    async def email_state(self, uid: int) -> tuple[str | None, str | None, bool]:
        return await address.state(self.store, uid)

    async def send_account_approved(self, uid: int) -> bool:
        """Mail ``uid`` that its sign-up was approved (for the approval flow)."""
        return await notices.send_account_approved(self.store, self.settings, uid)

    async def authenticate(self, token: str, rate: ratelimit.Rate | None):
        """The token's record and its rate-limit state (auth.authenticate);
        a user's token counts them active today (redpoll.instance.activity)."""
        info, state = await auth.authenticate(self.store, token, rate)
        if info is not None and info.uid is not None:
            await self._seen.record(self.store, info.uid)
        return info, state

    async def instance_activity(self) -> list[server_activity.Week]:
        """Mastodon's instance activity: the last 12 weeks, this one first."""
        return await server_activity.weeks(self.store)

    async def rate_hit(
        self, bucket: str, rate: ratelimit.Rate | None
    ) -> ratelimit.RateState | None:
        """Count a request against ``bucket`` (redpoll.accounts.ratelimit)."""
        return await ratelimit.hit(self.store, bucket, rate)

    # --- health -------------------------------------------------------------------------
    async def ping(self) -> None:
        await self.store.ping()

    async def job_figures(self) -> jobs.JobFigures:
        return await jobs.job_figures(self.store)

    # --- background work ---------------------------------------------------------------
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

    # --- what the server says about itself (redpoll.instance) ------------------------------------
    async def rules(self) -> list[instance.Rule]:
        return await instance.rules(self.store)

    async def add_rule(self, text: str, hint: str = "") -> instance.Rule:
        return await instance.add_rule(self.store, text, hint)

    async def remove_rule(self, rid) -> None:
        await instance.remove_rule(self.store, rid)

    async def peers(self) -> list[str]:
        """The servers whose accounts this one knows (federation.remote.peers)."""
        return await remote.peers(self.store)

    async def description(self) -> tuple[str, int | None]:
        return await instance.description(self.store)

    async def describe(self, content: str) -> None:
        await instance.describe(self.store, content)

    async def instance_settings(self) -> dict[str, str]:
        """The title, short description and contact address staff set ("": the default)."""
        return await instance.settings(self.store)

    # --- the warnings about one's own account (redpoll.moderation.appeals) ------------
    async def my_warnings(self, uid: int):
        return await appeals.mine(self.store, uid)

    async def my_warning(self, uid: int, wid):
        return await appeals.my_warning(self.store, uid, wid)

    async def appeal_warning(self, uid: int, wid, text: str):
        return await appeals.appeal(self.store, uid, wid, text)

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

    # --- from branch clientapi ---
    async def delete_media_attachment(self, owner, mid) -> None:
        """``owner``'s upload ``mid`` not attached to a status, deleted
        (NotFound; uploads.MediaInUse while attached)."""
        await uploads.delete_unattached(
            self.store, self.queue, validate.an_id(owner, "owner"), validate.an_id(mid, "id")
        )

    async def domain_block_preview(self, uid, domain) -> tuple[int, int]:
        """(follows, followers) of ``uid`` on ``domain`` that a block of it would end."""
        return await member_blocks.preview(
            self.store, validate.an_id(uid, "user_id"), domain_blocks.normalize(domain)
        )

    async def link_page(self, viewer, url, *, local: bool = False, **cursors: Any) -> pages.Shown:
        """A trending link's timeline (Mastodon 4.3's LinkFeed): the public
        statuses that carried it, of discoverable accounts (``local``: of
        this server's only), newest first, as ``viewer`` is shown them;
        NotFound for a link that does not trend now."""
        link = trend_links.normalize(url) if isinstance(url, str) else None
        if link is None or not await ranking.trends(
            self.store, "link", link, audience=self._trends_audience
        ):
            raise NotFound("the link does not trend")
        read = await statuses.get_statuses(
            self.store, await trend_links.statuses(self.store, link, **cursors)
        )
        authors = {u.id: u for u in await users.get_users(self.store, {s.user_id for s in read})}
        kept = [
            s
            for s in read
            if (a := authors.get(s.user_id)) is not None
            and a.discoverable
            and not (local and a.remote)
        ]
        return await pages.timeline(
            self.store, viewer, kept, muted=True, read=read, context="public"
        )
