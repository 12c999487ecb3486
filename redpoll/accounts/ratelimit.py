"""Fixed-window rate limits in Redis (Mastodon's rack-attack style, notes A9).

A bucket (``ip:<addr>:api``, ``ip:<addr>:signup``, a token digest...) gets one
counter per window of ``period`` seconds, aligned to the epoch; the counter
expires shortly after its window ends. Counting is one script call on one key
(``rate_hit.lua``: INCR and PEXPIRE together, atomic), so concurrent API
processes share the count. Token buckets are counted by ``auth_hit.lua``
together with the token lookup (see ``auth.authenticate``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..core import keys
from ..storage.store import Store

#: Counters outlive their window by this much (clock skew between processes).
EXPIRY_SLACK_MS = 5_000

Rate = tuple[int, int]  # (requests, seconds)


@dataclass(frozen=True, slots=True)
class RateState:
    limit: int
    remaining: int
    reset: float  # epoch seconds when the window ends

    @property
    def exceeded(self) -> bool:
        return self.remaining < 0

    def headers(self) -> dict[str, str]:
        """Mastodon's X-RateLimit-* headers (Reset as ISO 8601)."""
        reset = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.reset))
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(self.remaining, 0)),
            "X-RateLimit-Reset": reset,
        }


def window(rate: Rate, now: float | None = None) -> tuple[int, float, int]:
    """(window index, window end in epoch seconds, counter ttl in ms)."""
    count, period = rate
    now = time.time() if now is None else now
    index = int(now // period)
    end = (index + 1) * period
    return index, end, int((end - now) * 1000) + EXPIRY_SLACK_MS


def state(rate: Rate, counted: int, end: float) -> RateState:
    return RateState(rate[0], rate[0] - counted, end)


async def hit(store: Store, bucket: str, rate: Rate | None) -> RateState | None:
    """Count one request in ``bucket``; None when the limit is switched off."""
    if rate is None:
        return None
    index, end, ttl_ms = window(rate)
    counted = await store.run("rate_hit", [keys.rate(bucket, index)], [ttl_ms])
    return state(rate, int(counted), end)
