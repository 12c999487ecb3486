"""The Redis key and channel names redpoll uses, built here; the federation,
media, polls and scheduling packages build their own in their ``keys.py``
(tests/test_layers.py checks that no other module spells one out).

Cluster layout: everything that belongs to one user carries the hash tag
``{<uid>}``, so a script touching one user's record, follow sets, timelines
and lists stays in one slot. Statuses are tagged by their own id. Scripts that
touch many users (delivery) are called once per slot group, see ``store.py``.
"""

from __future__ import annotations

from . import limits

# global counters / indexes (each a key of its own; one slot each)
USER_SEQ = "seq:user"
STATUS_SEQ = "seq:status"
LIST_SEQ = "seq:list"
STATS = "stats"  # hash: users (statuses and deletes: keys.job_counts)


def login(login_lower: str) -> str:
    """Case-folded login -> user id; SET NX on it is the uniqueness lock."""
    return f"login:{{{login_lower}}}"


# --- search (redpoll/search/search.py) -----------------------------------------------------
#: ZSET of ``<term>\0<uid>`` (all scored 0, read by prefix with ZRANGE BYLEX):
#: logins and display names (from each of their words on), case-folded.
SEARCH_ACCOUNTS = "search:{accounts}"
#: Hash uid -> ``<rev>\n<term>\n...``: the terms a user has in the index and
#: the record revision they came from (same slot as SEARCH_ACCOUNTS).
SEARCH_INDEXED = "search:{accounts}:of"
#: String: set once the users from before the index existed were indexed, by
#: the release before layout versions (migration 1 counts it as done, and
#: sets it when it finishes, for processes of that release sharing the database).
SEARCH_BUILT = "search:{accounts}:built"


def key_parts(make) -> tuple[str, str]:
    """The text before and after the id in the names ``make`` gives, for the
    one script that builds such names itself (read_page_listed.lua) and the
    ``SORT_RO ... GET`` pattern of a home page's large accounts' sequences
    (Timelines.read_page_with): single server only (a cluster refuses keys a
    script was not given, and a pattern across slots)."""
    marker = "918273645"
    before, _, after = make(marker).partition(marker)
    return before, after


# --- one user: all tagged {uid} ----------------------------------------------
#: The sequence of featured tags' ids.
FEATURED_TAG_SEQ = "seq:ftag"


def tagged(uid: int) -> str:
    """Pattern: every key tagged ``{uid}`` (and some that merely contain it:
    the caller keeps those whose prefix is one of :func:`user_key_prefixes`)."""
    return f"*:{{{uid}}}*"


def user(uid: int) -> str:
    """Hash: the public user record (no secrets, ever)."""
    return f"u:{{{uid}}}"


def secrets(uid: int) -> str:
    """Hash: password hash, e-mail and other secrets, apart from the record."""
    return f"sec:{{{uid}}}"


def sign_up_void(uid: int) -> str:
    """String: set when a worker gave the sign-up that drew ``uid`` up as
    dead (settle_sign_up.lua); create_user.lua then refuses it. In the
    user's slot. Only ever exists for an id that has no user."""
    return f"void:{{{uid}}}"


def following(uid: int) -> str:
    """ZSET followee id -> time the follow started (unique microseconds)."""
    return f"fing:{{{uid}}}"


def followers(uid: int) -> str:
    """ZSET follower id -> time the follow started (unique microseconds)."""
    return f"fers:{{{uid}}}"


def home(uid: int) -> str:
    """LIST of status ids, newest first, at most HOME_CAP."""
    return f"home:{{{uid}}}"


def homes(uids: list[bytes]) -> list[bytes]:
    """``home(uid)`` for many ids as read raw from a ZSET, without a round
    trip through int and str: a delivery step builds 1,000 of these."""
    return [b"home:{" + uid + b"}" for uid in uids]


def large_following(uid: int) -> str:
    """SET of the large accounts the user follows (redpoll.timelines.hybrid): their
    statuses the user's home catches up with when read. Same slot
    as the home and the follow set (a read checks each is still followed)."""
    return f"fbig:{{{uid}}}"


def large_marks(uid: int) -> str:
    """HASH large account id -> the profile sequence ('pseq' of its user
    record) up to which the user's home has caught up with that account's
    statuses (redpoll.timelines.hybrid.catch_up). Same slot as the home."""
    return f"fbigm:{{{uid}}}"


def large_marks_many(uids: list[bytes]) -> list[bytes]:
    """``large_marks(uid)`` for ids read raw from a ZSET (as ``homes``)."""
    return [b"fbigm:{" + uid + b"}" for uid in uids]


def large_followings(uids: list[bytes]) -> list[bytes]:
    """``large_following(uid)`` for ids read raw from a ZSET (as ``homes``)."""
    return [b"fbig:{" + uid + b"}" for uid in uids]


