"""Every bound redpoll enforces, named in one place.

Settings may override the few that a deployment tunes (see ``settings.py``);
everything else is a constant because changing it changes the data layout or
the public API.
"""

# --- timelines -------------------------------------------------------------
#: Entries kept in a home or list timeline.
HOME_CAP = 1000
#: Default and maximum page size for timeline reads (Mastodon: 20 / 40).
PAGE_DEFAULT = 20
PAGE_MAX = 40
#: Statuses copied into a home timeline when following someone.
BACKFILL = HOME_CAP

# --- delivery ----------------------------------------------------------------
#: Followers (or list timelines) served by one delivery step: the first step
#: runs inside the posting call, each later one is a deferred job.
FANOUT_BATCH = 1000
#: Hybrid fan-out (redpoll.timelines.hybrid): an author with more followers than this
#: is not fanned out to their followers' homes; their statuses are merged
#: into each follower's home page at read time from their profile (Twitter's
#: design for large accounts). Settings override (REDPOLL_FANOUT_THRESHOLD).
FANOUT_THRESHOLD = 10_000
#: ... and goes back to fan-out once their followers fall below this share
#: of the threshold: a gap, so that an account hovering at the threshold
#: does not walk its followers at every follow and unfollow.
FANOUT_SHRINK_FRACTION = 0.5
#: Idle users (redpoll.timelines.hybrid): a user who has not read their home for this
#: long is skipped by fan-out; the first home read after it rebuilds their
#: home from the accounts they follow. Settings override (REDPOLL_IDLE_AFTER_S).
IDLE_AFTER_S = 30 * 86_400
#: A process records a user's home read (keys.HOME_SEEN) at most once per
#: this share of the idle period (one write per user per few days, not per page).
HOME_SEEN_TOUCH_FRACTION = 0.25
#: Users whose last recorded home read one process remembers (to skip the write).
HOME_SEEN_KEPT = 100_000
#: Statuses of each followed account a returning idle user's home is rebuilt from.
REBUILD_PER_SOURCE = 200
#: Large accounts a home catches up with at most (more are not read).
MERGED_ACCOUNTS_MAX = 200
#: Ids of one large account a home's catch-up reads at most
#: (redpoll.timelines.hybrid.catch_up): an account that posted more since the
#: follower's last read shows its newest this many (as a rebuild does).
CATCH_UP_PER_ACCOUNT = REBUILD_PER_SOURCE
#: Ids a catch-up reads below an account's news: a status recorded in its
#: profile after a newer one of the same author (its id was taken first).
CATCH_UP_OVERLAP = 8
#: Entries at the top of a home whose ids a catch-up does not read again
#: (the ids read below the news are mostly there already).
CATCH_UP_HOME_CHECK = 200
#: Boosts of a status coming into a home by a catch-up that it reads (the
#: lowest ids above it): those the home may hold within the window above it.
CATCH_UP_BOOSTS_READ = 100
#: Timeline entries a page's script scans for its cursor (LPOS: a page's
#: cursor is usually the last id of the page before, near the top) before it
#: searches by halves instead (read_page_listed.lua).
CURSOR_SCAN_MAX = 200
#: How long a status remembers which of its delivery batches took the fast
#: path (deliver.lua); a re-run within this time checks before it pushes.
FANOUT_DONE_TTL_S = 7 * 24 * 3600
#: how long an account purge's claim (keys.purge_claim) is kept: far longer
#: than any re-run of a purge cut short, after which the account is gone
PURGE_CLAIM_TTL_S = 30 * 24 * 3600
#: How long an account its owner deleted waits for the jobs in the queue
#: (its statuses' deletes among them) before its keys are purged.
ACCOUNT_PURGE_WAIT_S = 120
#: Upper bound on followees scanned by one refill job.
REFILL_MAX_SOURCES = 5000

# --- statuses ----------------------------------------------------------------
#: Characters in a status text (Mastodon's default limit), as Mastodon
#: counts them: a link as STATUS_URL_CHARS whatever its length, a mention
#: of another server's account as its username (validate.status_length).
STATUS_MAX_CHARS = 500
#: What a link counts (the instance's ``characters_reserved_per_url``).
STATUS_URL_CHARS = 23
#: The raw characters of a status text, links at their full length: what
#: a text of STATUS_MAX_CHARS counted may hold (its links long).
STATUS_TEXT_MAX_CHARS = 5000
#: Extra fields on a status (``location`` and the like).
EXTRA_MAX_FIELDS = 8
EXTRA_NAME_MAX = 32
EXTRA_VALUE_MAX_BYTES = 256
#: The sanitized HTML of a remote status kept in its record (its ``html``),
#: at most, as sent and as kept: a longer one is shown from its text.
FED_NOTE_HTML_MAX_BYTES = 64 * 1024
#: A content warning (``spoiler_text``), kept as a status extra: 64
#: characters fit EXTRA_VALUE_MAX_BYTES in any UTF-8. Text and warning
#: together stay within STATUS_MAX_CHARS, as Mastodon counts them.
SPOILER_TEXT_MAX_CHARS = 64
#: Entries in keys.CHANGED_STATUSES (single server): a deleted status's
#: stays until its cleanup is done (seconds to minutes); past this many (the
#: workers stopped for long), the oldest go and keys.EPOCH changes.
CHANGED_STATUSES_MAX = 1_000_000
#: ... and a finished delete's entry stays this long after its cleanup: far
#: longer than one job step (a fan-out step racing the delete).
DELETED_FORGET_AFTER_S = 3600
#: A deleted status's tombstone hash (and its entry in keys.deleted_by) is
#: kept this long: longer than a post journal can wait to be replayed
#: (job_claim_ms x JOB_MAX_ATTEMPTS with the default settings is 10 minutes).
DELETED_TOMBSTONE_S = 86_400
#: Status records kept decoded per process (redpoll.core.memo's rule: served
#: only at the version the request read).
STATUS_RECORDS_KEPT = 20_000

# --- users -------------------------------------------------------------------
#: User records kept decoded per process, keyed by their exact contents.
USER_RECORDS_KEPT = 20_000
LOGIN_MAX_CHARS = 30
DISPLAY_NAME_MAX_CHARS = 64
BIO_MAX_CHARS = 500
#: Profile name/value fields (Mastodon's defaults: 4 rows of 255 characters).
PROFILE_FIELDS_MAX = 4
PROFILE_FIELD_MAX_CHARS = 255
#: Websites allowed to credit an account (Mastodon 4.4's attribution_domains:
#: at most 10), each a host name of at most 253 characters.
ATTRIBUTION_DOMAINS_MAX = 10
ATTRIBUTION_DOMAIN_MAX_CHARS = 253
#: A login claim whose user record is still missing after this long belongs
#: to a sign-up that died, and the next sign-up may take it over.
ORPHAN_CLAIM_MS = 60_000
#: A sign-up's journal (jobs.SignUpJob) whose user is missing is given up as
#: dead only once it is this many job claim periods (Settings.job_claim_ms)
#: old: a caller merely slowed down (a busy machine) has that long to write
#: its user before the id is made void.
SIGN_UP_SETTLE_CLAIMS = 3

