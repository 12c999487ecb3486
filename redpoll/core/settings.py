"""The one settings object. Read from the environment, checked at once.

A bad value raises :class:`~redpoll.core.errors.ConfigError` naming the variable,
so a typo stops the process at start-up instead of misbehaving later.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit, urlunsplit

from . import limits
from .errors import ConfigError

_FSYNC = ("always", "everysec", "no")
#: The embedded server's URL, as ``redpoll serve`` hands it to its HTTP
#: processes (REDIS_URL stays the user's setting alone).
EMBEDDED_URL_ENV = "REDPOLL_EMBEDDED_URL"
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


def _rate(env: Mapping[str, str], name: str, default: tuple[int, int] | None):
    """A rate limit "COUNT/SECONDS" (e.g. "300/300"), or "off"."""
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    if raw.strip().lower() == "off":
        return None
    try:
        count, seconds = (int(part) for part in raw.split("/"))
    except ValueError:
        raise ConfigError(f"{name}={raw!r} must be COUNT/SECONDS (e.g. 300/300) or off") from None
    if not (1 <= count <= 10**9 and 1 <= seconds <= 86_400 * 7):
        raise ConfigError(f"{name}={raw!r}: COUNT must be 1..1e9 and SECONDS 1..604800")
    return count, seconds


def _two_factor_key(env: Mapping[str, str]) -> str | None:
    raw = env.get("REDPOLL_TWO_FACTOR_KEY") or None
    if raw is not None and len(raw) < 32:
        raise ConfigError("REDPOLL_TWO_FACTOR_KEY must be at least 32 characters (a random string)")
    return raw


def _cap(env: Mapping[str, str], name: str, default: int) -> int | None:
    """A count limit (1..1e6), or "off" (None)."""
    raw = env.get(name)
    if raw is not None and raw.strip().lower() == "off":
        return None
    return _int(env, name, default, 1, 1_000_000)


def _public_url(env: Mapping[str, str]) -> str | None:
    """REDPOLL_PUBLIC_URL: http(s)://host[:port][/path], no query or fragment."""
    raw = env.get("REDPOLL_PUBLIC_URL") or None
    if raw is None:
        return None
    parts = urlsplit(raw)
    if (
        parts.scheme not in ("http", "https")
        or not parts.netloc
        or parts.query
        or parts.fragment
        or any(c.isspace() for c in raw)
    ):
        raise ConfigError(
            f"REDPOLL_PUBLIC_URL={raw!r} must be an http:// or https:// URL "
            "without query or fragment, e.g. https://social.example"
        )
    return raw.rstrip("/")


def _metrics_token(env: Mapping[str, str]) -> str | None:
    """REDPOLL_METRICS_TOKEN: unset or empty means no scraping."""
    raw = env.get("REDPOLL_METRICS_TOKEN") or None
    if raw is not None and (
        len(raw) < limits.METRICS_TOKEN_MIN_CHARS
        or not raw.isascii()
        or any(c.isspace() for c in raw)
    ):
        raise ConfigError(
            f"REDPOLL_METRICS_TOKEN must be at least "
            f"{limits.METRICS_TOKEN_MIN_CHARS} ASCII characters without spaces"
        )
    return raw


def _http_url(env: Mapping[str, str], name: str, example: str) -> str | None:
    """An http(s)://host[:port][/path] URL without query or fragment, or None."""
    raw = env.get(name) or None
    if raw is None:
        return None
    parts = urlsplit(raw)
    if (
        parts.scheme not in ("http", "https")
        or not parts.netloc
        or parts.query
        or parts.fragment
        or any(c.isspace() for c in raw)
    ):
        raise ConfigError(
            f"{name}={raw!r} must be an http:// or https:// URL without query "
            f"or fragment, e.g. {example}"
        )
    return raw.rstrip("/")


_S3_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]")
_S3_REGION = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
_S3_VARS = (
    "REDPOLL_S3_ENDPOINT",
    "REDPOLL_S3_REGION",
    "REDPOLL_S3_ACCESS_KEY",
    "REDPOLL_S3_SECRET_KEY",
    "REDPOLL_S3_PUBLIC_URL",
)