#: Field of the user record (keys.user) holding the author's fan-out mode
#: (redpoll.timelines.hybrid): absent = fanned out; ``big`` = caught up with at read time;
#: ``mark:<sid>`` / ``unmark:<sid>`` = that status's fan-out is walking the
#: followers to switch them over.
FANOUT_MODE_FIELD = "fan"

#: ZSET user id -> ms of the user's last recorded home read (redpoll.timelines.hybrid):
#: fan-out skips followers whose score is older than the idle period, and
#: drops their homes once (then the score is the negative of that read). One
#: key: a fan-out batch checks its 1,000 followers with one ZMSCORE.
HOME_SEEN = "home:seen"

#: HASH: the server's rules (redpoll.instance): "seq" (the last id) and
#: "r:<id>" -> the rule's JSON.
INSTANCE_RULES = "instance:rules"
#: HASH: the server's extended description: "content" and "at" (ms).
INSTANCE_DESCRIPTION = "instance:description"
#: HASH: who may sign up (redpoll.instance.registrations): "mode" (open,
#: approval, closed), "message" (shown while closed), "reason" ("1": a
#: sign-up waiting for approval must say why).
INSTANCE_REGISTRATIONS = "instance:registrations"


def invite(code: str) -> str:
    """Hash: one invite (redpoll.accounts.invites): its creator, when it was
    made, when it expires, how many uses it allows and has had."""
    return f"inv:{{{code}}}"


def user_invites(uid: int) -> str:
    """ZSET: the codes of the invites ``uid`` made -> when (ms)."""
    return f"invs:{{{uid}}}"


#: ZSET: every invite's code -> when it was made (ms): the operator's list.
INVITES = "invites:{invites}"

#: HASH: the server settings moderators set (redpoll.instance): "title",
#: "short_description", "email" (a field absent: the default)
INSTANCE_SETTINGS = "instance:settings"


def home_read(uid: int) -> str:
    """String: ms of the user's last recorded home read, in their own slot
    (redpoll.timelines.hybrid): what drop_idle_home.lua checks before it drops an idle
    user's home, atomically with the drop."""
    return f"hseen:{{{uid}}}"


def profile(uid: int) -> str:
    """ZSET status id -> status id: every status of the user."""
    return f"prof:{{{uid}}}"


def ruled_posts(uid: int) -> str:
    """ZSET status id -> status id: the user's statuses the home rule has to
    look at before they enter a timeline (direct, private, replies to
    another account, boosts), beside their profile (same slot), each member
    naming what the rule reads of it (redpoll.timelines.home_rule.Candidate:
    ``"<id>:<visibility>:<account replied to>:<original>"``; a bare ``"<id>"``,
    as older records wrote them, is a direct status). A merge reads the
    profile and this in one round trip and needs no status record: a profile
    id not in here passes the rule by itself (record_post.lua adds,
    delete_own.lua removes)."""
    return f"ruled:{{{uid}}}"


def ruled_posts_before(uid: int) -> str:
    """What :func:`ruled_posts` was named before layout 9 (``profdm:``, when it
    held only direct statuses); migration 9 moves it (redpoll.timelines.migrations)."""
    return f"profdm:{{{uid}}}"


def lists(uid: int) -> str:
    """Hash list id -> title, the lists the user owns."""
    return f"lists:{{{uid}}}"


def list_members(owner: int, lid: int) -> str:
    """ZSET member uid -> time added."""
    return f"lm:{{{owner}}}:{lid}"


def list_timeline(owner: int, lid: int) -> str:
    """LIST of status ids like a home timeline, fed by the members' posts."""
    return f"ltl:{{{owner}}}:{lid}"


def deleted_by(uid: int) -> str:
    """ZSET status id -> ms of its delete: the user's statuses deleted lately
    (``limits.DELETED_TOMBSTONE_S``), which a late replay of their post
    journal must not record again (record_post.lua)."""
    return f"gone:{{{uid}}}"


def listed_in(uid: int) -> str:
    """ZSET ``"<owner>:<lid>"`` -> time added: the lists that hold the user."""
    return f"listed:{{{uid}}}"


def listed_member(owner: int, lid: int) -> str:
    return f"{owner}:{lid}"


def parse_listed_member(member: bytes | str) -> tuple[int, int]:
    text = member.decode() if isinstance(member, bytes) else member
    owner, lid = text.split(":", 1)
    return int(owner), int(lid)


# --- delivery -------------------------------------------------------------------
#: Highest status id any delivery or merge has put into a timeline. Single
#: server only (a script reading it touches timelines of every slot): a status
#: newer than it cannot meet a newer id at any timeline's head, nor be there
#: already, so deliver.lua can push it without looking (see that script).
FANOUT_WATERMARK = "fanout:watermark"


def fanout_done(sid: int) -> str:
    """SET of the batches of a status's fan-out that went down the fast path
    (single server only): a batch is pushed without looking at most once."""
    return f"fanout:{{{sid}}}:done"


