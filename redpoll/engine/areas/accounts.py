"""One's own account: sign-up, profile and its images, password, sessions, two-factor sign-in, e-mail, deletion, and the data one takes along."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from redis.exceptions import RedisError

from ...accounts import account, auth, ratelimit, standing, two_factor
from ...core import limits, validate
from ...core.errors import RedpollError
from ...core.models import User, now_ms
from ...mail import address, confirmation, notices, recovery
from ...media import profile_images
from ...moderation import moderation
from ...portability import exports
from ...records import users
from ...relations import (
    follow_requests,
)
from ...search.jobs import ReindexAuthorJob
from .base import Area, Deps

log = logging.getLogger("redpoll.engine")


class Accounts(Area):
    def __init__(self, deps: Deps):
        super().__init__(deps)
        #: accounts being purged after their owner deleted them (delete_own_account)
        self._purges: set[asyncio.Task] = set()

    def cancel_purges(self) -> None:
        """Stop the purges under way (the engine closes; ``redpoll admin
        delete-account`` finishes one cut short)."""
        for task in self._purges:
            task.cancel()

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

    async def export(self, uid, kind: str, host: str, base: str) -> str:
        """``uid``'s CSV export ``kind`` (redpoll.portability.exports.FILES)."""
        return await exports.export(self.store, uid, kind, exports.Here(host, base), now_ms())

    async def credentials(self, uid) -> tuple[User, int]:
        """The user ``uid`` and how many follow requests wait for them."""
        user = await self.get_user(uid)
        return user, await follow_requests.count(self.store, user.id)

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

    def purge_later(self, uid: int, login: str) -> None:
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