# --- search --------------------------------------------------------------------
#: Longest query accepted by /api/v2/search and /api/v1/accounts/search.
SEARCH_QUERY_MAX_CHARS = 500
#: Words of a display name a term may start at (an index entry each).
SEARCH_NAME_WORDS = 8
#: Index entries one account search reads at most.
SEARCH_SCAN = 400
#: offset + limit beyond this finds nothing (searches read a bounded window).
SEARCH_WINDOW = 200
#: Full-text search of statuses (redpoll.search.index): the longest word
#: indexed (longer ones are left out, and a query naming one finds nothing),
#: the words of one status indexed at most, the words and phrases' words of
#: one query at most.
FTS_TERM_MAX_CHARS = 40
FTS_TERMS_PER_STATUS = 200
FTS_QUERY_TERMS_MAX = 8
#: Postings one status search reads at most per family (public, library),
#: and how many it reads and checks per step.
FTS_POSTINGS_SCANNED = 2000
FTS_BATCH = 400
#: Statuses of one author an indexable change re-indexes per job step.
FTS_REINDEX_BATCH = 200
#: Users read per step of migration 1 (accounts/migrations.py, the older users indexed).
SEARCH_BACKFILL_BATCH = 500
#: Statuses whose replies are recounted per step of migration 2
#: (conversations/migrations.py).
REPLY_RECOUNT_BATCH = 200
#: Users whose mutes one step of migration 3 reads
#: (relations/migrations.py).
MUTED_BY_BACKFILL_BATCH = 500
#: The migration lock's time to live (redpoll.engine.migrate): its holder
#: renews it every third of it; one that died frees it after this long.
MIGRATION_LOCK_TTL_MS = 30_000
#: How often a process waiting for another's migration looks again.
MIGRATION_WAIT_POLL_S = 0.2
#: A migration in progress logs how far it is at most this often.
MIGRATION_PROGRESS_LOG_S = 5.0
#: Users or statuses one step of ``redpoll check`` reads (redpoll.engine.check),
#: and keys one SCAN call of its walk over upload records looks at.
CHECK_BATCH = 200
#: The shortest REDPOLL_METRICS_TOKEN accepted (a scraper's shared secret).
METRICS_TOKEN_MIN_CHARS = 16

# --- lists -------------------------------------------------------------------
LIST_TITLE_MAX_CHARS = 100
LISTS_PER_USER = 100
LIST_MAX_MEMBERS = 5000
#: How long a boost call waits for the status of a boost another call made
#: at the same moment (it answers with that status: redpoll.posting.boosts)
BOOST_SETTLE_S = 2.0

# --- jobs --------------------------------------------------------------------
#: Streams the job queue is sharded over, so a cluster spreads the queue:
#: JOB_SHARDS for local work (posts, fan-out, deliveries, Web Push, ...)
#: and, numbered after them, INGRESS_SHARDS for the work other servers'
#: requests make (incoming activities, remote threads fetched; jobs whose
#: class says ``lane = "ingress"``), each consumed by its own worker slots,
#: so that a flood from other servers cannot take the slots local work
#: needs (Mastodon's ``ingress`` queue).
JOB_SHARDS = 4
INGRESS_SHARDS = 2
#: New work is refused (QueueFull) once this many jobs wait, summed over shards.
QUEUE_MAX_JOBS = 1_000_000
#: Jobs a worker reads per shard per round trip.
WORKER_READ_COUNT = 16
#: The longest a worker's idle read waits for a job (ms) before it looks
#: again (for jobs to claim; a new job ends the wait at once, and a stop
#: cancels it): each idle reader costs a read per wait, so a longer one is a
#: quieter worker. Never longer than half the claim time (Settings.job_claim_ms).
WORKER_IDLE_WAIT_MS = 2000
#: Jobs queued for later (JobQueue.enqueue_at) that one worker moves onto a
#: shard's stream per step, and how often each worker looks (seconds): a
#: job runs at most about this late.
DUE_JOBS_PER_STEP = 100
DUE_JOBS_POLL_S = 1.0
#: A job is retried at most this often before it is parked as dead.
JOB_MAX_ATTEMPTS = 20

# --- connections ----------------------------------------------------------------
#: Connections one process opens to a single server; more calls wait.
REDIS_MAX_CONNECTIONS = 256
#: Longest wait for a free connection before the call fails.
REDIS_POOL_WAIT_S = 30
#: Connections per cluster node (redis-py's cluster client cannot wait).
CLUSTER_MAX_CONNECTIONS = 2048
#: Calls awaiting their reply on one multiplexed connection (redpoll.storage.mux);
#: more wait for a slot. Also the largest batch ``Store.run_many`` sends.
MUX_MAX_IN_FLIGHT = 4096
#: Longest wait for a new connection to the server.
REDIS_CONNECT_TIMEOUT_S = 10
#: A call on the multiplexed connection (redpoll.storage.mux) that has no reply
#: after this long fails with TimeoutError, and the connection is dropped.
MUX_CALL_TIMEOUT_S = 10.0
#: A command sent over a cluster's multiplexed connections
#: (redpoll.storage.mux.ClusterMultiplexed) that the cluster redirects (MOVED, ASK)
#: or turns away for now (TRYAGAIN, CLUSTERDOWN) is sent again at most this
#: often; then its error is the caller's. Such a reply means it did not run.
CLUSTER_REDIRECTS = 5
#: Wait before sending again a command the cluster turned away (TRYAGAIN
#: while a slot's keys move, CLUSTERDOWN while it elects or heals), times
#: the attempt: 1.5 s in all over CLUSTER_REDIRECTS attempts.
CLUSTER_RETRY_WAIT_S = 0.1
#: The slot map is read again from the cluster (after a lost master or a
#: CLUSTERDOWN) at most this often: during an outage every call would
#: otherwise ask every node for it.
CLUSTER_REFRESH_MIN_S = 0.5
#: Keys whose hash slot a process keeps (redpoll.storage.mux.ClusterMultiplexed):
#: ~100 bytes each; when full it starts again empty.
CLUSTER_KEY_SLOTS_KEPT = 50_000

# --- ids -----------------------------------------------------------------------
#: Largest id accepted anywhere: ids are sorted-set scores and Lua numbers,
#: both doubles, exact only up to 2**53.
MAX_ID = 2**53 - 1