# --- statuses -------------------------------------------------------------------
def status(sid: int) -> str:
    """Hash: one status (text, author id and login copied in, extras). A
    deleted status leaves a tombstone here for ``limits.DELETED_TOMBSTONE_S``:
    only ``id``, ``uid`` and ``deleted`` (the delete journal entry that
    marked it), so that a late replay of its post journal stops."""
    return f"st:{{{sid}}}"


#: String: a random value set once per database, and again whenever the
#: log of changed statuses loses entries. Ids are counters, so a wiped
#: database hands out the same ids again: a process that keeps decoded
#: records by id compares this value to the one it started with and drops
#: what it kept when it changed (Store.memos_valid, redpoll.core.memo).
EPOCH = "db:epoch"

#: Hash: the database's layout (redpoll.engine.migrate): ``version``, the
#: number of the last migration made (every one below it made too);
#: ``cursor.<n>``, where migration n in progress goes on from; ``done.<n>``,
#: when it finished (ms) and what it did. Absent: a database from before
#: layout versions (or a new one).
LAYOUT = "layout:{db}"
#: String: the mark of the last ``redpoll backup`` begun, set just before its
#: snapshot (redpoll.engine.backup): a restore finds it in the data it
#: brought back, so the snapshot holds what was written before the backup.
BACKUP_MARK = "backup:{db}:mark"
#: String with a TTL: ``<token> <host> <pid>`` of the process migrating the
#: database now; the others wait for it (redpoll.engine.migrate).
LAYOUT_LOCK = "layout:{db}:lock"

#: ZSET status id -> version: the log of changed statuses, single server
#: only. A deleted status is here with version -1 from its delete
#: (delete_mark_listed.lua) until its cleanup has taken the id out of every
#: timeline (forget_deleted.lua); a status whose record changes (an edit)
#: would be here with its new 'v'. A page checks its ids here in the script
#: that reads them (read_page_listed.lua): it skips deleted ones and gets
#: the version of the others (absent = 1), without reading any status. If
#: the log must drop entries (limits.CHANGED_STATUSES_MAX), keys.EPOCH
#: changes with it and every process drops what it kept.
CHANGED_STATUSES = "statuses:changed"


# --- jobs -------------------------------------------------------------------------
JOB_GROUP = "workers"


def job_stream(shard: int) -> str:
    return f"jobs:{{{shard}}}"


def held_job_stream(shard: int) -> str:
    """Jobs taken by their producer when queued (see job_hold.lua); workers
    only take them over when the producer died. Same slot as the shard."""
    return f"jobs:{{{shard}}}:held"


def due_jobs(shard: int) -> str:
    """Sorted set of jobs queued for later (score: when, in ms; member: the
    job's JSON), moved onto the shard's stream when due (job_due.lua). Same
    slot as the shard."""
    return f"jobs:{{{shard}}}:due"


def job_shards() -> range:
    """Every job shard: the local lane's (0 .. JOB_SHARDS-1), then the
    ingress lane's (limits.INGRESS_SHARDS more)."""
    return range(limits.JOB_SHARDS + limits.INGRESS_SHARDS)


def lane_shards(lane: str) -> range:
    """The shards of one lane, "local" or "ingress" (jobs.Job.lane)."""
    if lane == "ingress":
        return range(limits.JOB_SHARDS, limits.JOB_SHARDS + limits.INGRESS_SHARDS)
    return range(limits.JOB_SHARDS)


def all_job_streams() -> list[str]:
    return [job_stream(i) for i in job_shards()]


def all_held_job_streams() -> list[str]:
    return [held_job_stream(i) for i in job_shards()]


DEAD_JOBS = "jobs:dead"


def job_counts(shard: int) -> str:
    """Hash of what the shard's finished jobs counted (``statuses`` posted,
    ``deleted``), added in the step that finishes the job (job_next.lua), so
    exactly once; same slot as the shard. Summed by JobQueue.counts."""
    return f"stats:{{{shard}}}"


# --- the real-time stream -------------------------------------------------------
#: The event log: a capped Redis Stream every posted/deleted status is appended
#: to (one key, one slot, so cluster-safe). Streaming processes read it with
#: XREAD BLOCK (one reader per process) and replay it for resume/backfill.
EVENT_LOG = "events:{stream}"


# --- global timeline ----------------------------------------------------------------
#: LIST of status ids, newest first, at most HOME_CAP: every public status
#: (fed on post next to the author's home, cleaned on delete). One key on a
#: single server; on a cluster the first of the shards below.
PUBLIC_TIMELINE = "tl:{public}"


def public_timeline_shards(n: int) -> list[str]:
    """The public timeline as ``n`` LISTs in slots of their own (a cluster:
    Topology.public_key picks one by status id), the first being
    PUBLIC_TIMELINE itself so that what it held stays readable."""
    return [PUBLIC_TIMELINE] + [f"tl:{{public.{i}}}" for i in range(1, n)]


