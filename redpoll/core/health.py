"""Whether this process can reach its database, as its own calls find out.

Every part of a process that talks to Redis (HTTP handlers, the job worker,
the stream hub) reports a lost connection here instead of logging it: the
first report logs one WARNING line, and a probe then PINGs the server every
``limits.DB_PROBE_INTERVAL_S`` until it answers, which logs one INFO line.
So an outage of any length costs two log lines per process, not a traceback
per request or per retry, and ``/ready`` and the stream
health endpoint answer from the same state.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
from collections.abc import Awaitable, Callable

from redis.exceptions import (
    BusyLoadingError,
    ClusterDownError,
    ConnectionError,
    RedisClusterException,
    TimeoutError,
    TryAgainError,
)

from . import limits, metrics

log = logging.getLogger("redpoll.health")

Ping = Callable[[], Awaitable[object]]

#: What a call raises while the database is away, as opposed to a bug: a
#: lost or refused connection, no reply in time, a cluster none of whose
#: nodes answers or that has no master for some slots, a server still
#: loading its data. Loops that talk to the database report these with
#: :meth:`Reachability.lost` and wait (:class:`Backoff`), without a traceback.
OUTAGE = (
    ConnectionError,
    TimeoutError,
    RedisClusterException,
    ClusterDownError,
    TryAgainError,
    BusyLoadingError,
    OSError,
)


class Backoff:
    """Bounded exponential waits between a loop's attempts while the database
    is away: ``limits.OUTAGE_BACKOFF_FIRST_S``, doubling up to
    ``limits.OUTAGE_BACKOFF_MAX_S``; :meth:`reset` after a success. (Each
    attempt on a cluster that is gone costs a reading of its slot map from
    every node it knows: retried without a pause, that spun a CPU.)"""

    def __init__(
        self,
        first: float = limits.OUTAGE_BACKOFF_FIRST_S,
        most: float = limits.OUTAGE_BACKOFF_MAX_S,
    ) -> None:
        self.first, self.most = first, most
        self.next = first

    def reset(self) -> None:
        self.next = self.first

    async def wait(self, nudge: asyncio.Event | None = None) -> None:
        """Wait the next delay, or until ``nudge`` is set (then cleared)."""
        delay, self.next = self.next, min(self.next * 2, self.most)
        if nudge is None:
            await asyncio.sleep(delay)
            return
        try:
            await asyncio.wait_for(nudge.wait(), delay)
        except builtins.TimeoutError:
            pass
        nudge.clear()


class Reachability:
    def __init__(self) -> None:
        self.up = True
        #: monotonic time of the last change
        self.since = time.monotonic()
        self.outages = 0
        self._ping: Ping | None = None
        self._renew: Ping | None = None
        self._probe: asyncio.Task | None = None
        #: set by a call that succeeded while the probe waits: it tries now
        self._nudge: asyncio.Event | None = None

    def watch(self, ping: Ping | None, renew: Ping | None = None) -> None:
        """How to ask the database whether it is back (the engine's PING),
        and what to run once it is (``renew``: drop the pooled connections
        opened before the outage, which would each fail once more and
        report a second outage); None when the engine closes."""
        self._ping = ping
        self._renew = renew
        if ping is None and self._probe is not None:
            self._probe.cancel()
            self._probe = None

    def forget(self, ping: Ping) -> None:
        """Stop probing with ``ping`` if it is the one watched (its engine closes)."""
        if self._ping == ping:
            self.watch(None)

    def lost(self, who: str, exc: BaseException | str) -> None:
        if self.up:
            self.up = False
            self.since = time.monotonic()
            self.outages += 1
            metrics.DATABASE_OUTAGES.inc()
            detail = " ".join(str(exc).split()) or type(exc).__name__
            log.warning("database unreachable", extra={"noticed_by": who, "error": detail[:300]})
        self._start_probe()

    def back(self, who: str) -> None:
        """A call succeeded. With a probe running, only the probe says the
        database is back: it first renews the pooled connections, so that
        one from before the outage cannot fail right after; the success
        has it try at once rather than wait out its back-off."""
        if self._ping is not None and who != "probe":
            if not self.up and self._nudge is not None:
                self._nudge.set()
            return
        if not self.up:
            down_s = time.monotonic() - self.since
            self.up = True
            self.since = time.monotonic()
            log.info(
                "database reachable again", extra={"noticed_by": who, "down_s": round(down_s, 2)}
            )

    def _start_probe(self) -> None:
        if self._ping is None or (self._probe is not None and not self._probe.done()):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._probe = loop.create_task(self._probing(), name="redpoll-db-probe")

    async def _probing(self) -> None:
        backoff = Backoff(limits.DB_PROBE_INTERVAL_S, limits.OUTAGE_BACKOFF_MAX_S)
        self._nudge = asyncio.Event()
        while not self.up and self._ping is not None:
            await backoff.wait(self._nudge)
            try:
                await asyncio.wait_for(self._ping(), limits.DB_PROBE_INTERVAL_S * 4)
                if self._renew is not None:
                    await self._renew()
            except asyncio.CancelledError:
                raise
            except Exception:
                continue
            self.back("probe")


#: The one state of this process.
DATABASE = Reachability()