# --- streaming (Twitter v1.1 / Mastodon streaming) --------------------------------
#: Events kept in the capped event log (a Redis Stream, trimmed approximately):
#: what ``count`` backfill and SSE ``Last-Event-ID`` resume can reach.
EVENT_LOG_MAXLEN = 100_000
#: ``count`` backfill accepted on the v1.1 endpoints, as Twitter had it (416 outside).
STREAM_COUNT_MAX = 150_000
#: Twitter v1.1 filter limits: 400 track phrases of 1..60 bytes, 5,000 follow
#: entries, 25 location boxes (over -> 413, malformed -> 406).
TRACK_MAX_PHRASES = 400
TRACK_PHRASE_MAX_BYTES = 60
FOLLOW_MAX = 5000
BOXES_MAX = 25
#: Longest ``identifier`` a client may give.
IDENTIFIER_MAX_BYTES = 256
#: Default per-connection queue (events waiting to be written); settings override.
STREAM_QUEUE_MAX = 1000
#: A FALLING_BEHIND warning is sent at this fraction of the queue ...
STALL_WARNING_FRACTION = 0.6
#: ... at most once per this many seconds per connection (Twitter: about 5 minutes).
STALL_WARNING_INTERVAL_S = 300
#: Keep-alive newline on v1.1 streams (Twitter: 30 s) and SSE heartbeat comment
#: (Mastodon: 15 s); settings override.
STREAM_KEEPALIVE_S = 30.0
SSE_HEARTBEAT_S = 15.0
#: Seconds between WebSocket pings (and how long a pong may take), as Mastodon.
WS_PING_INTERVAL_S = 30.0
#: Largest WebSocket message (all its frames) a handed-off socket reads from
#: its client (redpoll/stream/handoff.py); beyond it the socket closes with
#: 1009. Client messages are subscribe/unsubscribe requests of a few dozen bytes.
WS_INBOUND_MAX_BYTES = 65536
#: How long a handed-off socket waits for the client's close frame after
#: sending its own before it drops the connection.
WS_CLOSE_TIMEOUT_S = 5.0
#: Seconds `redpoll serve` lets open requests (streams above all) run on
#: after SIGTERM before it cuts them and stops.
GRACEFUL_SHUTDOWN_S = 5
#: A connection cut off for stalling gets this long to flush its disconnect
#: message before its socket is closed under it.
STALL_CLOSE_GRACE_S = 2.0
#: Entries one XREAD of the event log returns at most, and how long it blocks.
EVENT_READ_COUNT = 500
EVENT_READ_BLOCK_MS = 5000
#: Reconnect back-off of the event reader after losing Redis: first, max.
RECONNECT_FIRST_S = 0.05
RECONNECT_MAX_S = 2.0
#: Mastodon user/list streams re-read the followed users / list members this often.
MEMBERSHIP_REFRESH_S = 10.0
#: ... by one task per process, this many (user, stream) groups at a time.
MEMBERSHIP_REFRESH_BATCH = 32
#: Latest events whose lag (creation -> the hub's last write of it) each
#: process keeps for /stream/stats' lag_ms_p50/p99/max.
STREAM_LAG_SAMPLES = 4096
#: WebSocket stream messages kept built per process (one per stream label and
#: event, shared by every socket on that stream; the cache is emptied when full).
WS_MESSAGES_KEPT = 1024
#: A backfill (v1.1 ``count``) or resume (SSE ``Last-Event-ID``) reads the
#: event log in pages of this many entries, and stops as soon as more events
#: match than the client's queue can take.
REPLAY_PAGE_ENTRIES = 500
#: Backfills / resumes one identifier, and one client IP, may start per
#: window (429 beyond); settings override (REDPOLL_STREAM_REPLAYS_PER_*).
STREAM_REPLAYS_PER_IDENTIFIER = 10
STREAM_REPLAYS_PER_IP = 30
STREAM_REPLAY_WINDOW_S = 60
#: Streams (v1.1, SSE, WebSocket) one identifier (v1.1 ``identifier``, a
#: token's user or app) and one client IP may hold open at once in one
#: process; beyond, v1.1 answers 420 (identifier) / 429 (IP) as Twitter did,
#: Mastodon streams 429. Settings override (REDPOLL_STREAM_CONNECTIONS_PER_*).
STREAM_CONNECTIONS_PER_IDENTIFIER = 10
STREAM_CONNECTIONS_PER_IP = 100
#: An "end" event (token revoked, user suspended) also closes a stream that
#: was being opened as it went by, for this long after it (at most this many
#: ended tokens/users remembered per process).
STREAM_ENDED_KEPT_S = 60.0
STREAM_ENDED_KEPT = 10_000
#: Open streams' tokens are checked this often, in one batch per process: a
#: stream whose token is gone (a revocation whose end event was lost) closes.
#: Settings override (REDPOLL_STREAM_TOKEN_CHECK_S).
STREAM_TOKEN_CHECK_S = 30
#: `redpoll serve` raises its open-file limit (soft -> hard) at start and warns
#: when it stays below this: 10,000 concurrent streams plus this
#: many spare descriptors (Redis connections, the embedded server, logs).
SERVE_OPEN_FILES_SPARE = 1024
SERVE_OPEN_FILES_NEEDED = 10_000 + SERVE_OPEN_FILES_SPARE
#: How long `redpoll serve` waits for its port while the HTTP processes of a
#: serve that was just killed hold it (they close it as they stop: a second or
#: two, and up to about 10 on a loaded machine, finishing what they were
#: answering) before it gives up with one line; a port held by anything else
#: is one line at once. The port is tried before anything starts, so no time
#: spent starting the embedded server is part of the wait.
SERVE_BIND_WAIT_S = 20.0
#: Seconds a connection may take to send a request's line and headers, from
#: when it opens or its previous response ends; then it is closed (a client
#: that sends nothing, or a byte at a time, holds no connection for ever).
#: Settings override (REDPOLL_HEADER_TIMEOUT_S).
HEADER_TIMEOUT_S = 10
#: An idle keep-alive connection is closed after this long. It is well above
#: the intervals clients poll at (Mastodon.py asks for a processing upload
#: every 5 s), so that a client's reuse of its connection does not race the
#: server's close of it (a reset request); after a response the next
#: request's headers have this long plus HEADER_TIMEOUT_S.
HTTP_KEEP_ALIVE_S = 20
#: Open connections (streams included) one HTTP process serves at once;
#: a request beyond them is answered 503 at once. Settings override
#: (REDPOLL_CONNECTIONS_MAX); serve lowers it to the open-file limit less
#: SERVE_FDS_RESERVED, so the cap, not a failing accept, is what clients meet.
SERVE_CONNECTIONS_MAX = 10_500
#: Descriptors an HTTP process keeps for other than client connections
#: (Redis connections, the embedded server, logs, metrics files).
SERVE_FDS_RESERVED = 512
#: How often an HTTP worker process checks that its serve still runs (where
#: the kernel cannot be asked to signal it, PR_SET_PDEATHSIG, and as a backstop).
PARENT_WATCH_S = 1.0

# --- HTTP API (redpoll/api) ------------------------------------------------------
#: Largest request body read, by the REST API and the streams alike
#: (``redpoll.gateway.body``); larger ones get 413 before parsing.
API_MAX_BODY_BYTES = 64 * 1024
#: Deepest nesting of arrays and objects a JSON body may have (the REST
#: API's and the inboxes'), checked on the raw bytes before parsing
#: (redpoll.gateway.body.check_json_depth): a body of nested brackets would
#: otherwise exhaust the parser's recursion. ActivityPub documents as
#: Mastodon, Pleroma or Misskey send them nest about 6 deep (an activity,
#: its object, its tags or attachments, their values).
JSON_MAX_DEPTH = 64
#: Longest Idempotency-Key header accepted on POST /api/v1/statuses.
IDEMPOTENCY_KEY_MAX_CHARS = 256
#: How long an Idempotency-Key remembers its status (Mastodon: 1 hour).
IDEMPOTENCY_WINDOW_S = 3600

# --- scheduled statuses (redpoll/scheduling) ---------------------------------------------
#: Scheduled statuses one account holds at most (Mastodon: 300) ...
SCHEDULED_STATUSES_MAX = 300
#: ... and at most this many scheduled for one day, UTC (Mastodon: 25).
SCHEDULED_STATUSES_PER_DAY = 25
#: A status is scheduled at least this far ahead (Mastodon: 5 minutes).
SCHEDULED_MIN_LEAD_S = 300
#: A scheduled status with uploads has its job queued this soon first, before
#: the uploads are held: if the call is cut short before the status is
#: written, that run finds it missing and releases the uploads.
SCHEDULED_SETTLE_MS = 120_000
#: How long an authorization code from /oauth/authorize can be exchanged.
AUTH_CODE_TTL_S = 600
#: A pending e-mail claim of a registration that died expires after this.
EMAIL_CLAIM_TTL_S = 60
# --- two-factor sign-in (redpoll/accounts/two_factor.py) -------------------------------
#: A TOTP code is good for one 30 s step (RFC 6238's default X) ...
TWO_FACTOR_STEP_S = 30
#: ... and this many steps either side of now (clock drift of the phone).
TWO_FACTOR_WINDOW_STEPS = 1
#: Digits in a code (what every authenticator app shows).
TWO_FACTOR_DIGITS = 6
#: A secret not yet confirmed by a code is dropped after this.
TWO_FACTOR_SETUP_TTL_S = 900
#: The second step of a sign-in (its code) must come this soon after the password.
TWO_FACTOR_CHALLENGE_TTL_S = 300
#: Wrong codes one second step takes before it is dropped (the password again).
TWO_FACTOR_CHALLENGE_TRIES = 5
#: Recovery codes made at once (Mastodon: 10), each this many hex digits.
TWO_FACTOR_RECOVERY_CODES = 10
TWO_FACTOR_RECOVERY_HEX = 20
#: The longest code (TOTP or recovery) looked at; anything longer is wrong.
TWO_FACTOR_CODE_MAX_CHARS = 64
#: Ids in one GET /api/v1/accounts/relationships or list membership change.
API_IDS_PER_REQUEST = 40
#: Status entities kept rendered (JSON bytes) per HTTP process; a status
#: never changes once posted, so one rendering serves every page it is on.
API_RENDERED_STATUSES = 20_000
#: Account entities kept rendered (JSON bytes) per HTTP process, used while
#: the account's record is unchanged (notifications name accounts this way).
API_RENDERED_ACCOUNTS = 20_000
#: JSON tails of a status's counts and flags kept per HTTP process, by value
#: (render/entities.state_json): a few hundred bytes each at most.
API_STATE_TAILS = 4096
#: distinct token scope sets whose expansion (auth.expand) a process keeps:
#: tokens share a few combinations; more are expanded again, never wrong
SCOPE_SETS_KEPT = 256
#: LISTs the public timeline is spread over on a cluster (one key would put
#: every public post on one master: `redpoll bench --cluster`); each holds
#: at most HOME_CAP ids and a page reads all of them.
PUBLIC_TIMELINE_SHARDS = 8
#: Base URLs (scheme://host) kept per HTTP process, by the Host header and
#: scheme that gave them.
API_BASE_URLS_KEPT = 256
#: Application name, website and redirect-uri bounds on POST /api/v1/apps.
APP_NAME_MAX_CHARS = 200
APP_URI_MAX_CHARS = 2000
APP_REDIRECT_URIS_MAX = 10
#: Passwords: Mastodon's minimum; the maximum bounds the argon2 input.
PASSWORD_MIN_CHARS = 8
PASSWORD_MAX_CHARS = 1024
EMAIL_MAX_CHARS = 254
#: Seconds instance statistics may be served from a per-process cache.
INSTANCE_STATS_CACHE_S = 60

