"""Every bound redpoll enforces, named in one place.

Settings may override the few that a deployment tunes (see ``settings.py``);
everything else is a constant because changing it changes the data layout or
the public API.
"""

# --- timelines -------------------------------------------------------------
#: Entries kept in a home or list timeline (the SPEC's source uses 1,000).
HOME_CAP = 1000
#: Default and maximum page size for timeline reads (Mastodon: 20 / 40).
PAGE_DEFAULT = 20
PAGE_MAX = 40
#: Statuses copied into a home timeline when following someone (SPEC 4).
BACKFILL = HOME_CAP

# --- delivery ----------------------------------------------------------------
#: Followers (or list timelines) served by one delivery step: the first step
#: runs inside the posting call, each later one is a deferred job (SPEC 5).
FANOUT_BATCH = 1000
#: Upper bound on followees scanned by one refill job.
REFILL_MAX_SOURCES = 5000

# --- statuses ----------------------------------------------------------------
#: Characters in a status text (Mastodon's default limit).
STATUS_MAX_CHARS = 500
#: Extra fields on a status (``location`` and the like).
EXTRA_MAX_FIELDS = 8
EXTRA_NAME_MAX = 32
EXTRA_VALUE_MAX_BYTES = 256

# --- users -------------------------------------------------------------------
LOGIN_MAX_CHARS = 30
DISPLAY_NAME_MAX_CHARS = 64
BIO_MAX_CHARS = 500
#: A login claim whose user record is still missing after this long belongs
#: to a sign-up that died, and the next sign-up may take it over.
ORPHAN_CLAIM_MS = 60_000

# --- lists -------------------------------------------------------------------
LIST_TITLE_MAX_CHARS = 100
LISTS_PER_USER = 100
LIST_MAX_MEMBERS = 5000

# --- jobs --------------------------------------------------------------------
#: Streams the job queue is sharded over, so a cluster spreads the queue.
JOB_SHARDS = 4
#: New work is refused (QueueFull) once this many jobs wait, summed over shards.
QUEUE_MAX_JOBS = 1_000_000
#: Jobs a worker reads per shard per round trip.
WORKER_READ_COUNT = 16
#: A job is retried at most this often before it is parked as dead.
JOB_MAX_ATTEMPTS = 20

# --- ids -----------------------------------------------------------------------
#: Largest id accepted anywhere: ids are sorted-set scores and Lua numbers,
#: both doubles, exact only up to 2**53.
MAX_ID = 2**53 - 1