# --- API: OAuth apps, tokens, codes (redpoll/accounts/auth.py) ---------------------------------
# Secrets are never stored: a token, client secret or authorization code is
# looked up by the sha256 hex digest of its value, which is the hash tag.
APP_SEQ = "seq:app"


def app(client_id: str) -> str:
    """Hash: one OAuth application (name, redirect uris, scopes, secret digest)."""
    return f"app:{{{client_id}}}"


def token(digest: str) -> str:
    """Hash: one access token (user id or 0, client id, scopes), by token digest."""
    return f"tok:{{{digest}}}"


def token_rate(digest: str, window: int) -> str:
    """Counter of a token's requests in one fixed rate-limit window (same slot as
    the token, so the token check and the count are one script)."""
    return f"rl:{{{digest}}}:{window}"


def auth_code(digest: str) -> str:
    """String (JSON): one authorization code, short-lived, taken once with GETDEL."""
    return f"code:{{{digest}}}"


def email(email_lower: str) -> str:
    """Case-folded e-mail -> user id (or a short-lived pending claim)."""
    return f"email:{{{email_lower}}}"


# --- e-mail blocks (redpoll/accounts/email_blocks.py): one slot, {blocks} ------------
#: Hash: blocked e-mail domain -> its block's JSON (id, at); field
#: BLOCK_SEQ: the last id given (no domain or hash has a "#")
EMAIL_DOMAIN_BLOCKS = "eblk:{blocks}"
#: Hash: SHA-256 of a canonical e-mail address -> its block's JSON (id, at)
CANONICAL_EMAIL_BLOCKS = "cblk:{blocks}"
BLOCK_SEQ = "#seq"
#: Hash: an IP block's network ("192.0.2.0/24") -> its JSON (id, severity,
#: comment, at, expires_at); field BLOCK_SEQ the last id (redpoll/accounts/ip_blocks.py)
IP_BLOCKS = "ipblk:{blocks}"


def email_block_history(bid: int) -> str:
    """Hash with a TTL: UTC day (epoch seconds) -> sign-ups refused by e-mail
    domain block ``bid`` that day (the last days, as Mastodon's history)."""
    return f"eblk:{{blocks}}:h:{bid}"


def rate(bucket: str, window: int) -> str:
    """Counter of one rate-limit bucket (``ip:<addr>:<family>``) in one window."""
    return f"rl:{{{bucket}}}:{window}"


def idempotency(shard: int, uid: int, digest: str) -> str:
    """String ``<status id>:<journal entry id>``: the post made under a user's
    Idempotency-Key. In the slot of the job shard its post journal goes to
    (``idempotency.shard``), so the key is claimed in the step that holds
    the journal (job_hold_once.lua)."""
    return f"idem:{{{shard}}}:{uid}:{digest}"


def purge_claim(shard: int, uid: int) -> str:
    """String: the journal entry of the purge of account ``uid``
    (moderation.purge_account): claimed in the step that holds the journal
    (job_hold_once.lua), so the account leaves the user count once however
    often the purge is run. In the slot of the journal's job shard."""
    return f"purge:{{{shard}}}:{uid}"


# --- the conversation: favourites, bookmarks, notifications, markers --------
#: Counter every favourite/boost/notification operation draws its id from: the
#: id orders operations on one (user, status) pair (a late replay of an older
#: one is ignored) and is also the favourite's or notification's own id.
INTERACTION_SEQ = "seq:interaction"


def favourited_by(sid: int) -> str:
    """ZSET user id -> favourite id: who favourited the status (same slot as it)."""
    return f"favs:{{{sid}}}"


def favourite_versions(sid: int) -> str:
    """Hash user id -> id of the last favourite/unfavourite applied (same slot)."""
    return f"favv:{{{sid}}}"


def versions_undone(versions: str) -> str:
    """ZSET member -> operation id, beside a versions hash (favourite_versions,
    favourite_applied, reblog_versions, reblog_applied; same slot): the
    members whose last operation was an undo. Only the newest
    limits.VERSIONS_UNDONE_KEPT stay, the older ones leave the versions hash
    with them, so the hash holds the favourites/boosts that stand plus a
    bounded few undone."""
    return f"{versions}:u"


def status_counts(sid: int) -> str:
    """Hash of a status's counts, kept by the scripts that change the sets they
    count (same slot): ``f`` favourites, ``r`` reblogs, ``p`` replies."""
    return f"cnt:{{{sid}}}"


def favourites(uid: int) -> str:
    """ZSET status id -> favourite id: the statuses the user favourited."""
    return f"ufav:{{{uid}}}"


def favourite_applied(uid: int) -> str:
    """Hash status id -> operation id last applied to ``favourites(uid)``."""
    return f"ufavv:{{{uid}}}"


def pins(uid: int) -> str:
    """ZSET status id -> pin time (ms): the statuses ``uid`` pinned to their
    profile (redpoll.pins)."""
    return f"pins:{{{uid}}}"