# --- media (redpoll/media) ---------------------------------------------------
#: Largest image file accepted (Mastodon's image_size_limit, 16 MB); a
#: larger upload is answered 413 before its body is read.
MEDIA_IMAGE_MAX_BYTES = 16 * 1024 * 1024
#: Request body of an upload at most: the file plus its form fields.
MEDIA_UPLOAD_MAX_BODY_BYTES = MEDIA_IMAGE_MAX_BYTES + 64 * 1024
#: ... and of update_credentials with an avatar and a header.
PROFILE_UPLOAD_MAX_BODY_BYTES = 2 * MEDIA_IMAGE_MAX_BYTES + 64 * 1024
#: The decompression-bomb guard: an image whose header declares more pixels
#: than this (Mastodon's image_matrix_limit, 7680 x 4320) is refused with a
#: 422 before a pixel is decoded.
MEDIA_IMAGE_MATRIX_MAX = 33_177_600
#: An animated GIF: frames at most, and pixels over all its frames at most
#: (what decoding and re-encoding it costs).
MEDIA_GIF_FRAMES_MAX = 600
MEDIA_GIF_TOTAL_PIXELS_MAX = 150_000_000
#: Longest side of a stored original (larger ones are scaled down) and of
#: its preview (``small``).
MEDIA_ORIGINAL_MAX_SIDE = 1920
MEDIA_SMALL_MAX_SIDE = 400
#: Avatars and headers are cropped to these sizes (Mastodon's).
AVATAR_SIZE = (400, 400)
HEADER_SIZE = (1500, 500)
#: JPEG and WebP quality of what is stored.
MEDIA_QUALITY = 85
#: Width of the copy a blurhash is computed from, and its components
#: (Mastodon: 4 x 4).
MEDIA_BLURHASH_SOURCE_SIDE = 32
MEDIA_BLURHASH_COMPONENTS = (4, 4)
#: Alt text (Mastodon: 1,500 characters).
MEDIA_DESCRIPTION_MAX_CHARS = 1500
#: Attachments on one status (Mastodon: 4).
MEDIA_PER_STATUS = 4
#: Images decoded at once by one HTTP process (each in a thread of lower
#: priority: the event loop keeps a core's share); more uploads wait ...
MEDIA_PROCESSING_THREADS = 1
#: ... at most this many per process; beyond, an upload is answered 503.
MEDIA_PROCESSING_QUEUE = 64
#: Uploads never attached to a status are removed after this long ...
MEDIA_UNATTACHED_TTL_S = 86_400
#: ... by a sweep queued at most once per this many seconds (over all workers).
MEDIA_SWEEP_INTERVAL_S = 600
#: Stale entries one sweep handles at most (the next sweep goes on).
MEDIA_SWEEP_BATCH = 1000
#: A removed upload's record stays a tombstone this long (it names its files,
#: so that a replayed step deletes them again, and refuses a late write).
MEDIA_TOMBSTONE_S = 86_400
#: An upload's journal (jobs.MediaJob) whose producer went quiet is given up
#: (its files and record removed) only once it is this many job claim
#: periods old: a slow upload on a busy machine still finishes.
MEDIA_SETTLE_CLAIMS = 20
#: Written files whose write was cut short (temporary names) are removed by
#: the sweep once they are this old.
MEDIA_PARTIAL_FILE_S = 3600
#: Stored files are served with this Cache-Control max-age: a file's name
#: is its content's, so it never changes.
MEDIA_CACHE_MAX_AGE_S = 365 * 86_400
#: The S3 backend (REDPOLL_S3_BUCKET): threads (and connections) of one
#: process's calls to the bucket; seconds to connect and to wait for an
#: answer; attempts of one call in all (retried on throttling and
#: connection errors). An upload waits at most about
#: attempts x (connect + read) before it is answered 503.
MEDIA_S3_THREADS = 8
MEDIA_S3_CONNECT_TIMEOUT_S = 5
MEDIA_S3_READ_TIMEOUT_S = 10
MEDIA_S3_MAX_ATTEMPTS = 3

# --- other servers' media kept here (redpoll/media/remote.py) --------------------
#: Another server's attachments, avatars and headers are fetched once and
#: served from here (as Mastodon's media cache). A kept copy is dropped
#: (oldest first) once it is this old (s; REDPOLL_REMOTE_MEDIA_MAX_AGE_S;
#: Mastodon's ``tootctl media remove`` default: 7 days) ...
REMOTE_MEDIA_MAX_AGE_S = 7 * 86_400
#: ... or once all kept copies together take more than this (bytes of the
#: stored files; REDPOLL_REMOTE_MEDIA_MAX_BYTES). A dropped copy is fetched
#: again when it is asked for (a job; the request is answered meanwhile).
REMOTE_MEDIA_MAX_BYTES = 10 * 1024**3
#: One remote file fetched at most (bytes: as an upload, Mastodon's 16 MB) ...
REMOTE_MEDIA_FETCH_MAX_BYTES = MEDIA_IMAGE_MAX_BYTES
#: ... under one deadline (s) for the whole of it, redirects included.
REMOTE_MEDIA_FETCH_TIMEOUT_S = 30.0
#: A remote video or sound itself kept here at most (bytes; larger: shown
#: from its server, its preview kept), fetched under its own deadline (s).
#: (Mastodon's remote video limit is 99 MB; a file is held in memory while
#: it is fetched, so less here.)
REMOTE_MEDIA_AV_MAX_BYTES = 40 * 1024**2
REMOTE_MEDIA_AV_FETCH_TIMEOUT_S = 60.0
#: A kept copy asked for while it is not here queues its fetch at most once
#: in this long (s; its asks meanwhile are sent to the origin).
REMOTE_MEDIA_REQUEUE_S = 300
#: Kept copies one eviction pass drops at most (the next pass goes on).
REMOTE_MEDIA_EVICT_BATCH = 500
#: A remote note's or actor's custom emoji (``tag`` of type ``Emoji``)
#: kept at most, and a shortcode's length (Mastodon: 2 or more of [a-zA-Z0-9_])
REMOTE_EMOJI_PER_OBJECT = 50
REMOTE_EMOJI_SHORTCODE_MAX_CHARS = 64

