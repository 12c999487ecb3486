"""Stream filters: parsing, matching (as Twitter v1.1), and the index
the hub uses, checked against the reference :meth:`Filter.matches`."""

from __future__ import annotations

import random

import pytest

from redpoll.core import limits
from redpoll.stream.filters import (
    Event,
    Filter,
    ParamError,
    parse_count,
    parse_filter,
    residues,
    words,
)
from redpoll.stream.index import FilterIndex


def ev(text="", sid=1, uid=7, login="Alice", location=None, kind="update"):
    status = {"id": sid, "text": text, "user_id": uid, "login": login, "created_at": 0}
    if location is not None:
        status["location"] = location
    return Event(f"{sid}-0", kind, status)


def flt(**params):
    return parse_filter(params, "client-1", sample=False)


# --- track ------------------------------------------------------------------------------
def test_track_comma_is_or_space_is_and_case_insensitive():
    f = flt(track="twitter api,twitter streaming")
    assert f.matches(ev("The Twitter API is awesome"))
    assert f.matches(ev("STREAMING on twitter, has a streaming API"))
    assert not f.matches(ev("I'm new to Twitter"))


def test_track_punctuation_ignored_in_status_not_in_term():
    f = flt(track="Twitter")
    for text in [
        "TWITTER",
        '"Twitter"',
        "twitter.",
        "#twitter",
        "@twitter",
        "http://twitter.com",
        "my brother says twitter!",
    ]:
        assert f.matches(ev(text)), text
    for text in ["TwitterTracker", "#newtwitter"]:
        assert not f.matches(ev(text)), text
    assert flt(track="Twitter's").matches(ev("I like Twitter's new design"))
    assert not flt(track="Twitter's").matches(ev("@Twitter's office"))
    assert not flt(track="hello.").matches(ev("hello there"))
    assert flt(track="hello").matches(ev("my brother says hello."))


def test_track_utf8_exact_and_url_words():
    assert not flt(track="touche").matches(ev("touché"))
    assert flt(track="touché").matches(ev("Touché!"))
    assert flt(track="example com").matches(ev("see https://www.example.com/x"))


# --- follow -----------------------------------------------------------------------------
def test_follow_ids_are_authors_logins_are_authors_or_mentions():
    f = flt(follow="7,bob")
    assert f.matches(ev("anything", uid=7))
    assert not f.matches(ev("anything", uid=8, login="carol"))
    assert f.matches(ev("hi", uid=9, login="Bob"))
    assert f.matches(ev("hello @BOB!", uid=9, login="carol"))
    assert not f.matches(ev("hello bob", uid=9, login="carol"))
    assert flt(follow="@bob").matches(ev("x", uid=3, login="bob"))


# --- locations --------------------------------------------------------------------------
def test_locations_boxes_are_lon_lat_and_status_location_is_lat_lon():
    sf = "-122.75,36.8,-121.75,37.8"
    f = flt(locations=sf)
    assert f.matches(ev("x", location="37.7749,-122.4194"))  # lat,lon of San Francisco
    assert not f.matches(ev("x", location="-122.4194,37.7749"))
    assert not f.matches(ev("x"))
    assert flt(location=sf).matches(ev("x", location="37,-122"))  # singular, taken too
    two = flt(locations="0,0,1,1,10,10,11,11")
    assert two.matches(ev("x", location="10.5,10.5")) and two.matches(ev("x", location="0,0"))
    assert not two.matches(ev("x", location="5,5"))


def test_kinds_are_ored():
    f = flt(track="redis", follow="42", locations="0,0,1,1")
    assert f.matches(ev("I like Redis"))
    assert f.matches(ev("nothing", uid=42))
    assert f.matches(ev("nothing", location="0.5,0.5"))
    assert not f.matches(ev("nothing", uid=1, location="5,5"))


# --- sample -----------------------------------------------------------------------------
def test_sample_is_seeded_by_identifier_and_stable():
    a = residues("alice-client", 10)
    assert len(a) == 10 and a == residues("alice-client", 10)
    assert a != residues("bob-client", 10)
    assert residues("x", 100) == frozenset(range(100))
    f = parse_filter({"percent": "25"}, "alice-client", sample=True)
    kept = [sid for sid in range(1, 1001) if f.matches(ev(sid=sid))]
    assert len(kept) == 250
    assert all(sid % 100 in residues("alice-client", 25) for sid in kept)
    assert parse_filter({}, "x", sample=True).sample == residues("x", 10)  # the default


# --- validation -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params, status, param",
    [
        ({}, 406, "track/follow/locations"),
        ({"track": ""}, 406, "track"),
        ({"track": "a,,b"}, 406, "track"),
        ({"track": "x" * 61}, 406, "track"),
        ({"track": ",".join(f"w{i}" for i in range(401))}, 413, "track"),
        ({"follow": "12,abc-def"}, 406, "follow"),
        ({"follow": "0"}, 406, "follow"),
        ({"follow": ",".join(str(i) for i in range(1, 5002))}, 413, "follow"),
        ({"locations": "1,2,3"}, 406, "locations"),
        ({"locations": "a,b,c,d"}, 406, "locations"),
        ({"locations": "10,0,5,1"}, 406, "locations"),
        ({"locations": "0,0,200,1"}, 406, "locations"),
        ({"location": "0,0,1,nan"}, 406, "location"),
        ({"locations": ",".join(["0,0,1,1"] * 26)}, 413, "locations"),
    ],
)
def test_bad_params(params, status, param):
    with pytest.raises(ParamError) as info:
        flt(**params)
    assert info.value.status == status
    assert info.value.param == param and param in info.value.message