def _s3(env: Mapping[str, str]) -> dict:
    """The REDPOLL_S3_* settings, checked together: none without the bucket
    (a typo in its name would silently keep files on the local disk), the
    public URL with it (it is written into every record), both keys or
    neither (neither: boto3's own chain, e.g. AWS_* variables or an
    instance role)."""
    bucket = env.get("REDPOLL_S3_BUCKET") or None
    if bucket is None:
        stray = [name for name in _S3_VARS if env.get(name)]
        if stray:
            raise ConfigError(
                f"{stray[0]} is set but REDPOLL_S3_BUCKET is not: set the bucket "
                "to keep media in S3, or unset the REDPOLL_S3_* variables"
            )
        return {}
    if not _S3_BUCKET.fullmatch(bucket):
        raise ConfigError(
            f"REDPOLL_S3_BUCKET={bucket!r} is not a bucket name (3-63 lowercase "
            "letters, digits, dots, hyphens)"
        )
    public_url = _http_url(env, "REDPOLL_S3_PUBLIC_URL", "https://media.example")
    if public_url is None:
        raise ConfigError(
            "REDPOLL_S3_PUBLIC_URL must be set with REDPOLL_S3_BUCKET: the base "
            "clients fetch media files from (the bucket's public address, e.g. "
            f"https://s3.example/{bucket}, or a CDN's)"
        )
    region = env.get("REDPOLL_S3_REGION") or "us-east-1"
    if not _S3_REGION.fullmatch(region):
        raise ConfigError(f"REDPOLL_S3_REGION={region!r} is not a region name (e.g. us-east-1)")
    access = env.get("REDPOLL_S3_ACCESS_KEY") or None
    secret = env.get("REDPOLL_S3_SECRET_KEY") or None
    if (access is None) != (secret is None):
        raise ConfigError(
            "REDPOLL_S3_ACCESS_KEY and REDPOLL_S3_SECRET_KEY go together: set "
            "both, or neither (then boto3 finds credentials itself: AWS_* "
            "variables, ~/.aws, an instance role)"
        )
    return {
        "s3_bucket": bucket,
        "s3_public_url": public_url,
        "s3_region": region,
        "s3_endpoint": _http_url(env, "REDPOLL_S3_ENDPOINT", "https://s3.example"),
        "s3_access_key": access,
        "s3_secret_key": secret,
    }


_SMTP_SECURITY = ("none", "starttls", "tls")
_SMTP_VARS = (
    "REDPOLL_SMTP_PORT",
    "REDPOLL_SMTP_USERNAME",
    "REDPOLL_SMTP_PASSWORD",
    "REDPOLL_SMTP_FROM",
    "REDPOLL_SMTP_SECURITY",
)
_MAILBOX = re.compile(r"[^@\s<>]+@[^@\s<>]+")


def _smtp(env: Mapping[str, str], public_url: str | None) -> dict:
    """The REDPOLL_SMTP_* settings, checked together: none without the host
    (e-mail is off), the sender's address with it, and REDPOLL_PUBLIC_URL
    (the links in the mails are built on it, never on a request's Host
    header, which a caller chooses); username and password go together."""
    host = (env.get("REDPOLL_SMTP_HOST") or "").strip() or None
    if host is None:
        stray = [name for name in _SMTP_VARS if env.get(name)]
        if stray:
            raise ConfigError(
                f"{stray[0]} is set but REDPOLL_SMTP_HOST is not: set the host to "
                "send e-mail, or unset the REDPOLL_SMTP_* variables"
            )
        return {}
    if any(c.isspace() for c in host) or "/" in host:
        raise ConfigError(f"REDPOLL_SMTP_HOST={host!r} is not a host name or address")
    security = (env.get("REDPOLL_SMTP_SECURITY") or "starttls").strip().lower()
    if security not in _SMTP_SECURITY:
        raise ConfigError(
            f"REDPOLL_SMTP_SECURITY={security!r} must be one of {', '.join(_SMTP_SECURITY)}"
        )
    port = _int(env, "REDPOLL_SMTP_PORT", limits.SMTP_PORTS[security], 1, 65_535)
    sender = (env.get("REDPOLL_SMTP_FROM") or "").strip()
    if not sender:
        raise ConfigError(
            "REDPOLL_SMTP_FROM must be set with REDPOLL_SMTP_HOST: the sender "
            "address of the server's mails, e.g. notifications@social.example"
        )
    if not _MAILBOX.search(sender) or "\n" in sender or "\r" in sender:
        raise ConfigError(
            f"REDPOLL_SMTP_FROM={sender!r} is not an address (e.g. "
            "notifications@social.example or 'Social <notifications@social.example>')"
        )
    if public_url is None:
        raise ConfigError(
            "REDPOLL_PUBLIC_URL must be set with REDPOLL_SMTP_HOST: the links in "
            "the mails (confirmations, password resets) are built on it"
        )
    username = env.get("REDPOLL_SMTP_USERNAME") or None
    password = env.get("REDPOLL_SMTP_PASSWORD") or None
    if (username is None) != (password is None):
        raise ConfigError(
            "REDPOLL_SMTP_USERNAME and REDPOLL_SMTP_PASSWORD go together: set both "
            "(to log in to the SMTP server), or neither"
        )
    return {
        "smtp_host": host,
        "smtp_port": port,
        "smtp_security": security,
        "smtp_from": sender,
        "smtp_username": username,
        "smtp_password": password,
    }


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