# --- web app (redpoll/web) -------------------------------------------------------
#: Bytes of HTML/JS/CSS/SVG the web app ships (the page under 512 KB);
#: checked when the package is imported.
WEB_ASSETS_MAX_BYTES = 512 * 1024
#: a fixed body shorter than this is sent uncompressed (redpoll.web.compress):
#: compressing it saves less than its headers cost
COMPRESS_MIN_BYTES = 1024
#: a JSON answer of the API at least this long is compressed for a client that
#: accepts it (redpoll.api.app.Edge), at the levels below: chosen by measurement
#: on 20-item home and notification answers (docs/decisions.md, "API answers
#: compressed"): brotli 1 is both the fastest and, but for brotli 4 and gzip 6,
#: the smallest; gzip 1 for clients without brotli (gzip 6 costs 3x its CPU
#: for 15% fewer bytes)
API_COMPRESS_MIN_BYTES = 1024
API_BROTLI_QUALITY = 1
API_GZIP_LEVEL = 1

# --- operating it (redpoll/core/health.py, redpoll/api/ops.py, redpoll serve) -------------
#: While the database is unreachable, a process PINGs it this often to notice
#: that it is back (one log line per change, not one per failed call).
DB_PROBE_INTERVAL_S = 0.25
#: Loops that talk to the database (job worker, probe) wait this long after
#: a failure while it is away, doubling up to OUTAGE_BACKOFF_MAX_S.
OUTAGE_BACKOFF_FIRST_S = 0.25
OUTAGE_BACKOFF_MAX_S = 2.0
#: Retry-After (seconds) on 503 answers while the database is unreachable.
RETRY_AFTER_S = 1
#: /ready and /metrics give up on Redis reads after this long.
READY_CHECK_TIMEOUT_S = 2.0
#: /ready: jobs are "flowing" while the oldest queued job is younger than this
#: (default of REDPOLL_READY_JOB_AGE_S).
READY_MAX_JOB_AGE_S = 60
#: How often `redpoll serve` checks that the embedded server it started runs.
SUPERVISE_INTERVAL_S = 0.1
#: Longest wait between attempts to restart an embedded server that will not start.
SUPERVISE_BACKOFF_MAX_S = 5.0
#: How often a serve attached to another's embedded server checks whether
#: that server and its starter are gone (the data directory's lock is free),
#: to take it over.
STANDBY_INTERVAL_S = 0.25
#: Label sets (route template, method, status) whose metric children an HTTP
#: process keeps bound; routes are templates, so the set is small in practice.
METRICS_LABEL_SETS = 4096
#: How often each HTTP process copies its stream hub's figures into /metrics.
METRICS_SAMPLE_S = 1.0

# --- the conversation ----------------------------------------------------
#: Notifications kept per user; the oldest go first.
NOTIFICATIONS_MAX = 2000
#: Entries of a user's notification index that stand for no listed
#: notification (undone or dismissed) kept, so that repeating the action
#: does not notify again; the oldest go past this many (keys.notification_index_done).
NOTIFICATION_INDEX_DONE_KEPT = 2000
#: Notification records one page read looks at when filters (types,
#: exclude_types, account_id) leave some out; Mastodon pages 40 at most.
NOTIFICATIONS_SCAN_MAX = 2000
#: Page size for /api/v1/notifications (Mastodon: 40 default, 80 max);
#: for /api/v2/notifications the same numbers count groups.
NOTIFICATIONS_PAGE_DEFAULT = 40
NOTIFICATIONS_PAGE_MAX = 80
#: Grouped notifications (Mastodon 4.3): a group of one kind about one status
#: goes on while it started less than this many hours ago ...
NOTIFICATION_GROUP_SPAN_H = 12
#: ... and shows this many of its newest accounts (Mastodon: 8).
NOTIFICATION_GROUP_SAMPLE = 8
#: Notifications GET /api/v2/notifications/:group_key renders at most, and
#: accounts .../:group_key/accounts lists at most.
NOTIFICATION_GROUP_READ_MAX = 80
#: /api/v2/notifications/unread_count: groups counted (Mastodon: 100 / 1000).
NOTIFICATIONS_UNREAD_DEFAULT = 100
NOTIFICATIONS_UNREAD_MAX = 1000
#: Notification filtering (Mastodon 4.3): an account younger than this is new ...
NOTIFICATION_NEW_ACCOUNT_S = 30 * 86_400
#: ... and a follower of less than this long is not yet a follower.
NOTIFICATION_NEW_FOLLOWER_S = 3 * 86_400
#: A notification request's ``notifications_count`` and the policy's summary
#: count up to this many (Mastodon's MAX_MEANINGFUL_COUNT) ...
NOTIFICATION_REQUEST_COUNT_MAX = 100
#: ... requests one page lists (Mastodon: 40 default, 80 max) ...
NOTIFICATION_REQUESTS_PAGE_DEFAULT = 40
NOTIFICATION_REQUESTS_PAGE_MAX = 80
#: ... requests one page reads past hidden ones, and replies walked up to
#: find the recipient's private mention of the sender (Mastodon: 100).
NOTIFICATION_REQUESTS_SCAN_MAX = 400
NOTIFICATION_RESPONSE_DEPTH_MAX = 100
#: Domains one member may block at most (each read by every timeline page's
#: visibility decision of theirs).
DOMAIN_BLOCKS_MAX = 1000
#: The follows and followers one step of a domain block's cleanup reads
#: (redpoll.federation.member_blocks).
DOMAIN_BLOCK_STEP = 500

#: accounts or statuses read per round trip by a member's CSV export
#: (redpoll.portability.exports)
EXPORT_STEP = 1000

