"""The one settings object. Read from the environment, checked at once.

A bad value raises :class:`~redpoll.errors.ConfigError` naming the variable,
so a typo stops the process at start-up instead of misbehaving later.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Mapping

from . import limits
from .errors import ConfigError

_FSYNC = ("always", "everysec", "no")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def _int(env: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not an integer") from None
    if not lo <= value <= hi:
        raise ConfigError(f"{name}={value} is outside {lo}..{hi}")
    return value


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    low = raw.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ConfigError(f"{name}={raw!r} is not a boolean (use 1/0, true/false)")


@dataclass(frozen=True)
class Settings:
    #: ``None`` means: start the embedded server in ``data_dir``.
    redis_url: str | None = None
    #: Talk Redis Cluster protocol to ``redis_url`` (a seed node).
    cluster: bool = False
    data_dir: str = "redpoll-data"
    #: AOF fsync policy of the embedded server (see README, "Durability").
    fsync: str = "everysec"
    #: A job unacknowledged this long is taken over by another worker.
    job_claim_ms: int = 30_000
    fanout_batch: int = limits.FANOUT_BATCH
    #: Concurrent jobs one worker process runs.
    worker_concurrency: int = 4

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        env = os.environ if env is None else env
        url = env.get("REDIS_URL") or None
        if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError(f"REDIS_URL={url!r} must start with redis://, rediss:// or unix://")
        fsync = env.get("REDPOLL_FSYNC", "everysec")
        if fsync not in _FSYNC:
            raise ConfigError(f"REDPOLL_FSYNC={fsync!r} must be one of {', '.join(_FSYNC)}")
        cluster = _bool(env, "REDPOLL_CLUSTER", False)
        if cluster and url is None:
            raise ConfigError("REDPOLL_CLUSTER=1 needs REDIS_URL pointing at a cluster node")
        return cls(
            redis_url=url,
            cluster=cluster,
            data_dir=env.get("REDPOLL_DATA_DIR") or "redpoll-data",
            fsync=fsync,
            job_claim_ms=_int(env, "REDPOLL_JOB_CLAIM_MS", 30_000, 100, 3_600_000),
            fanout_batch=_int(env, "REDPOLL_FANOUT_BATCH", limits.FANOUT_BATCH, 1, 10_000),
            worker_concurrency=_int(env, "REDPOLL_WORKER_CONCURRENCY", 4, 1, 256),
        )

    def with_(self, **changes) -> "Settings":
        return replace(self, **changes)