def _wrapstodon(env: Mapping[str, str]) -> str:
    raw = env.get("REDPOLL_WRAPSTODON", "on").strip().lower()
    if raw in ("on", "off") or (raw.isdigit() and len(raw) == 4):
        return raw
    raise ConfigError(f"REDPOLL_WRAPSTODON={raw!r} must be on, off or a year (2026)")


def default_data_dir(env: Mapping[str, str] | None = None) -> str:
    """Where the embedded server keeps its data when REDPOLL_DATA_DIR is not
    set: ``$XDG_DATA_HOME/redpoll``, else ``~/.local/share/redpoll``. One
    absolute place, so a command run from another directory finds the same
    database instead of creating an empty one where it stands."""
    env = os.environ if env is None else env
    home = env.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.abspath(os.path.join(home, "redpoll"))


def redact(url: str) -> str:
    """A database URL without its password, for logs and messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname or ''}" + (
        f":{parts.port}" if parts.port else ""
    )
    return urlunsplit(parts._replace(netloc=netloc))


@dataclass(frozen=True)
class Settings:
    #: ``None`` means: start the embedded server in ``data_dir``.
    redis_url: str | None = None
    #: Where ``redis_url`` came from, for messages: "REDIS_URL", or
    #: "embedded" (the embedded server on ``data_dir`` that ``redpoll serve``
    #: runs, handed to its HTTP processes in EMBEDDED_URL_ENV).
    redis_url_origin: str = "REDIS_URL"
    #: Talk Redis Cluster protocol to ``redis_url`` (a seed node).
    cluster: bool = False
    #: Absolute; resolved once (REDPOLL_DATA_DIR or :func:`default_data_dir`).
    data_dir: str = field(default_factory=default_data_dir)
    #: Where ``data_dir`` came from, for messages: "REDPOLL_DATA_DIR" or "default".
    data_dir_origin: str = "default"
    #: AOF fsync policy of the embedded server (see docs/design.md, "Durability").
    fsync: str = "everysec"
    #: A job unacknowledged this long is taken over by another worker.
    job_claim_ms: int = 30_000
    fanout_batch: int = limits.FANOUT_BATCH
    #: Followers above which an author's statuses are not fanned out: each
    #: follower's home catches up with them when read (redpoll.timelines.hybrid);
    #: MAX_ID = never.
    fanout_threshold: int = limits.FANOUT_THRESHOLD
    #: Seconds without a home read after which fan-out skips a user.
    idle_after_s: int = limits.IDLE_AFTER_S
    #: Concurrent jobs one worker process runs per job shard (of either
    #: lane: the ingress lane's slots are its own, limits.INGRESS_SHARDS).
    worker_concurrency: int = 4
    # --- HTTP API (redpoll serve); rate limits are (requests, seconds) or None = off.
    # Defaults are Mastodon's (rack_attack.rb, see shared notes A9).
    #: Requests per access token.
    rate_token: tuple[int, int] | None = (300, 300)
    #: Unauthenticated requests (and requests with a bad token) per client IP.
    rate_ip: tuple[int, int] | None = (300, 300)
    #: Account registrations per client IP.
    rate_signup: tuple[int, int] | None = (5, 1800)
    #: Log-in attempts (password grant, authorize form) per client IP.
    rate_login: tuple[int, int] | None = (25, 300)
    #: Log-in attempts per account, from any IP (Mastodon: 25 an hour).
    rate_login_account: tuple[int, int] | None = (25, 3600)
    #: Two-factor codes tried per account, from any IP (a wrong one or a right one).
    rate_two_factor: tuple[int, int] | None = (10, 300)
    #: The key two-factor secrets are encrypted with at rest (any string, at
    #: least 32 characters; REDPOLL_TWO_FACTOR_KEY). None: a random key kept
    #: in the database itself (a dump of it alone then holds both).
    two_factor_key: str | None = field(default=None, repr=False)
    #: Apps created and tokens issued per client IP (each app and token would
    #: otherwise bring a fresh per-token bucket).
    rate_apps: tuple[int, int] | None = (100, 300)
    #: Authenticated requests per client IP, whatever token they carry
    #: (Mastodon's per-user figure, 1,500 / 5 min, counted per IP).
    rate_ip_tokens: tuple[int, int] | None = (1500, 300)
    #: Activities taken into the inboxes per sending server (its host), a
    #: 429 past them: a server cannot flood the queue local work shares.
    rate_inbox_host: tuple[int, int] | None = (3000, 300)
    #: Run the background job worker inside each HTTP worker process.
    serve_jobs: bool = True
    #: Instance title shown by /api/v1/instance.
    instance_title: str = "Redpoll"
    #: Log one JSON line per HTTP request (method, path, status, duration).
    access_log: bool = True
    #: Trends show only what a moderator approved (REDPOLL_TRENDS_REVIEW=1);
    #: otherwise everything that trends unless a moderator rejected it.
    trends_review: bool = False
    #: Streaming: events one connection may have waiting before it is
    #: cut off as stalled (FALLING_BEHIND warning at 60% of it).
    stream_queue_max: int = limits.STREAM_QUEUE_MAX
    #: Seconds between keep-alive newlines on v1.1 streams (Twitter: 30).
    stream_keepalive_s: int = int(limits.STREAM_KEEPALIVE_S)
    #: Seconds between SSE heartbeat comments on Mastodon streams (Mastodon: 15).
    sse_heartbeat_s: int = int(limits.SSE_HEARTBEAT_S)
    #: /ready says "jobs not flowing" once the oldest queued job is older than this.
    ready_job_age_s: int = int(limits.READY_MAX_JOB_AGE_S)
    #: Base of every link the API and the streams send (REDPOLL_PUBLIC_URL,
    #: e.g. https://social.example); None: each client's own request's.
    public_url: str | None = None
    #: Outgoing requests (federation, Web Push) may use http:// and reach
    #: loopback and private addresses (REDPOLL_FEDERATION_LOOPBACK=1): for
    #: tests and development on one machine only; off, peers and push
    #: services are reached over https at public addresses (redpoll.net.safety).
    federation_loopback: bool = False
    #: The shortest a poll may run (s; REDPOLL_POLL_EXPIRES_MIN_S): Mastodon's
    #: five minutes unless lowered, for tests and trials on one machine.
    poll_expires_min_s: int = limits.POLL_EXPIRES_MIN_S
    #: Other servers must sign their fetches of this one's actors, notes and
    #: collections (REDPOLL_AUTHORIZED_FETCH=1, Mastodon's "secure mode");
    #: WebFinger and the server's own actor stay open.
    authorized_fetch: bool = False
    #: Stream backfills / resumes (v1.1 count, SSE Last-Event-ID) per
    #: identifier and per client IP: (replays, seconds) or None = off.
    stream_replays_per_identifier: tuple[int, int] | None = (
        limits.STREAM_REPLAYS_PER_IDENTIFIER,
        limits.STREAM_REPLAY_WINDOW_S,
    )
    stream_replays_per_ip: tuple[int, int] | None = (
        limits.STREAM_REPLAYS_PER_IP,
        limits.STREAM_REPLAY_WINDOW_S,
    )
    #: Open streams (v1.1, SSE, WebSocket) per identifier and per client IP in
    #: one process; None = no limit.
    stream_connections_per_identifier: int | None = limits.STREAM_CONNECTIONS_PER_IDENTIFIER
    stream_connections_per_ip: int | None = limits.STREAM_CONNECTIONS_PER_IP
    #: Seconds between the checks of open streams' tokens (a backstop for a
    #: revocation whose end event was lost).
    stream_token_check_s: int = int(limits.STREAM_TOKEN_CHECK_S)
    #: Bearer token a scraper sends to read ``/metrics``; None: ``/metrics``
    #: answers 404 (its figures are for the operator, not the public).
    metrics_token: str | None = None
    #: Seconds between WebSocket pings; a socket that has not answered the
    #: last one when the next is due is dropped (Mastodon: 30).
    ws_ping_s: int = int(limits.WS_PING_INTERVAL_S)
    #: Seconds a connection may take to send its request headers (serve).
    header_timeout_s: int = limits.HEADER_TIMEOUT_S
    #: Open connections one HTTP process serves; beyond them 503 (serve).
    connections_max: int = limits.SERVE_CONNECTIONS_MAX
    #: Where uploaded media files are kept (REDPOLL_MEDIA_DIR); None: the
    #: ``media`` folder of ``data_dir`` (:attr:`media_root`).
    media_dir: str | None = None
    #: Media files in an S3-compatible bucket instead (REDPOLL_S3_BUCKET;
    #: redpoll.media.storage.S3Storage); None: in :attr:`media_root`.
    s3_bucket: str | None = None
    #: Where clients fetch them: this base, a slash, the file's name
    #: (REDPOLL_S3_PUBLIC_URL; required with the bucket).
    s3_public_url: str | None = None
    #: The S3 API's address (REDPOLL_S3_ENDPOINT; None: AWS's), reached
    #: with the bucket in the path when set.
    s3_endpoint: str | None = None
    s3_region: str = "us-east-1"
    #: REDPOLL_S3_ACCESS_KEY / _SECRET_KEY; None: boto3's own credential chain.
    s3_access_key: str | None = None
    s3_secret_key: str | None = field(default=None, repr=False)
    #: Other servers' media kept here (redpoll.media.remote): a copy is
    #: dropped once older than this (s; REDPOLL_REMOTE_MEDIA_MAX_AGE_S) or,
    #: oldest first, while all copies take more than this (bytes;
    #: REDPOLL_REMOTE_MEDIA_MAX_BYTES).
    remote_media_max_age_s: int = limits.REMOTE_MEDIA_MAX_AGE_S
    remote_media_max_bytes: int = limits.REMOTE_MEDIA_MAX_BYTES
    #: E-mail (redpoll.mail): the SMTP server (REDPOLL_SMTP_HOST; None: no
    #: e-mail is sent and no account needs confirming), its port, how the
    #: connection is secured (none, starttls or tls), the login (both or
    #: neither) and the sender address of every mail.
    smtp_host: str | None = None
    smtp_port: int = limits.SMTP_PORTS["starttls"]
    smtp_security: str = "starttls"
    smtp_username: str | None = None
    smtp_password: str | None = field(default=None, repr=False)
    smtp_from: str = ""
    #: Requests for a password-reset or confirmation mail per client IP and
    #: per address (REDPOLL_RATE_MAIL_IP, REDPOLL_RATE_MAIL_ADDRESS).
    rate_mail_ip: tuple[int, int] | None = limits.MAIL_REQUESTS_PER_IP
    rate_mail_address: tuple[int, int] | None = limits.MAIL_REQUESTS_PER_ADDRESS
    #: Annual reports' campaign (REDPOLL_WRAPSTODON; redpoll.annual): ``on``,
    #: Mastodon's (the current year, 10 to 31 December), ``off``, or a year
    #: whose reports may be asked for at any time.
    wrapstodon: str = "on"

    @property
    def mail(self) -> bool:
        """E-mail is on: REDPOLL_SMTP_HOST is set."""
        return self.smtp_host is not None

    @property
    def media_root(self) -> str:
        return self.media_dir or os.path.join(self.data_dir, "media")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        url = env.get("REDIS_URL") or None
        if url is not None and not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError(f"REDIS_URL={url!r} must start with redis://, rediss:// or unix://")
        url_origin = "REDIS_URL"
        if url is None and env.get(EMBEDDED_URL_ENV):
            url, url_origin = env[EMBEDDED_URL_ENV], "embedded"
        fsync = env.get("REDPOLL_FSYNC", "everysec")
        if fsync not in _FSYNC:
            raise ConfigError(f"REDPOLL_FSYNC={fsync!r} must be one of {', '.join(_FSYNC)}")
        cluster = _bool(env, "REDPOLL_CLUSTER", False)
        if cluster and url is None:
            raise ConfigError(
                f"REDPOLL_CLUSTER={env['REDPOLL_CLUSTER']!r} needs REDIS_URL "
                "pointing at a cluster node"
            )
        data_dir = env.get("REDPOLL_DATA_DIR") or None
        public_url = _public_url(env)
        return cls(
            redis_url=url,
            redis_url_origin=url_origin,
            cluster=cluster,
            data_dir=(
                os.path.abspath(os.path.expanduser(data_dir)) if data_dir else default_data_dir(env)
            ),
            data_dir_origin="REDPOLL_DATA_DIR" if data_dir else "default",
            fsync=fsync,
            job_claim_ms=_int(env, "REDPOLL_JOB_CLAIM_MS", 30_000, 100, 3_600_000),
            fanout_batch=_int(env, "REDPOLL_FANOUT_BATCH", limits.FANOUT_BATCH, 1, 10_000),
            fanout_threshold=_int(
                env, "REDPOLL_FANOUT_THRESHOLD", limits.FANOUT_THRESHOLD, 0, limits.MAX_ID
            ),
            idle_after_s=_int(
                env, "REDPOLL_IDLE_AFTER_S", limits.IDLE_AFTER_S, 1, 10 * 365 * 86_400
            ),
            worker_concurrency=_int(env, "REDPOLL_WORKER_CONCURRENCY", 4, 1, 256),
            rate_token=_rate(env, "REDPOLL_RATE_TOKEN", (300, 300)),
            rate_ip=_rate(env, "REDPOLL_RATE_IP", (300, 300)),
            rate_signup=_rate(env, "REDPOLL_RATE_SIGNUP", (5, 1800)),
            rate_login=_rate(env, "REDPOLL_RATE_LOGIN", (25, 300)),
            rate_login_account=_rate(env, "REDPOLL_RATE_LOGIN_ACCOUNT", (25, 3600)),
            rate_two_factor=_rate(env, "REDPOLL_RATE_TWO_FACTOR", (10, 300)),
            two_factor_key=_two_factor_key(env),
            rate_apps=_rate(env, "REDPOLL_RATE_APPS", (100, 300)),
            rate_ip_tokens=_rate(env, "REDPOLL_RATE_IP_TOKENS", (1500, 300)),
            rate_inbox_host=_rate(env, "REDPOLL_RATE_INBOX_HOST", (3000, 300)),
            serve_jobs=_bool(env, "REDPOLL_SERVE_JOBS", True),
            instance_title=(env.get("REDPOLL_INSTANCE_TITLE") or "Redpoll")[:100],
            access_log=_bool(env, "REDPOLL_ACCESS_LOG", True),
            trends_review=_bool(env, "REDPOLL_TRENDS_REVIEW", False),
            stream_queue_max=_int(
                env, "REDPOLL_STREAM_QUEUE", limits.STREAM_QUEUE_MAX, 2, 1_000_000
            ),
            stream_keepalive_s=_int(
                env, "REDPOLL_STREAM_KEEPALIVE_S", int(limits.STREAM_KEEPALIVE_S), 1, 3600
            ),
            sse_heartbeat_s=_int(
                env, "REDPOLL_SSE_HEARTBEAT_S", int(limits.SSE_HEARTBEAT_S), 1, 3600
            ),
            ready_job_age_s=_int(
                env, "REDPOLL_READY_JOB_AGE_S", int(limits.READY_MAX_JOB_AGE_S), 1, 86_400
            ),
            public_url=public_url,
            federation_loopback=_bool(env, "REDPOLL_FEDERATION_LOOPBACK", False),
            authorized_fetch=_bool(env, "REDPOLL_AUTHORIZED_FETCH", False),
            poll_expires_min_s=_int(
                env,
                "REDPOLL_POLL_EXPIRES_MIN_S",
                limits.POLL_EXPIRES_MIN_S,
                1,
                limits.POLL_EXPIRES_MIN_S,
            ),
            stream_replays_per_identifier=_rate(
                env,
                "REDPOLL_STREAM_REPLAYS_PER_IDENTIFIER",
                (limits.STREAM_REPLAYS_PER_IDENTIFIER, limits.STREAM_REPLAY_WINDOW_S),
            ),
            stream_replays_per_ip=_rate(
                env,
                "REDPOLL_STREAM_REPLAYS_PER_IP",
                (limits.STREAM_REPLAYS_PER_IP, limits.STREAM_REPLAY_WINDOW_S),
            ),
            stream_connections_per_identifier=_cap(
                env,
                "REDPOLL_STREAM_CONNECTIONS_PER_IDENTIFIER",
                limits.STREAM_CONNECTIONS_PER_IDENTIFIER,
            ),
            stream_connections_per_ip=_cap(
                env, "REDPOLL_STREAM_CONNECTIONS_PER_IP", limits.STREAM_CONNECTIONS_PER_IP
            ),
            stream_token_check_s=_int(
                env, "REDPOLL_STREAM_TOKEN_CHECK_S", int(limits.STREAM_TOKEN_CHECK_S), 1, 3600
            ),
            ws_ping_s=_int(env, "REDPOLL_WS_PING_S", int(limits.WS_PING_INTERVAL_S), 1, 3600),
            metrics_token=_metrics_token(env),
            header_timeout_s=_int(
                env, "REDPOLL_HEADER_TIMEOUT_S", limits.HEADER_TIMEOUT_S, 1, 3600
            ),
            connections_max=_int(
                env, "REDPOLL_CONNECTIONS_MAX", limits.SERVE_CONNECTIONS_MAX, 1, 1_000_000
            ),
            media_dir=(
                os.path.abspath(os.path.expanduser(env["REDPOLL_MEDIA_DIR"]))
                if env.get("REDPOLL_MEDIA_DIR")
                else None
            ),
            remote_media_max_age_s=_int(
                env,
                "REDPOLL_REMOTE_MEDIA_MAX_AGE_S",
                limits.REMOTE_MEDIA_MAX_AGE_S,
                1,
                10 * 365 * 86_400,
            ),
            remote_media_max_bytes=_int(
                env, "REDPOLL_REMOTE_MEDIA_MAX_BYTES", limits.REMOTE_MEDIA_MAX_BYTES, 0, 2**62
            ),
            rate_mail_ip=_rate(env, "REDPOLL_RATE_MAIL_IP", limits.MAIL_REQUESTS_PER_IP),
            rate_mail_address=_rate(
                env, "REDPOLL_RATE_MAIL_ADDRESS", limits.MAIL_REQUESTS_PER_ADDRESS
            ),
            wrapstodon=_wrapstodon(env),
            **_s3(env),
            **_smtp(env, public_url),
        )

    def database(self) -> str:
        """Which server this configuration uses, in words, for messages."""
        origin = (
            "REDPOLL_DATA_DIR"
            if self.data_dir_origin == "REDPOLL_DATA_DIR"
            else "default; set REDPOLL_DATA_DIR to change it"
        )
        if self.redis_url is not None and self.redis_url_origin == "embedded":
            return (
                f"embedded Valkey, data in {self.data_dir} ({origin}), "
                f"at {redact(self.redis_url)} (redpoll serve's)"
            )
        if self.redis_url is not None:
            kind = "Redis Cluster node" if self.cluster else "Redis"
            return f"{kind} {redact(self.redis_url)} (REDIS_URL)"
        return f"embedded Valkey, data in {self.data_dir} ({origin})"

    def with_(self, **changes) -> Settings:
        return replace(self, **changes)