#: a member's CSV import (redpoll.portability.imports): the largest file
#: taken, the most rows of any kind (Mastodon's ROWS_PROCESSING_LIMIT; each
#: kind is also held to its own bound: FOLLOW_MAX, BLOCKS_MAX, ...), the
#: rows one step of its job does, and the imports kept per member (the
#: oldest finished one is dropped past it)
IMPORT_BYTES_MAX = 2 * 1024 * 1024
IMPORT_ROWS_MAX = 20_000
IMPORT_STEP = 25
IMPORTS_KEPT = 20
#: a member's archive of their posts and media (redpoll.portability.archive,
#: Mastodon's "Request your archive"): at most one per ARCHIVE_INTERVAL_S
#: (Mastodon's 7 days), each kept ARCHIVE_KEPT_S after it was asked for
#: (Mastodon's backup cleanup: 7 days), then removed; one step of its job
#: renders ARCHIVE_STATUS_STEP of the member's statuses or reads
#: ARCHIVE_ID_STEP of their favourites or bookmarks; the archives listed
ARCHIVE_INTERVAL_S = 7 * 24 * 3600
ARCHIVE_KEPT_S = 7 * 24 * 3600
ARCHIVE_STATUS_STEP = 100
ARCHIVE_ID_STEP = 1000
ARCHIVES_KEPT = 5
#: Accounts one may endorse (feature on one's profile) at most.
ENDORSEMENTS_MAX = 100
#: A private note on an account at most (characters; Mastodon's 2,000).
ACCOUNT_NOTE_MAX_CHARS = 2000
#: familiar_followers: the newest follows of the viewer it looks among (a
#: follow older than these is not found), and the accounts it answers for
#: each account asked about at most.
FAMILIAR_FOLLOWERS_SCAN = 7500
FAMILIAR_FOLLOWERS_MAX = 80
#: Accounts per page of favourited_by / reblogged_by (Mastodon: 40 / 80).
ACCOUNTS_PAGE_DEFAULT = 40
ACCOUNTS_PAGE_MAX = 80
#: Mentions and hashtags one status may carry (more: 422, nothing posted).
MENTIONS_PER_STATUS = 15
TAGS_PER_STATUS = 10
#: Longest hashtag name (characters).
TAG_MAX_CHARS = 100
#: Entries kept in one hashtag's timeline (like a home).
TAG_TIMELINE_CAP = 1000
#: A thread's context: ancestors walked up, descendants shown at most.
CONTEXT_ANCESTORS_MAX = 40
CONTEXT_DESCENDANTS_MAX = 60
#: Hashtags one user may follow; followers of one tag a post reaches at once.
FOLLOWED_TAGS_MAX = 100
TAG_FOLLOWERS_DELIVERED_MAX = 10_000
#: Names one hashtag-prefix search returns at most.
TAG_SEARCH_MAX = 40
#: Days of a hashtag's ``history`` (uses and accounts per day), as Mastodon.
TAG_HISTORY_DAYS = 7
#: Hashtags in each of a tag timeline's ``any[]``, ``all[]``, ``none[]``
#: (Mastodon's TagFeed: 4 per mode).
TAG_TIMELINE_COMBINE_MAX = 4
#: Statuses a combined tag timeline page (any/all/none) reads at most to
#: fill itself; the candidates are the newest of the tag's and the any[]
#: tags' timelines (each at most TAG_TIMELINE_CAP).
TAG_TIMELINE_COMBINE_SCAN = 400
#: An account's statuses with one hashtag (``tagged=``): the newest this
#: many of its set of them (keys.tag_posts) are the candidates a page reads.
PROFILE_TAGGED_SCAN = 1000
#: A boost is not put into a home whose newest this-many entries already hold
#: its original or another boost of it (Mastodon's REBLOG_FALLOFF is 40).
REBLOG_WINDOW = 40
#: Boosts a home remembers for that check (keys.home_reblogs), the newest
#: by boost id: each one delivered is a home entry, so older ones are below
#: the window (twice the window leaves room for boosts taken back since).
HOME_REBLOGS_KEPT = 2 * REBLOG_WINDOW
#: Undone favourites/boosts whose operation id is still remembered, per
#: status and per user (keys.versions_undone): a journal replayed later
#: than this many undos of the same status (or by the same user) could
#: apply again; journals are replayed within minutes.
VERSIONS_UNDONE_KEPT = 1000
#: Statuses one user may have favourited, bookmarked, and boosted, at once
#: (more: 422). The per-user version hashes (keys.favourite_applied,
#: keys.reblog_applied) hold at most these plus VERSIONS_UNDONE_KEPT.
FAVOURITES_MAX = 100_000
BOOKMARKS_MAX = 100_000
#: The server's rules (redpoll admin rules-add) and the length of each, and
#: of the extended description.
INSTANCE_RULES_MAX = 50
INSTANCE_RULE_MAX_CHARS = 1_000
#: the message shown while registrations are closed (redpoll.instance.registrations)
REGISTRATIONS_MESSAGE_MAX_CHARS = 2_000
#: a sign-up's reason (Mastodon's invite request text, read by moderators)
SIGN_UP_REASON_MAX_CHARS = 1_000
#: invites (redpoll.accounts.invites): how many a member keeps at once, the
#: longest expiry one may ask for, the most uses one may allow, how long an
#: expired or used-up invite's record is kept (shown as such) before it goes
INVITES_PER_USER_MAX = 50
INVITE_EXPIRES_MAX_S = 366 * 86_400
INVITE_USES_MAX = 1_000
INVITE_KEPT_AFTER_S = 30 * 86_400
INVITE_COMMENT_MAX_CHARS = 420
#: invites one list shows (newest first)
INVITES_LIST_MAX = 200
#: how many accounts with a staff role are told of a sign-up (admin.sign_up)
SIGN_UP_NOTIFIED_STAFF_MAX = 200
INSTANCE_DESCRIPTION_MAX_CHARS = 100_000
#: Statuses one account may pin to its profile (Mastodon: MAX_PINNED_TOOTS, 5).
PINS_MAX = 5
#: Polls (redpoll.polls), as Mastodon's PollValidator: options per poll,
#: characters per option, and how long a poll may run (seconds: five minutes
#: to Mastodon's month, 2,629,746 s).
POLL_OPTIONS_MIN = 2
POLL_OPTIONS_MAX = 4
POLL_OPTION_MAX_CHARS = 50
POLL_EXPIRES_MIN_S = 5 * 60
POLL_EXPIRES_MAX_S = 2_629_746
#: Voters (and the author) told a poll ended, at most.
POLL_NOTIFIED_MAX = 100_000
#: Content filters (redpoll.filters): filters per account, keywords and
#: statuses per filter, the length of a keyword and of a title.
FILTERS_MAX = 100
FILTER_KEYWORDS_MAX = 50
FILTER_STATUSES_MAX = 50
FILTER_KEYWORD_MAX_CHARS = 200
FILTER_TITLE_MAX_CHARS = 200
#: Reads and compare-and-set writes one filter change makes at most while
#: other changes to the same filter keep landing first (then 409).
FILTER_WRITE_TRIES = 50
#: Accounts whose compiled filters one process keeps (by their version).
FILTERS_KEPT = 10_000
#: Edits one status may have (more: 422); its history (keys.status_edits)
#: holds the original and these, at most EDITS_MAX + 1 versions.
EDITS_MAX = 50
#: Boosters of a status told of an edit (Mastodon's ``update`` notification).
EDIT_NOTIFIED_BOOSTERS_MAX = 10_000
#: Accepted quotes of a status whose authors are told of an edit
#: (Mastodon's ``quoted_update`` notification), at most.
QUOTED_UPDATE_NOTIFIED_MAX = 10_000
REBLOGS_MAX = 100_000
#: Boosts of one status taken down with it in the delete call itself.
BOOSTS_REMOVED_PER_DELETE = 10_000
#: ``status`` notifications one post makes (followers with notify=true), and
#: favourite notifications one delete takes back, at most.
STATUS_NOTIFY_MAX = 10_000
NOTIFICATIONS_UNDONE_PER_DELETE = 10_000
#: Accounts one user may block, and mute, at once (more: 422).
BLOCKS_MAX = 10_000
MUTES_MAX = 10_000
#: A mute's ``duration`` at most (seconds; 0 = until unmuted).
MUTE_DURATION_MAX_S = 10 * 365 * 86_400
#: A report's comment (characters) and statuses, at most (Mastodon: 1,000 and no cap).
REPORT_COMMENT_MAX_CHARS = 1000
REPORT_STATUSES_MAX = 50
#: Direct conversations one user keeps (the oldest beyond are forgotten).
DM_CONVERSATIONS_MAX = 2000
#: Pending follow requests one locked account holds at most (more: 422).
FOLLOW_REQUESTS_MAX = 10_000
#: Further reads a home or list page makes to stay full when entries are
#: hidden from its reader (mutes, blocks, ended follows): at most this many.
HIDDEN_REFILL_READS = 3
#: Further reads a public or hashtag page with ``only_media`` makes to fill
#: itself with statuses that have attachments, at most (a page still short
#: after them pages on from the last status read).
ONLY_MEDIA_READS = 10

