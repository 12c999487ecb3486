"""Who is asking: apps, tokens, sign-in steps, registration with a token, invites, rate limits."""

from __future__ import annotations

from typing import Any

from ...accounts import auth, invites, ratelimit
from ...core.models import User
from ...instance import activity as server_activity
from ...mail import confirmation
from .base import Area, Deps


class Auth(Area):
    def __init__(self, deps: Deps):
        super().__init__(deps)
        #: who this process recorded active today (redpoll.instance.activity)
        self._seen = server_activity.Seen()

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

    async def authenticate(self, token: str, rate: ratelimit.Rate | None):
        """The token's record and its rate-limit state (auth.authenticate);
        a user's token counts them active today (redpoll.instance.activity)."""
        info, state = await auth.authenticate(self.store, token, rate)
        if info is not None and info.uid is not None:
            await self._seen.record(self.store, info.uid)
        return info, state

    async def missing_tokens(self, digests) -> list:
        """Which of the token ``digests`` no longer exist (revoked, expired)."""
        return await auth.missing_tokens(self.store, digests)

    async def rate_hit(
        self, bucket: str, rate: ratelimit.Rate | None
    ) -> ratelimit.RateState | None:
        """Count a request against ``bucket`` (redpoll.accounts.ratelimit)."""
        return await ratelimit.hit(self.store, bucket, rate)