def push_subscriptions(uid: int) -> str:
    """HASH token digest -> JSON: ``uid``'s Web Push subscriptions, one per
    access token, at most limits.PUSH_SUBSCRIPTIONS_MAX (redpoll.push)."""
    return f"push:{{{uid}}}"


def push_seq(uid: int) -> str:
    """Counter: the ids of ``uid``'s push subscriptions (its slot)."""
    return f"pushseq:{{{uid}}}"


#: String, JSON: the server's VAPID key pair (redpoll.push.vapid), written
#: once (SET NX: the first writer's pair is everyone's).
PUSH_VAPID = "push:vapid"


FILTER_SEQ = "seq:filter"  # string: ids of filters, their keywords and statuses


def filters(uid: int) -> str:
    """HASH: ``uid``'s content filters (redpoll.filters): filter id -> the
    filter as JSON (title, contexts, action, expiry, keywords, statuses),
    and ``v`` -> a version every change writes anew (the compiled filters
    a process keeps are used only at the version a request read)."""
    return f"flt:{{{uid}}}"


def status_edits(sid: int) -> str:
    """List, oldest first: a status's versions once it was edited (the
    original, then one per edit), each a JSON object (text, spoiler_text,
    sensitive, media, at); written with the edit itself (status_edit*.lua),
    at most ``limits.EDITS_MAX + 1`` entries (redpoll.posting.editing)."""
    return f"edits:{{{sid}}}"


def imports(uid: int) -> str:
    """ZSET import id -> when it was made (ms): a member's CSV imports, at
    most limits.IMPORTS_KEPT (redpoll.portability.imports)."""
    return f"imp:{{{uid}}}"


def import_seq(uid: int) -> str:
    """String: the last import id given to ``uid``."""
    return f"imp:{{{uid}}}:seq"


def import_record(uid: int, iid: int) -> str:
    """HASH: one import (kind, mode, file, total, processed, imported,
    state, made, finished, and ``pos``: the next row its job does)."""
    return f"imp:{{{uid}}}:{iid}"


def import_rows(uid: int, iid: int) -> str:
    """LIST: an import's rows as parsed, each a JSON array of strings."""
    return f"imp:{{{uid}}}:{iid}:rows"


def import_found(uid: int, iid: int) -> str:
    """SET: what an import's rows named, as found (account ids, domains,
    status ids, ``<list id>:<account id>``): what an overwrite keeps."""
    return f"imp:{{{uid}}}:{iid}:found"


def import_gone(uid: int, iid: int) -> str:
    """LIST: what an overwrite undoes (the member's set when its prune
    began, less what the import found)."""
    return f"imp:{{{uid}}}:{iid}:gone"


def archives(uid: int) -> str:
    """ZSET archive id -> when it was asked for (ms): a member's archives of
    their posts and media (redpoll.portability.archive)."""
    return f"arc:{{{uid}}}"


def archive_seq(uid: int) -> str:
    """String: the last archive id given to ``uid``."""
    return f"arc:{{{uid}}}:seq"


def archive_record(uid: int, aid: int) -> str:
    """HASH: one archive (state, made, base, file, size, finished, and its
    job's cursor: phase, page, after)."""
    return f"arc:{{{uid}}}:{aid}"


def archive_gate(shard: int, uid: int) -> str:
    """String ``<archive id>:<journal entry id>``, expiring after
    limits.ARCHIVE_INTERVAL_S: the member's last archive request, claimed in
    the step that holds its job (job_hold_once.lua), so one is made per
    interval however many requests race. In the slot of the job's shard."""
    return f"arcgate:{{{shard}}}:{uid}"


def bookmarks(uid: int) -> str:
    """ZSET status id -> bookmark id (unique microseconds): the user's bookmarks."""
    return f"bm:{{{uid}}}"


def notifications(uid: int) -> str:
    """ZSET notification id -> the same id: the user's notifications, at most
    limits.NOTIFICATIONS_MAX."""
    return f"nt:{{{uid}}}"


def notification_records(uid: int) -> str:
    """Hash notification id -> its record (JSON: type, actor, status, time, key)."""
    return f"ntr:{{{uid}}}"


def notification_index(uid: int) -> str:
    """Hash ``<type>:<actor>:<target>`` -> ``<operation id>:<notification id>``
    (0 when undone): what undo finds and removes, and the order of operations."""
    return f"nti:{{{uid}}}"


def notification_index_done(uid: int) -> str:
    """ZSET ``<type>:<actor>:<target>`` -> operation or notification id: the
    entries of ``notification_index`` that stand for no listed notification
    (undone or dismissed); past limits.NOTIFICATION_INDEX_DONE_KEPT the oldest
    leave the index (notify.lua)."""
    return f"nti:{{{uid}}}:u"