# --- federation (redpoll.federation) ---------------------------------------------
#: An outgoing request (a fetch, a delivery, a Web Push; redpoll.net.http):
#: its one deadline (s) for the whole of it (resolving, connecting, the
#: headers and the body together: a peer trickling its answer is cut off)
#: and the largest answer it reads (bytes); an incoming activity's body at
#: most (bytes).
FED_FETCH_TIMEOUT_S = 10.0
FED_FETCH_MAX_BYTES = 1_000_000
#: Redirects a fetch follows at most (each hop checked and timed as a fetch).
FED_FETCH_REDIRECTS = 3
FED_INBOX_MAX_BYTES = 256_000
#: A signed request's Date: at most this old, and at most this far ahead
#: (s; Mastodon: 12 hours and 1 hour).
FED_SIGNATURE_MAX_AGE_S = 12 * 3600
FED_CLOCK_SKEW_S = 3600
#: An activity id is remembered this long (s) to drop the same activity
#: delivered again.
FED_SEEN_TTL_S = 7 * 86_400
#: A remote actor's document (its key, inbox) is fetched again after this long (s).
FED_ACTOR_REFRESH_S = 86_400
#: Delivery: tries per activity and inbox, waiting FED_RETRY_BASE_S x 4^n
#: between them (capped at FED_RETRY_MAX_S: about four days in all), and a
#: host whose deliveries failed this many times in a row is skipped as
#: unavailable until it is heard from again.
FED_DELIVERY_ATTEMPTS = 12
FED_RETRY_BASE_S = 30
FED_RETRY_MAX_S = 12 * 3600
FED_HOST_FAILURES_UNAVAILABLE = 30
#: A note's replies collection lists at most this many replies; asking for a
#: remote status's context fetches at most this many of its replies and
#: parents from their servers, at most once per FED_CONTEXT_EVERY_S.
FED_REPLIES_LISTED = 40
#: how deep a remote note's quoted notes are fetched when not kept here
#: (the quoted note of a quoted note...; Mastodon's MAX_SYNCHRONOUS_DEPTH)
FED_QUOTE_FETCH_DEPTH = 2
#: the longest relay inbox URL an admin may add
FED_RELAY_URL_MAX_CHARS = 2048
FED_CONTEXT_FETCHED = 20
FED_CONTEXT_EVERY_S = 600
#: Loaded signing and verifying keys each process keeps (loading one costs
#: far more than using it).
FED_KEYS_KEPT = 4096
#: A signature that does not verify with a key kept less than this long (s)
#: is refused without fetching the key again (each forged request would
#: otherwise make this server fetch the actor: a free reflector).
FED_KEY_REFETCH_S = 300
#: A server that signed to this one with RFC 9421 is sent RFC 9421
#: signatures for this long after (s), draft-cavage ones otherwise.
FED_RFC9421_KEPT_S = 30 * 86_400
#: A remote account's username (preferredUsername) at most (characters).
FED_USERNAME_MAX_CHARS = 100
#: A key id that is no ``actor#fragment`` (a key at its own URL): the key id
#: -> actor id learned when it was fetched is kept this long (s).
FED_KEY_OWNER_TTL_S = FED_ACTOR_REFRESH_S
#: Remote statuses: the plain text kept of a note's HTML at most (characters).
FED_NOTE_MAX_CHARS = 20_000
#: A remote poll (a Question): its options and the characters of each at
#: most; a Question with more or longer is kept as a status without its poll
#: (a vote names its option by the whole title, so none is cut short).
FED_POLL_OPTIONS_MAX = 10
FED_POLL_OPTION_MAX_CHARS = 200
#: A local poll's counts go to other servers (an Update of its Question) at
#: most once per this many seconds while votes come in, and once when it ends.
FED_POLL_UPDATE_EVERY_S = 30
#: A Move (redpoll.federation.moves): the old account's local followers,
#: blockers or muters one step of its job walks; and how long a Move of an
#: account is taken once (Mastodon's 7 days: another in that time moves
#: nothing).
FED_MOVE_BATCH = 100
FED_MOVE_COOLDOWN_S = 7 * 86_400

# --- trends and suggestions (redpoll.trends, redpoll.suggestions) ---------------
#: Per kind (hashtags, links, statuses) and UTC day, the candidates kept (the
#: most used; a day's index is bounded by this).
TRENDS_CANDIDATES_KEPT = 1000
#: Candidates of each of the last two days a trends read scores (the most
#: used of each day): the work of one request.
TRENDS_CANDIDATES_READ = 60
#: A hashtag or link trends only when this many accounts used it in the
#: last day (Mastodon's review threshold, set low for small servers).
TRENDS_MIN_ACCOUNTS = 1
#: Trending statuses: posted at most this long ago (s).
TRENDS_STATUS_WINDOW_S = 48 * 3600
#: Default and maximum ``limit`` of the trends (Mastodon: 10 / 20 for
#: hashtags, 20 / 40 for statuses and links); ``offset`` + ``limit`` at
#: most TRENDS_WINDOW.
TRENDS_TAGS_DEFAULT = 10
TRENDS_TAGS_MAX = 20
TRENDS_WINDOW = 200
#: Links counted per status at most, and a counted link's length at most.
TRENDS_LINKS_PER_STATUS = 5
TRENDS_LINK_MAX_CHARS = 400
#: The newest statuses kept per link for its timeline (Mastodon 4.3's
#: /api/v1/timelines/link, which pages further back in its database).
LINK_STATUSES_KEPT = 1000
#: Suggestions: the accounts followed whose followings are read (the most
#: recently followed), and of each the most recent followings read.
SUGGESTIONS_FOLLOWEES_READ = 50
SUGGESTIONS_PER_FOLLOWEE = 100
#: Most-followed local accounts kept as the global source, and read per request.
SUGGESTIONS_POPULAR_KEPT = 1000
SUGGESTIONS_POPULAR_READ = 200
#: Default and maximum ``limit`` (Mastodon: 40 / 80).
SUGGESTIONS_DEFAULT = 40
SUGGESTIONS_MAX = 80
#: Dismissed suggestions kept per account (the oldest go first).
SUGGESTIONS_DISMISSED_MAX = 1000

#: Web Push (redpoll.push): subscriptions per account (one per access
#: token), the longest endpoint URL, tries per notification and
#: subscription, waiting PUSH_RETRY_BASE_S x 4^n between them (capped at
#: PUSH_RETRY_MAX_S), how long a push service keeps an undelivered message
#: (its TTL header, Mastodon's 48 hours), the body's characters (Mastodon's
#: 140) and a VAPID token's lifetime (RFC 8292: at most 24 hours).
PUSH_SUBSCRIPTIONS_MAX = 50
PUSH_ENDPOINT_MAX_CHARS = 2_000
PUSH_ATTEMPTS = 6
PUSH_RETRY_BASE_S = 30
PUSH_RETRY_MAX_S = 3_600
PUSH_TTL_S = 48 * 3600
PUSH_BODY_MAX_CHARS = 140
PUSH_VAPID_EXP_S = 12 * 3600

#: The admin API (redpoll.admin): a page's default and largest ``limit``
#: (Mastodon: 100, and twice that); the account records one account list
#: reads at most to fill a page (the filters are applied as it walks the
#: accounts by id: a page cut short by this says where to go on in its Link),
#: read in batches of ADMIN_SCAN_BATCH; the unresolved reports an account
#: action resolves at most; the audit log's entries (the oldest go first),
#: a warning's text.
ADMIN_PAGE_DEFAULT = 100
ADMIN_PAGE_MAX = 200
ADMIN_ACCOUNTS_SCAN = 5_000
ADMIN_SCAN_BATCH = 250
ADMIN_REPORTS_SCAN = 5_000
AUDIT_LOG_MAX = 100_000
#: the roles an owner may define (redpoll.admin.custom_roles), a role's name,
#: and the highest position one may have (the owner's is 1,000)
ROLES_MAX = 100
ROLE_NAME_MAX_CHARS = 60
ROLE_POSITION_MAX = 100_000
ADMIN_WARNING_MAX_CHARS = 5_000
ADMIN_COMMENT_MAX_CHARS = 1_000
#: how long after a strike its account may appeal it (Mastodon's Appeal::MAX_STRIKE_AGE)
APPEAL_WINDOW_S = 20 * 86_400
#: an appeal's text (Mastodon: 2,000 characters)
APPEAL_MAX_CHARS = 2_000
#: the appealed warnings a moderator's list reads at most (newest first)
APPEALS_SCAN = 1_000
#: the server settings moderators set (redpoll.instance.settings): title, short description, contact
INSTANCE_TITLE_MAX_CHARS = 100
INSTANCE_SHORT_DESCRIPTION_MAX_CHARS = 500
#: E-mail domain blocks and canonical e-mail blocks kept at most (each kind).
EMAIL_BLOCKS_MAX = 10_000
#: How long a process keeps the networks of the no_access IP blocks before
#: reading them again (a new block refuses requests within this time).
IP_BLOCKS_KEPT_S = 5.0
#: ... and how long a request waits for that read at most.
IP_BLOCKS_READ_S = 0.5