def test_limits_exactly_at_the_bound_are_fine():
    flt(
        track=",".join(f"w{i}" for i in range(400)),
        follow=",".join(str(i) for i in range(1, 5001)),
        locations=",".join(["0,0,1,1"] * 25),
    )
    flt(track="x" * limits.TRACK_PHRASE_MAX_BYTES)


def test_percent_and_count_validation():
    for bad in ("0", "101", "x"):
        with pytest.raises(ParamError) as info:
            parse_filter({"percent": bad}, "x", sample=True)
        assert info.value.status == 406
    assert parse_count("-150000") == -150000 and parse_count(None) == 0
    for bad in ("150001", "abc"):
        with pytest.raises(ParamError) as info:
            parse_count(bad)
        assert info.value.status == 416


def test_words():
    tokens, mentions, tags = words("Hello, @Bob! #Redis rocks (really).")
    assert {"hello", "bob", "redis", "rocks", "really"} <= tokens
    assert mentions == {"bob"} and tags == {"redis"}


# --- the index agrees with the reference --------------------------------------------------
def test_index_matches_reference_on_random_filters_and_events():
    rnd = random.Random(5)
    vocab = [
        "redis",
        "stream",
        "cats",
        "dogs",
        "api",
        "twitter",
        "hello",
        "world",
        "#redis",
        "@alice",
        "@bob",
        "http://example.com/x",
        "rocks!",
        "(cats)",
    ]
    logins = ["alice", "bob", "carol", "dave"]
    filters = []
    for i in range(300):
        kind = rnd.random()
        if kind < 0.2:
            f = parse_filter({"percent": str(rnd.randint(1, 100))}, f"c{i}", sample=True)
        else:
            params = {}
            if rnd.random() < 0.6:
                params["track"] = ",".join(
                    " ".join(rnd.sample(vocab[:9], rnd.randint(1, 2)))
                    for _ in range(rnd.randint(1, 3))
                )
            if rnd.random() < 0.4:
                params["follow"] = ",".join(rnd.sample(["1", "2", "3"] + logins, 2))
            if rnd.random() < 0.3 or not params:
                params["locations"] = "0,0,10,10"
            f = parse_filter(params, f"c{i}", sample=False)
            if rnd.random() < 0.1:
                f.tags = frozenset({"redis"})
            if rnd.random() < 0.1:
                f.authors = frozenset({2, 4})
        if rnd.random() < 0.3:  # Mastodon's public:local/remote(:media) and hashtag:local
            f.origin = rnd.choice([None, "local", "remote"])
            f.only_media = rnd.random() < 0.5
        filters.append(f)
    index = FilterIndex()
    subs = [object() for _ in filters]
    for sub, f in zip(subs, filters):
        index.add(sub, f)
    for sub in subs[::7]:  # removal keeps it consistent
        index.remove(sub)
    live = {sub: f for i, (sub, f) in enumerate(zip(subs, filters)) if i % 7}
    for sid in range(1, 400):
        uid = rnd.randint(1, 4)
        e = ev(
            " ".join(rnd.sample(vocab, rnd.randint(0, 5))),
            sid=sid,
            uid=uid,
            login=logins[uid - 1],
            location=rnd.choice([None, "5,5", "20,20"]),
        )
        if rnd.random() < 0.5:  # a status of another server
            e.status["uri"] = f"https://peer.example/statuses/{sid}"
        if rnd.random() < 0.5:
            e.status["media"] = '[{"id":1,"url":"https://peer.example/1.png"}]'
        assert index.match(e) == {s for s, f in live.items() if f.matches(e)}
    assert len(index) == len(live)


def test_origin_and_media_are_the_rest_public_timeline_s_rules():
    """public:local / public:remote / *:media keep what the REST public
    timeline's local / remote / only_media keep (redpoll.reading.pages), a
    deletion as its post; user:notification keeps no status."""
    from redpoll.reading import pages

    here, there = ev(sid=1), ev(sid=2)
    there.status["uri"] = "https://peer.example/statuses/2"
    shown = ev(sid=3)
    shown.status["media"] = '[{"id":1,"url":"/m/1.png"}]'
    gone = ev(sid=3, kind="delete")
    gone.status.update(shown.status, deleted=True)
    public = dict(sample=frozenset(range(100)), boosts=False)
    for e in (here, there, shown, gone):
        record = e.statuses()[0]
        for origin in ("local", "remote"):
            assert Filter(origin=origin, **public).matches(e) == pages.of_origin_rule(origin)(
                record
            )
            assert Filter(origin=origin, only_media=True, **public).matches(e) == (
                pages.of_origin_rule(origin)(record) and pages.has_media(record)
            )
        assert Filter(only_media=True, **public).matches(e) == pages.has_media(record)
        assert not Filter(owner=7, viewer=7, authors=frozenset({7}), statuses=False).matches(e)
    assert Filter(origin="local", **public).matches(gone)


def test_empty_filter_flag():
    assert Filter().empty
    assert not flt(track="x").empty


def test_filters_share_their_empty_sets_and_the_full_sample():
    """Memory per connection: an empty set field is one shared
    object, not a 216-byte frozenset per stream; equality is unchanged."""
    from redpoll.stream.filters import ALL_RESIDUES, EMPTY, Filter, parse_filter

    a = parse_filter({"track": "redis"}, "a", sample=False)
    b = parse_filter({"follow": "12"}, "b", sample=False)
    for name in ("logins", "tags", "authors", "followed", "hidden"):
        assert getattr(a, name) is EMPTY and getattr(b, name) is EMPTY
    assert a.user_ids is EMPTY and b.user_ids == frozenset({12})
    assert Filter(sample=frozenset(range(100))).sample is ALL_RESIDUES
    assert Filter(tags=frozenset()) == Filter()