def notification_group_index(uid: int) -> str:
    """ZSET, all scored 0, of ``<prefix>\\0<bucket>\\0<id>\\0<actor>`` (bucket and
    id zero-padded): the user's grouped notifications by group, read by
    ZRANGEBYLEX to count and sample a group (notify.lua; Mastodon 4.3's
    grouped notifications). One entry per notification in ``notifications``."""
    return f"ntg:{{{uid}}}"


def notification_policy(uid: int) -> str:
    """Hash ``for_not_following`` ... ``for_limited_accounts`` -> accept,
    filter or drop: the user's notification policy (Mastodon 4.3); a field
    absent is its default (redpoll.notifications.policy.DEFAULTS)."""
    return f"npol:{{{uid}}}"


def notification_permissions(uid: int) -> str:
    """SET of account ids whose notifications the user accepted (a notification
    request accepted): never filtered again (Mastodon's NotificationPermission)."""
    return f"nperm:{{{uid}}}"


def filtered_notifications(uid: int) -> str:
    """ZSET, all scored 0, of ``<actor, 20 digits>\\0<id, 16 digits>``: the
    user's filtered notifications by sender (each also in ``notifications``,
    its record marked ``"filtered":1``; notify.lua)."""
    return f"ntfl:{{{uid}}}"


def notification_requests(uid: int) -> str:
    """ZSET sender id -> request id: the user's notification requests (one per
    sender with a filtered mention), paged by request id."""
    return f"nrq:{{{uid}}}"


def notification_request_records(uid: int) -> str:
    """Hash ``<sender>:at`` / ``:upd`` (ms), ``<sender>:last`` (status id),
    ``<sender>:n`` (filtered mentions held): each request's fields."""
    return f"nrqr:{{{uid}}}"


def markers(uid: int) -> str:
    """Hash timeline (home, notifications) -> JSON {last_read_id, version, at}."""
    return f"mk:{{{uid}}}"


# --- replies, hashtags ---------------------------------------------------------
def replies(sid: int) -> str:
    """ZSET reply id -> reply id: the direct replies to a status (its slot)."""
    return f"rep:{{{sid}}}"


#: Pattern: every ``replies(sid)`` key (a scan for them, once per database).
REPLIES_ANY = "rep:{*}"


def replied_status(key: str) -> int | None:
    """The status id of a ``replies(sid)`` key; None for any other key."""
    before, tag, after = key.partition("{")
    sid = after[:-1] if after.endswith("}") else ""
    return int(sid) if before == "rep:" and tag and sid.isdigit() else None


def replies_counted(sid: int) -> str:
    """ZSET reply id -> reply id: of ``replies(sid)``, the public and unlisted
    ones, which its ``replies_count`` counts (``p`` of ``status_counts``)."""
    return f"rpc:{{{sid}}}"


#: String: set once every status's reply count was recounted under the rule
#: that counts public and unlisted replies only, by the release before
#: layout versions (migration 2 counts it as done, and sets it when it finishes).
REPLY_COUNTS_DONE = "rpc:built"


def tag_timeline(name: str) -> str:
    """LIST of status ids carrying ``#name`` (normalized), newest first."""
    return f"tagtl:{{{name}}}"


def thread_mutes(uid: int) -> str:
    """SET of thread ids (a thread's first status) whose notifications
    ``uid`` does not get (Mastodon's muted conversations:
    redpoll.conversations.thread_mutes)."""
    return f"tmute:{{{uid}}}"


def featured_tags(uid: int) -> str:
    """HASH normalized tag name -> JSON {id, name as typed, at}: the hashtags
    ``uid`` features on their profile (redpoll.conversations.featured_tags)."""
    return f"feattags:{{{uid}}}"


def tag_posts(uid: int, name: str) -> str:
    """ZSET status id -> its time (ms): ``uid``'s public and unlisted
    statuses carrying ``#name`` (a featured tag's count and last use)."""
    return f"utag:{{{uid}}}:{name}"


def tags_used(uid: int) -> str:
    """ZSET tag name -> when ``uid`` last used it (ms), the newest
    limits.TAGS_USED_KEPT kept: the featured tags' suggestions."""
    return f"utags:{{{uid}}}"


def tag_followers(name: str) -> str:
    """SET of user ids following the hashtag (same slot as its timeline)."""
    return f"tagfers:{{{name}}}"


def followed_tags(uid: int) -> str:
    """ZSET hashtag name -> time followed: the hashtags a user follows."""
    return f"ftags:{{{uid}}}"


def tag_day_uses(name: str, day: int) -> str:
    """HyperLogLog of the ids of public statuses that carried ``#name`` on
    one UTC day (days since the epoch): the tag's ``history`` uses. Expires
    after limits.TAG_HISTORY_DAYS + 1 days; same slot as the tag."""
    return f"taguse:{{{name}}}:{day}"


def tag_day_accounts(name: str, day: int) -> str:
    """HyperLogLog of the authors of those statuses (``history`` accounts)."""
    return f"tagacc:{{{name}}}:{day}"


#: ZSET of every hashtag name ever used, all scored 0: prefix search by
#: ZRANGEBYLEX (one key, one slot).
TAG_NAMES = "tags:{names}"