# --- featured tags --------------------------------------------------------------------
#: Hashtags one account may feature on its profile (Mastodon's FeaturedTag::LIMIT).
FEATURED_TAGS_MAX = 10
#: Tags an account used last, kept for the featured tags' suggestions.
TAGS_USED_KEPT = 100
#: Suggestions answered (Mastodon's: ten recently used, not featured).
FEATURED_TAG_SUGGESTIONS = 10

# --- muted threads --------------------------------------------------------------------
#: Threads one account may mute (the oldest mute is not dropped: a mute past
#: this is refused with 422).
THREAD_MUTES_MAX = 1000

# --- e-mail (redpoll/mail) --------------------------------------------------------------
#: Ports used when REDPOLL_SMTP_PORT is not set, by REDPOLL_SMTP_SECURITY.
SMTP_PORTS = {"none": 25, "starttls": 587, "tls": 465}
#: One SMTP conversation (connect, hello, TLS, log in, send) gets this long.
SMTP_TIMEOUT_S = 30
#: Tries of one message, waiting MAIL_RETRY_BASE_S x 4^n between them
#: (capped at MAIL_RETRY_MAX_S) while the SMTP server is away or answers a
#: temporary error (4xx); a permanent refusal (5xx) is final at once.
MAIL_ATTEMPTS = 8
#: How long a queued mail job is remembered as sent: another run of it (a
#: worker that took it over after its claim ran out) sends nothing.
MAIL_SENT_KEPT_S = 86_400
MAIL_RETRY_BASE_S = 15
MAIL_RETRY_MAX_S = 3_600
#: Messages queued for one address at most, per window (more are dropped and
#: logged): no one can flood a mailbox through the server.
MAIL_PER_ADDRESS = (10, 3_600)
#: Requests for a password-reset or confirmation mail (the forgot-password
#: form, POST /api/v1/emails/confirmations, an e-mail change): per client IP
#: and per address (Mastodon's rack-attack figures). Settings override
#: (REDPOLL_RATE_MAIL_IP, REDPOLL_RATE_MAIL_ADDRESS).
MAIL_REQUESTS_PER_IP = (25, 300)
MAIL_REQUESTS_PER_ADDRESS = (5, 1_800)
#: How long a link works: a sign-up or e-mail change confirmation (Devise's
#: confirm_within as Mastodon sets it, 2 days) and a password reset (6 hours).
CONFIRMATION_TTL_S = 2 * 86_400
PASSWORD_RESET_TTL_S = 6 * 3_600
#: Days the server's activity counters are kept (redpoll.instance.activity:
#: logins, sign-ups, statuses, interactions, reports opened and resolved, per
#: UTC day): the admin dashboard's measures and retention and
#: /api/v1/instance/activity reach back at most this far.
ACTIVITY_DAYS_KEPT = 400
#: Other servers whose statuses of a day are counted for the dashboard's
#: servers dimension (the most active kept)
ACTIVITY_SERVERS_KEPT = 1_000
#: Rows of one dashboard dimension (Admin::Metrics ``limit``): default, most
DIMENSION_ROWS_DEFAULT = 10
DIMENSION_ROWS_MAX = 100
#: Accounts a process remembers having recorded as active today (the rest are
#: recorded again, which counts nothing twice)
ACTIVITY_SEEN_MEMO = 10_000
#: Sign-ups of one retention cohort read at most (a larger cohort is rated
#: on its first ones)
RETENTION_COHORT_MAX = 10_000
#: Seconds a client or proxy may keep /api/v1/instance/activity (Cache-Control
#: public; Mastodon's expires_in 1.day)
INSTANCE_ACTIVITY_CACHE_S = 86_400
#: The profile directory (GET /api/v1/directory): accounts per page (Mastodon's
#: default and most), and the account records one request reads at most
#: while filtering (the discoverable, not suspended, not hidden from the viewer)
DIRECTORY_DEFAULT = 40
DIRECTORY_MAX = 80
DIRECTORY_SCAN = 4_000

# --- link preview cards (redpoll.cards) ---------------------------------------------
#: the most of a linked page read to make its card (bytes; a larger page has none)
CARD_PAGE_MAX_BYTES = 1024 * 1024
#: one deadline for fetching a linked page, its redirects included (s)
CARD_FETCH_TIMEOUT_S = 15.0
#: how long a card is kept for its URL before it is fetched again when asked
#: (s; Mastodon's two weeks, and never longer than the remote media cache
#: keeps its image: REDPOLL_REMOTE_MEDIA_MAX_AGE_S)
CARD_MAX_AGE_S = 14 * 86_400
#: how long a URL that made no card (no title, refused, a 4xx, too large) is
#: not fetched again (s)
CARD_NONE_TTL_S = 3600
#: how long a URL's fetch is held by one job (s; a second job meanwhile leaves it)
CARD_FETCHING_S = 60
#: the longest title, description, provider and author names of a card (chars)
CARD_TITLE_MAX_CHARS = 200
CARD_DESCRIPTION_MAX_CHARS = 500
CARD_NAME_MAX_CHARS = 100
#: the longest URL a card is made for, or names (chars)
CARD_URL_MAX_CHARS = 2048
# --- annual reports (redpoll.annual, Mastodon's Wrapstodon) ---------------------------------
#: A member's statuses one report reads at most, newest first (the year's
#: beyond them are not counted).
ANNUAL_REPORT_STATUSES_SCANNED = 20_000
#: Statuses read per batch while a report is made.
ANNUAL_REPORT_BATCH = 500
#: Hashtags a report names (Mastodon's schema 2: the one most used) and how
#: often a tag must be used more than to be named (Mastodon: more than once).
ANNUAL_REPORT_TOP_HASHTAGS = 1
ANNUAL_REPORT_MIN_TAGGINGS = 1
#: Fewer posts, replies and boosts in the year than this: a "lurker"
#: (Mastodon's archetype: the average of its active users in 2023).
ANNUAL_REPORT_LURKER_BELOW = 113
#: Seconds a queued report reads as "generating" before it may be queued again.
ANNUAL_REPORT_GENERATING_S = 300
#: The campaign's days of December (Mastodon: the 10th to the 31st).
ANNUAL_REPORT_CAMPAIGN_DAYS = (10, 31)

# --- collections (Mastodon 4.6's featured collections of accounts) ----------------
#: Collections one account may own (Mastodon's default role collection_limit).
COLLECTIONS_PER_USER = 10
#: Pending or accepted items of one collection at most (Mastodon's
#: Collection::MAX_ITEMS; revoked ones are not counted).
COLLECTION_ITEMS_MAX = 25
#: A local collection's name and description at most (characters, Mastodon's).
COLLECTION_NAME_MAX_CHARS = 40
COLLECTION_DESCRIPTION_MAX_CHARS = 100
#: A page of an account's collections, or of those an account is in
#: (Mastodon's DEFAULT_COLLECTIONS_LIMIT, at most twice it).
COLLECTIONS_PAGE_DEFAULT = 40
COLLECTIONS_PAGE_MAX = 80
