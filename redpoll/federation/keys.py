"""The keys federation keeps. A local account's key pair and its remote
followers sit in the account's slot ({uid}), so one script changes them and
the account's follower count together; indexes by URI are keyed by a digest
of the URI (a URI may hold braces, which would pick another hash tag)."""

from __future__ import annotations

import hashlib


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def key_pair(uid: int) -> str:
    """Hash: a local account's key pair (``private``, ``public`` PEM)."""
    return f"fed:key:{{{uid}}}"


#: Hash: the server's own actor's key pair (it signs fetches).
INSTANCE_KEY = "fed:key:instance"


def actor(uid: int) -> str:
    """Hash: a remote account's actor: ``uri``, ``inbox``, ``shared_inbox``,
    ``key_id``, ``pem``, ``fetched`` (ms), ``moved_to`` (an account id, after a Move)."""
    return f"fed:actor:{{{uid}}}"


def move_claim(uid: int) -> str:
    """String with a TTL: ``<new id> <Move id>`` of the Move of remote
    account ``uid`` taken (fed_move.lua; limits.FED_MOVE_COOLDOWN_S)."""
    return f"fed:move:{{{uid}}}"


def by_uri(uri: str) -> str:
    """String: a remote actor's id -> its account's id."""
    return f"fed:uri:{{{_h(uri)}}}"


def note(uri: str) -> str:
    """String: a remote note's id -> the status id it is kept as."""
    return f"fed:note:{{{_h(uri)}}}"


def quote_approval(uri: str) -> str:
    """String: the URI of a QuoteAuthorization another server issued ->
    ``<quoted id>:<quoting id>``, the quote it approved (its Delete revokes
    that quote: redpoll.federation.quoting)."""
    return f"fed:qauth:{{{_h(uri)}}}"


def remote_followers(uid: int) -> str:
    """ZSET: remote account id -> when it followed local account ``uid``."""
    return f"fed:fers:{{{uid}}}"


def inboxes(uid: int) -> str:
    """Hash: inbox URL -> how many of ``uid``'s remote followers it serves
    (shared inboxes count once per follower): where a post goes, one
    request per inbox."""
    return f"fed:inboxes:{{{uid}}}"


def follower_inbox(uid: int) -> str:
    """Hash: remote follower id -> the inbox it is counted under in :func:`inboxes`."""
    return f"fed:ferin:{{{uid}}}"


def follow_request(uid: int) -> str:
    """Hash: remote account id -> the Follow it sent locked account ``uid``,
    kept to answer it (Accept or Reject) when the account decides."""
    return f"fed:freq:{{{uid}}}"


def follow_activity(follower: int, followee: int) -> str:
    """String: the id of the Follow a local account sent a remote one (to Undo it)."""
    return f"fed:follow:{{{follower}}}:{followee}"


def context_fetched(uri: str) -> str:
    """String with a TTL: a remote note whose thread was fetched lately."""
    return f"fed:ctx:{{{_h(uri)}}}"


def seen(actor: str, activity_id: str) -> str:
    """String with a TTL: an activity of ``actor`` already taken
    (limits.FED_SEEN_TTL_S). Per actor: one server's activity never
    takes the place of another's of the same id."""
    return f"fed:seen:{{{_h(actor + ' ' + activity_id)}}}"


def key_owner(key_id: str) -> str:
    """String with a TTL: a key id that is no ``actor#fragment`` -> the id
    of the actor it belongs to (remote.key_owner)."""
    return f"fed:keyowner:{{{_h(key_id)}}}"


def rfc9421_host(host: str) -> str:
    """String with a TTL: ``host`` signed to this server with RFC 9421
    lately (limits.FED_RFC9421_KEPT_S), so deliveries there are signed so."""
    return f"fed:rfc9421:{{{_h(host)}}}"


def inbox_rate(host: str) -> str:
    """The rate-limit bucket (accounts.ratelimit) of activities from ``host``."""
    return f"fed:{host}:inbox"


def host_failures(host: str) -> str:
    """String: deliveries to ``host`` that failed in a row."""
    return f"fed:fail:{{{_h(host)}}}"


#: Hash: blocked host -> its block (redpoll.federation.domains), JSON; and
#: the field DOMAIN_BLOCK_SEQ, the last block id given (no host has a "#").
DOMAIN_BLOCKS = "fed:domains"
DOMAIN_BLOCK_SEQ = "#seq"
#: ... and, in the same hash (one read decides a host): the allowed hosts,
#: each field DOMAIN_ALLOW_PREFIX + host -> its JSON (id, at), their last id
#: in DOMAIN_ALLOW_SEQ, and FEDERATION_MODE ("limited": only allowed hosts
#: federate; absent: every host not blocked)
DOMAIN_ALLOW_PREFIX = "+"
DOMAIN_ALLOW_SEQ = "#allow_seq"
FEDERATION_MODE = "#mode"
#: SET of the hosts of the remote accounts kept here: the server's peers
#: (/api/v1/instance/peers)
PEERS = "fed:peers"

#: Consumer group of the event log that sends local posts, edits and deletes out.
OUTBOX_GROUP = "federation"


#: Hash: a relay's inbox URL -> its record (JSON: id, state, its Follow's
#: id, its actor; redpoll.federation.relays)
RELAYS = "fed:relays"
#: String: the last relay id given
RELAY_SEQ = "fed:relay_seq"


def emoji(host_digest: str) -> str:
    """Hash: a remote server's custom emoji as its notes and actors last
    named them, shortcode -> its image's URL there (redpoll.federation.emoji;
    ``host_digest``: media.entity.host_digest of its host)."""
    return f"fed:emoji:{{{host_digest}}}"