# --- trends and suggestions (redpoll.trends, redpoll.suggestions) --------------
def link_day_uses(digest: str, day: int) -> str:
    """HyperLogLog of the ids of public statuses that carried a link on one
    UTC day; ``digest``: the link's (trends.links.digest). Expires as the
    tags' days; the link's slot."""
    return f"linkuse:{{{digest}}}:{day}"


def link_day_accounts(digest: str, day: int) -> str:
    """HyperLogLog of the authors of those statuses."""
    return f"linkacc:{{{digest}}}:{day}"


def link_statuses(digest: str) -> str:
    """ZSET status id -> id: the public statuses (no boosts) that carried a
    link since they were first counted (redpoll.trends.links), its newest
    limits.LINK_STATUSES_KEPT; the link's slot. What GET
    /api/v1/timelines/link reads (each shown by the visibility decision)."""
    return f"linkst:{{{digest}}}"


def trend_day(kind: str, day: int) -> str:
    """ZSET item -> accounts that used it on one UTC day, for ``kind``
    ``tag`` (hashtag names) or ``link`` (URLs): the candidates of the trends,
    the limits.TRENDS_CANDIDATES_KEPT most used kept; expires after the
    history's days. One slot for all of them."""
    return f"trend:{{trends}}:{kind}:{day}"


def trend_review(kind: str) -> str:
    """HASH item -> "1" (approved to trend) or "0" (rejected) for ``kind``
    ``tag`` (hashtag names), ``link`` (trends.history.digest of the URL) or
    ``status`` (ids): what moderators decided (redpoll.trends.review). It
    grows only by their decisions, one field per item reviewed."""
    return f"trend:{{trends}}:review:{kind}"


def trend_statuses(day: int) -> str:
    """ZSET status id -> favourites + boosts, of the public local statuses
    posted on one UTC day that were favourited or boosted: the candidates of
    the trending statuses, the limits.TRENDS_CANDIDATES_KEPT most
    interacted with kept; expires after limits.TRENDS_STATUS_WINDOW_S."""
    return f"trend:{{trends}}:status:{day}"


#: ZSET account id -> followers: local accounts by their followers, the
#: limits.SUGGESTIONS_POPULAR_KEPT most followed kept (suggestions' global
#: source), set after each follow and unfollow.
POPULAR_ACCOUNTS = "popular:{accounts}"


def suggestions_dismissed(uid: int) -> str:
    """ZSET account id -> time: the suggestions ``uid`` dismissed."""
    return f"sugdis:{{{uid}}}"


# --- boosts ----------------------------------------------------------------------
def reblogged_by(sid: int) -> str:
    """ZSET booster id -> id of the boost status: who boosted a status (its slot)."""
    return f"rbs:{{{sid}}}"


def reblog_versions(sid: int) -> str:
    """Hash booster id -> id of the last boost/unboost operation applied (same slot)."""
    return f"rbv:{{{sid}}}"


def reblogs(uid: int) -> str:
    """ZSET original status id -> boost id: what a user boosted (the ``reblogged`` flag)."""
    return f"ureb:{{{uid}}}"


def reblog_applied(uid: int) -> str:
    """Hash original status id -> operation id last applied to ``reblogs(uid)``."""
    return f"urebv:{{{uid}}}"


def home_reblogs(uid: int) -> str:
    """ZSET original status id -> the boost of it put into the user's home
    last, scored by that boost's id (same slot as the home): a fact of the
    home rule's recent window (redpoll.timelines.home_rule), and the guard
    of deliver_boost.lua's write; the newest limits.HOME_REBLOGS_KEPT kept.
    (``hreb:{uid}``, its unbounded hash forerunner, is no longer read.)"""
    return f"hrb:{{{uid}}}"


def hidden_reblogs(uid: int) -> str:
    """SET of followee ids whose boosts the user does not want in their home
    (``follow(reblogs=false)``), same slot as the home: a fact of the home
    rule (redpoll.timelines.home_rule)."""
    return f"noreb:{{{uid}}}"


def boost_pair(home: str | bytes) -> list[bytes]:
    """``[home, home_reblogs]`` of the user whose home key is given (as
    ``home``/``homes`` build it): the keys deliver_boost.lua takes."""
    raw = home.encode() if isinstance(home, str) else home
    return [raw, b"hrb:" + raw[raw.index(b"{") :]]


def notifiers(uid: int) -> str:
    """SET of user ids who follow ``uid`` with ``notify=true``: each gets a
    ``status`` notification when uid posts (uid's slot)."""
    return f"ntf:{{{uid}}}"


# --- endorsements and private notes (redpoll/relations/endorsements.py, notes.py) ---------------
def endorsed(uid: int) -> str:
    """ZSET account id -> when ``uid`` endorsed it (unique µs: the paging
    cursor): the accounts ``uid`` features on its profile, each one it
    follows (edge_set.lua's guard at the add; the unfollow takes it out)."""
    return f"endo:{{{uid}}}"


