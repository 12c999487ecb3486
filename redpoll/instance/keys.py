"""The keys the instance feature keeps of its own (its rules, description and
settings are core's, redpoll/core/keys.py): the day counters of the server's
activity (redpoll.instance.activity)."""

from __future__ import annotations

#: what is counted per UTC day, each a HyperLogLog of the events' ids
#: (``day``: days since the epoch), expiring after
#: limits.ACTIVITY_DAYS_KEPT days. Every day of one kind shares a slot (the
#: hash tag is the kind): a period's distinct members are one PFCOUNT.
KINDS = ("logins", "registrations", "statuses", "interactions", "reports", "resolved")


def day(kind: str, day: int) -> str:
    return f"activity:{{{kind}}}:{day}"


#: ZSET: local account id -> ms it signed up, for the retention cohorts
#: (entries older than limits.ACTIVITY_DAYS_KEPT days are dropped on write)
JOINED = "activity:{people}:joined"
#: ZSET: local account id -> ms of its last day of activity (a request with
#: its token; recorded once a day), same slot and bound as JOINED
SEEN = "activity:{people}:seen"


def server_day(domain: str, day: int) -> str:
    """HyperLogLog of the ids of the statuses that came from ``domain`` on
    one day (the instance_statuses measure); every day of a domain on its slot."""
    return f"activity:{{srv:{domain}}}:{day}"


def servers_day(day: int) -> str:
    """ZSET: domain -> its statuses that day (only raised), the most active
    limits.ACTIVITY_SERVERS_KEPT kept (the servers dimension)."""
    return f"activity:servers:{day}"
