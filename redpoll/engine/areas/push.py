"""Web Push: the server's key and each token's subscription."""

from __future__ import annotations

from ...accounts import auth
from ...push import subscriptions as push_subscriptions
from ...push import vapid
from .base import Area


class Push(Area):
    async def vapid_key(self) -> str:
        """The server's VAPID public key (base64url), made once per database."""
        return (await vapid.server_key(self.store)).public

    async def subscribe(
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

    async def subscription(self, token: auth.Token) -> push_subscriptions.Subscription | None:
        assert token.uid is not None
        return await push_subscriptions.get(self.store, token.uid, token.digest)

    async def update(
        self, token: auth.Token, alerts=None, policy=None
    ) -> push_subscriptions.Subscription | None:
        assert token.uid is not None
        return await push_subscriptions.update(self.store, token.uid, token.digest, alerts, policy)

    async def remove(self, token: auth.Token) -> bool:
        assert token.uid is not None
        return await push_subscriptions.remove(self.store, token.uid, token.digest)