def domain_blocks(uid: int) -> str:
    """ZSET domain -> when ``uid`` blocked it (µs): the servers whose accounts
    the member hears nothing from (redpoll/relations/domain_blocks.py)."""
    return f"dblk:{{{uid}}}"


def account_notes(uid: int) -> str:
    """HASH account id -> ``uid``'s private note on it (Relationship.note)."""
    return f"anote:{{{uid}}}"


# --- blocks and mutes (redpoll/relations/relations.py) ------------------------------------------
def blocking(uid: int) -> str:
    """ZSET account id -> block id (seq:interaction): whom ``uid`` blocks."""
    return f"blk:{{{uid}}}"


def blocked_by(uid: int) -> str:
    """ZSET account id -> block id: who blocks ``uid`` (the mirror of
    :func:`blocking`, in uid's slot so uid's reads ask one slot)."""
    return f"blkby:{{{uid}}}"


def muting(uid: int) -> str:
    """ZSET account id -> mute id: whom ``uid`` mutes (paging order)."""
    return f"mute:{{{uid}}}"


def muted_by(uid: int) -> str:
    """ZSET account id -> mute id: who mutes ``uid`` (written before the
    muter's own entry, removed after it; may name a mute since lifted: the
    muter's :func:`mute_terms` decide). A Move carries mutes over by it."""
    return f"mutedby:{{{uid}}}"


#: String: set once the mutes from before :func:`muted_by` existed are in it,
#: by the release before layout versions (migration 3 counts it as done, and
#: sets it when it finishes).
MUTED_BY_BUILT = "mutedby:built"


def mute_terms(uid: int) -> str:
    """HASH account id -> ``<expires ms, 0 = never>:<1 if notifications are muted too>``."""
    return f"mute:{{{uid}}}:t"


# --- moderation (redpoll/moderation/moderation.py) ------------------------------------------------
def user_tokens(uid: int) -> str:
    """SET of the digests of the access tokens issued to ``uid`` (so a
    suspension or a password reset can revoke them all); may name tokens
    already revoked."""
    return f"utok:{{{uid}}}"


#: ZSET report id -> report id: every report, in one slot with its records
REPORTS = "rep:{reports}"
#: ZSET of the unresolved ones
REPORTS_OPEN = "rep:{reports}:open"
#: report ids (same slot: a report is written in one transaction)
REPORT_SEQ = "rep:{reports}:seq"


def report(rid: int) -> str:
    """HASH one report: reporter, account, statuses, comment, category, at, resolved_at."""
    return f"rep:{{reports}}:{rid}"


# --- direct messages (redpoll/conversations/direct_messages.py) --------------------------------------
def dm_conversations(uid: int) -> str:
    """ZSET conversation id -> its last status id: uid's direct conversations."""
    return f"dm:{{{uid}}}"


def dm_states(uid: int) -> str:
    """HASH conversation id -> ``<last status id>:<unread 1/0>`` (same slot)."""
    return f"dm:{{{uid}}}:s"


# --- follow requests (redpoll/relations/follow_requests.py) ----------------------------------------
def follow_requests(uid: int) -> str:
    """ZSET requester id -> request id: pending requests to follow ``uid`` (a locked account)."""
    return f"freq:{{{uid}}}"


def follow_request_options(uid: int) -> str:
    """HASH requester id -> the options of their pending request to follow
    ``uid`` (``reblogs,notify`` as two 0/1 digits), applied when it is
    authorized (uid's slot, beside follow_requests)."""
    return f"freqopt:{{{uid}}}"


def follow_requested(uid: int) -> str:
    """ZSET target id -> request id: ``uid``'s own pending requests (its slot)."""
    return f"freqout:{{{uid}}}"


def user_key_prefixes() -> frozenset[str]:
    """The prefixes (``home:``, ``fing:`` ...) of every key that belongs to
    one user: those this module builds from a user id given first. Found by
    asking the builders themselves, so a key added here is never forgotten
    when an account is deleted (moderation.purge_account_keys). A status's
    keys carry ``{sid}`` and are not among them, even when a status id
    equals a user id."""
    import inspect

    out = set()
    for name, build in list(globals().items()):
        if not inspect.isfunction(build) or name in ("user_key_prefixes", "tagged"):
            continue
        params = list(inspect.signature(build).parameters)
        if not params or params[0] not in ("uid", "owner"):
            continue
        key = build(*([0] * len(params)))
        if "{" in key:
            out.add(key.split("{", 1)[0])
    return frozenset(out)


#: ZSET: account id -> ms of its latest status (local and remote), raised
#: when one is posted (posting.apply_post, ZADD GT): the profile directory's
#: order=active (redpoll.reading.directory). One entry per account that
#: posted; a deleted account's entry is skipped by the reader.
ACTIVE_ACCOUNTS = "directory:{active}"
