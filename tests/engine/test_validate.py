"""Input validation: the pure checks in redpoll.core.validate, and the promise of
redpoll.core.errors that an operation which raises has written nothing, proven by
comparing every key and value on every server node before and after."""

from __future__ import annotations

import math

import pytest
import redis

from redpoll.core import errors, limits, validate
from redpoll.storage.server import EmbeddedCluster

BAD_IDS = [
    "abc",
    "12x",
    "",
    " 7",
    "7 ",
    "+7",
    "-1",
    "１２",
    "1e3",
    -1,
    0,
    2**60,
    limits.MAX_ID + 1,
    True,
    False,
    None,
    1.0,
    2.5,
    float("nan"),
    [1],
    b"\xff",
]


# --- the pure checks ---------------------------------------------------------------
class TestText:
    def test_accepts_str_and_utf8_bytes(self):
        assert validate.text("héllo", "f", 10) == "héllo"
        assert validate.text("héllo".encode(), "f", 10) == "héllo"
        assert validate.text(bytearray(b"ok"), "f", 10) == "ok"

    def test_counts_characters_not_bytes(self):
        assert validate.text("é" * 10, "f", 10) == "é" * 10
        with pytest.raises(errors.ValidationError):
            validate.text("é" * 11, "f", 10)

    @pytest.mark.parametrize(
        "bad",
        [
            "",
            "   ",
            "\n\t ",
            b"",
            None,
            5,
            ["a"],
            b"\xff\xfe",
            b"\xc3",
            "a\ud800b",
            "\udfff",
            "a\x00b",
        ],
    )
    def test_rejects(self, bad):
        with pytest.raises(errors.ValidationError) as info:
            validate.text(bad, "field", 100)
        assert info.value.field == "field"
        assert info.value.status == 422

    def test_allow_empty(self):
        assert validate.text("", "f", 5, allow_empty=True) == ""
        with pytest.raises(errors.ValidationError):
            validate.text("a\x00", "f", 5, allow_empty=True)

    def test_status_text_limit(self):
        exact = "x" * limits.STATUS_MAX_CHARS
        assert validate.status_text(exact) == exact
        with pytest.raises(errors.ValidationError) as info:
            validate.status_text(exact + "x")
        assert info.value.field == "text"

    def test_a_link_counts_23_and_a_remote_mention_its_username(self):
        link = "https://example.com/" + "p" * 200
        assert validate.status_length(link) == limits.STATUS_URL_CHARS
        assert validate.status_length(f"see {link}.") == 4 + limits.STATUS_URL_CHARS + 1
        assert validate.status_length("http://a.b") == limits.STATUS_URL_CHARS  # short ones too
        assert validate.status_length("@bob@far.example hi") == len("@bob hi")
        assert validate.status_length("ann@example.com") == len("ann@example.com")  # an address
        assert validate.status_length("nohttps://x.y") == len("nohttps://x.y")  # inside a word
        body = "x" * (limits.STATUS_MAX_CHARS - limits.STATUS_URL_CHARS - 1) + " " + link
        assert len(body) > limits.STATUS_MAX_CHARS
        assert validate.status_body(body, "text") == body
        with pytest.raises(errors.ValidationError):
            validate.status_body("x" + body, "text")
        with pytest.raises(errors.ValidationError):  # with its content warning
            validate.status_body(body, "text", spoiler="cw")
        with pytest.raises(errors.ValidationError):  # the raw bound holds whatever the count
            validate.status_body("https://x.y/" + "p" * limits.STATUS_TEXT_MAX_CHARS, "text")


class TestLogin:
    @pytest.mark.parametrize("good", ["a", "Alice", "bob_2", "_", "x" * limits.LOGIN_MAX_CHARS])
    def test_accepts(self, good):
        assert validate.login(good) == good

    @pytest.mark.parametrize(
        "bad",
        [
            "",
            " ",
            "has space",
            "ali-ce",
            "ålice",
            "alice\n",
            "a.b",
            "x" * (limits.LOGIN_MAX_CHARS + 1),
            None,
            7,
            "a\x00",
        ],
    )
    def test_rejects(self, bad):
        with pytest.raises(errors.ValidationError) as info:
            validate.login(bad)
        assert info.value.field == "login"


class TestIds:
    @pytest.mark.parametrize(
        "good, expected",
        [
            (1, 1),
            ("1", 1),
            ("42", 42),
            (b"42", 42),
            (limits.MAX_ID, limits.MAX_ID),
            (str(limits.MAX_ID), limits.MAX_ID),
        ],
    )
    def test_accepts(self, good, expected):
        assert validate.an_id(good) == expected

    @pytest.mark.parametrize("bad", BAD_IDS)
    def test_rejects(self, bad):
        with pytest.raises(errors.ValidationError) as info:
            validate.an_id(bad, "user_id")
        assert info.value.field == "user_id"

    def test_optional_id(self):
        assert validate.optional_id(None, "max_id") is None
        assert validate.optional_id("", "max_id") is None
        assert validate.optional_id("9", "max_id") == 9
        with pytest.raises(errors.ValidationError):
            validate.optional_id(0, "max_id")


class TestPageLimit:
    @pytest.mark.parametrize(
        "given, expected",
        [
            (None, limits.PAGE_DEFAULT),
            ("", limits.PAGE_DEFAULT),
            (1, 1),
            ("7", 7),
            (limits.PAGE_MAX, limits.PAGE_MAX),
            (limits.PAGE_MAX + 1, limits.PAGE_MAX),
            (10**9, limits.PAGE_MAX),
        ],
    )
    def test_accepts(self, given, expected):
        assert validate.page_limit(given) == expected

    @pytest.mark.parametrize(
        "bad", [0, -1, "0", "abc", "1.5", 2.5, True, float("inf"), float("nan"), [5], "9" * 5000]
    )
    def test_rejects(self, bad):
        with pytest.raises(errors.ValidationError) as info:
            validate.page_limit(bad)
        assert info.value.field == "limit"


class TestLocation:
    @pytest.mark.parametrize(
        "given, expected",
        [
            ("52.52,13.405", "52.52,13.405"),
            (" 52.5 , 13.4 ", "52.5,13.4"),
            ("52.520000,013.400", "52.52,13.4"),
            ("-90,-180", "-90,-180"),
            ("90,180", "90,180"),
            ("0,0", "0,0"),
            ("-0,-0.0", "0,0"),
            # GPS precision survives: six decimals is about 10 cm
            ("52.520008,13.404954", "52.520008,13.404954"),
            ("-33.868820,151.209296", "-33.86882,151.209296"),
            ("0.0000001,1", "0.0000001,1"),
        ],
    )
    def test_normalises(self, given, expected):
        assert validate.location(given) == expected

    @pytest.mark.parametrize(
        "bad",
        [
            "",
            "abc",
            "1",
            "1,2,3",
            "1;2",
            "91,0",
            "-90.5,0",
            "0,181",
            "0,-180.01",
            "nan,0",
            "0,inf",
            "1,",
            ",1",
        ],
    )
    def test_rejects(self, bad):
        with pytest.raises(errors.ValidationError) as info:
            validate.location(bad)
        assert info.value.field == "location"

    def test_round_trip_is_stable(self):
        once = validate.location("12.3456789,-98.7654321")
        assert validate.location(once) == once
        lat, lon = (float(p) for p in once.split(","))
        assert math.isclose(lat, 12.3456789, abs_tol=1e-7)
        assert math.isclose(lon, -98.7654321, abs_tol=1e-7)


class TestExtraFields:
    def test_empty(self):
        assert validate.extra_fields(None) == {}
        assert validate.extra_fields({}) == {}

    def test_cleans(self):
        clean = validate.extra_fields({"location": "1.5, 2.5", "mood": "fine", "n": 3, "f": 1.5})
        assert clean == {"location": "1.5,2.5", "mood": "fine", "n": "3", "f": "1.5"}

    def test_bounds_are_inclusive(self):
        extra = {f"f{i}": "v" for i in range(limits.EXTRA_MAX_FIELDS)}
        assert len(validate.extra_fields(extra)) == limits.EXTRA_MAX_FIELDS
        name = "a" * limits.EXTRA_NAME_MAX
        value = "é" * (limits.EXTRA_VALUE_MAX_BYTES // 2)
        assert validate.extra_fields({name: value}) == {name: value}

    @pytest.mark.parametrize(
        "bad",
        [
            "not a mapping",
            ["a", "b"],
            {f"f{i}": "v" for i in range(limits.EXTRA_MAX_FIELDS + 1)},
            {"Loc": "x"},
            {"1a": "x"},
            {"a-b": "x"},
            {"": "x"},
            {"a b": "x"},
            {"é": "x"},
            {"a" * (limits.EXTRA_NAME_MAX + 1): "x"},
            {5: "x"},
            {"ok\n": "x"},
            *({name: "x"} for name in sorted(validate.RESERVED_FIELDS)),
            {"mood": "x" * (limits.EXTRA_VALUE_MAX_BYTES + 1)},
            {"mood": "é" * (limits.EXTRA_VALUE_MAX_BYTES // 2 + 1)},  # few chars, too many bytes
            {"mood": ""},
            {"mood": "  "},
            {"mood": None},
            {"mood": True},
            {"mood": ["x"]},
            {"mood": b"\xff"},
            {"mood": "\ud800"},
            {"mood": "a\x00"},
            {"location": "91,0"},
            {"location": "here"},
            {"location": 5},
        ],
    )
    def test_rejects(self, bad):
        with pytest.raises(errors.ValidationError) as info:
            validate.extra_fields(bad)
        assert info.value.field.startswith("extra") or info.value.field == "location"

    def test_reserved_names_cover_status_fields(self):
        for name in ("id", "text", "at", "uid", "login", "deleted"):
            assert name in validate.RESERVED_FIELDS


# --- nothing written on error ------------------------------------------------------
def snapshot(handle) -> dict:
    """Every key on every node with its type and serialised value."""
    nodes = handle.nodes if isinstance(handle, EmbeddedCluster) else [handle]
    state = {}
    for node in nodes:
        client = redis.Redis(port=node.port)
        try:
            found = list(client.scan_iter(count=1000))
            pipe = client.pipeline(transaction=False)
            for key in found:
                pipe.type(key)
                pipe.dump(key)
                pipe.pttl(key)
            values = pipe.execute()
            for i, key in enumerate(found):
                kind, dumped, pttl = values[3 * i : 3 * i + 3]
                if kind == b"hash":
                    # a user record's 'rev' counts changes, and a call undone
                    # on failure (a follow of an unknown user) still moves it
                    # (users.current): the record's content is what must not
                    # change
                    fields = client.hgetall(key)
                    fields.pop(b"rev", None)
                    dumped = sorted(fields.items())
                elif kind == b"stream":
                    # a journal held and released at once (a refused follow
                    # holds its notification's journal in the round trip of
                    # its checks) moves the stream's id sequence, not its
                    # content: the entries and what each group has pending
                    dumped = (
                        client.xrange(key),
                        [(g["name"], g["pending"]) for g in client.xinfo_groups(key)],
                    )
                # a key's remaining time drifts by itself: only whether it has one counts
                state[key] = (kind, dumped, pttl > 0)
        finally:
            client.close()
    return state


@pytest.fixture
async def world(rp, server):
    """A small populated world; returns (rp, handle, ids)."""
    alice = await rp.accounts.sign_up("alice", password="pw-alice", email="a@example.org")
    bob = await rp.accounts.sign_up("bob")
    await rp.relations.follow(bob.id, alice.id)
    status = await rp.statuses.post(alice.id, "hello", {"location": "1,2"})
    lst = await rp.lists.create(bob.id, "friends")
    await rp.lists.add(bob.id, lst.id, alice.id)
    await rp.drain()
    return rp, server[2], {"alice": alice.id, "bob": bob.id, "sid": status.id, "lid": lst.id}


async def assert_writes_nothing(handle, name, call, error=errors.RedpollError):
    before = snapshot(handle)
    try:
        result = await call()
    except Exception as exc:  # noqa: BLE001 - the type is what is checked
        raised = exc
    else:
        pytest.fail(f"{name}: raised nothing, returned {result!r}")
    assert isinstance(raised, error), f"{name}: expected {error.__name__}, got {raised!r}"
    after = snapshot(handle)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"{name} raised {raised!r} but changed {changed}"
    return raised


def bad_calls(rp, ids):
    a, b, sid, lid = ids["alice"], ids["bob"], ids["sid"], ids["lid"]
    calls = {
        "post empty": lambda: rp.statuses.post(a, ""),
        "post whitespace": lambda: rp.statuses.post(a, " \n\t "),
        "post too long": lambda: rp.statuses.post(a, "x" * (limits.STATUS_MAX_CHARS + 1)),
        "post bad utf8": lambda: rp.statuses.post(a, b"caf\xe9"),
        "post lone surrogate": lambda: rp.statuses.post(a, "hi \ud83d"),
        "post NUL": lambda: rp.statuses.post(a, "a\x00b"),
        "post None text": lambda: rp.statuses.post(a, None),
        "post int text": lambda: rp.statuses.post(a, 42),
        "post too many extras": lambda: rp.statuses.post(
            a, "hi", {f"f{i}": "v" for i in range(limits.EXTRA_MAX_FIELDS + 1)}
        ),
        "post bad extra name": lambda: rp.statuses.post(a, "hi", {"Bad-Name": "v"}),
        "post long extra name": lambda: rp.statuses.post(
            a, "hi", {"a" * (limits.EXTRA_NAME_MAX + 1): "v"}
        ),
        "post extra not mapping": lambda: rp.statuses.post(a, "hi", [("mood", "ok")]),
        "post oversized extra": lambda: rp.statuses.post(
            a, "hi", {"mood": "x" * (limits.EXTRA_VALUE_MAX_BYTES + 1)}
        ),
        "post oversized extra bytes": lambda: rp.statuses.post(a, "hi", {"mood": "€" * 100}),
        "post empty extra": lambda: rp.statuses.post(a, "hi", {"mood": ""}),
        "post bad location": lambda: rp.statuses.post(a, "hi", {"location": "north"}),
        "post location out of range": lambda: rp.statuses.post(a, "hi", {"location": "0,200"}),
        "post location nan": lambda: rp.statuses.post(a, "hi", {"location": "nan,1"}),
        "post location three parts": lambda: rp.statuses.post(a, "hi", {"location": "1,2,3"}),
        "sign_up space": lambda: rp.accounts.sign_up("has space"),
        "sign_up too long": lambda: rp.accounts.sign_up("x" * (limits.LOGIN_MAX_CHARS + 1)),
        "sign_up empty": lambda: rp.accounts.sign_up(""),
        "sign_up punctuation": lambda: rp.accounts.sign_up("carol!"),
        "sign_up None": lambda: rp.accounts.sign_up(None),
        "sign_up long display name": lambda: rp.accounts.sign_up(
            "carol", display_name="d" * (limits.DISPLAY_NAME_MAX_CHARS + 1)
        ),
        "sign_up long bio": lambda: rp.accounts.sign_up(
            "carol", bio="b" * (limits.BIO_MAX_CHARS + 1)
        ),
        "sign_up NUL password": lambda: rp.accounts.sign_up("carol", password="pw\x00"),
        "update long display name": lambda: rp.accounts.update_profile(
            a, display_name="d" * (limits.DISPLAY_NAME_MAX_CHARS + 1)
        ),
        "update bad bio": lambda: rp.accounts.update_profile(a, bio=b"\xff"),
        "update unknown user": lambda: rp.accounts.update_profile(999_999, bio="hi"),
        "home limit 0": lambda: rp.timelines.home(a, limit=0),
        "home limit -1": lambda: rp.timelines.home(a, limit=-1),
        "home limit text": lambda: rp.timelines.home(a, limit="lots"),
        "home limit inf": lambda: rp.timelines.home(a, limit=float("inf")),
        "profile limit 0": lambda: rp.timelines.profile(a, limit=0),
        "list limit -5": lambda: rp.timelines.of_list(b, lid, limit=-5),
        "list title empty": lambda: rp.lists.create(b, " "),
        "list title long": lambda: rp.lists.create(b, "t" * (limits.LIST_TITLE_MAX_CHARS + 1)),
        "follow self": lambda: rp.relations.follow(a, a),
        "follow unknown": lambda: rp.relations.follow(b, 999_999),
        "delete by other": lambda: rp.statuses.delete(sid, b),
        "delete unknown": lambda: rp.statuses.delete(999_999, a),
        "post unknown user": lambda: rp.statuses.post(999_999, "hello"),
        "get_statuses bad id": lambda: rp.statuses.get_statuses([sid, "abc"]),
        "get_users bad id": lambda: rp.accounts.get_users([a, "abc"]),
    }
    for bad in BAD_IDS:
        calls[f"post author {bad!r}"] = lambda bad=bad: rp.statuses.post(bad, "hi")
        calls[f"get_user {bad!r}"] = lambda bad=bad: rp.accounts.get_user(bad)
        calls[f"get_status {bad!r}"] = lambda bad=bad: rp.statuses.get_status(bad)
        calls[f"delete sid {bad!r}"] = lambda bad=bad: rp.statuses.delete(bad, a)
        calls[f"delete by {bad!r}"] = lambda bad=bad: rp.statuses.delete(sid, bad)
        calls[f"follow {bad!r}"] = lambda bad=bad: rp.relations.follow(b, bad)
        calls[f"unfollow {bad!r}"] = lambda bad=bad: rp.relations.unfollow(bad, a)
        calls[f"update {bad!r}"] = lambda bad=bad: rp.accounts.update_profile(bad, bio="x")
        calls[f"home {bad!r}"] = lambda bad=bad: rp.timelines.home(bad)
        calls[f"profile {bad!r}"] = lambda bad=bad: rp.timelines.profile(bad)
        calls[f"list owner {bad!r}"] = lambda bad=bad: rp.timelines.of_list(bad, lid)
        calls[f"list id {bad!r}"] = lambda bad=bad: rp.timelines.of_list(b, bad)
        calls[f"add member {bad!r}"] = lambda bad=bad: rp.lists.add(b, lid, bad)
        if bad not in (None, ""):  # both mean "no cursor" for the paging arguments
            calls[f"home max_id {bad!r}"] = lambda bad=bad: rp.timelines.home(a, max_id=bad)
            calls[f"home since_id {bad!r}"] = lambda bad=bad: rp.timelines.home(a, since_id=bad)
            calls[f"profile min_id {bad!r}"] = lambda bad=bad: rp.timelines.profile(a, min_id=bad)
            calls[f"list max_id {bad!r}"] = lambda bad=bad: rp.timelines.of_list(b, lid, max_id=bad)
    return calls


EXPECTED = {
    "update unknown user": errors.UserNotFound,
    "follow unknown": errors.UserNotFound,
    "delete by other": errors.Forbidden,
    "delete unknown": errors.StatusNotFound,
    "post unknown user": errors.UserNotFound,
}


async def test_every_bad_input_raises_a_typed_error_and_writes_nothing(world):
    rp, handle, ids = world
    calls = bad_calls(rp, ids)
    assert len(calls) > 250
    for name, call in calls.items():
        expected = EXPECTED.get(name, errors.ValidationError)
        await assert_writes_nothing(handle, name, call, expected)


async def test_the_world_still_works_afterwards(world):
    """The bad calls left nothing half-done that breaks the good ones."""
    rp, handle, ids = world
    for call in bad_calls(rp, ids).values():
        try:
            await call()
        except errors.RedpollError:
            pass
    status = await rp.statuses.post(ids["alice"], "still here")
    assert [s.id for s in await rp.timelines.home(ids["bob"])] == [status.id, ids["sid"]]
    alice = await rp.accounts.get_user(ids["alice"])
    assert (alice.posts, alice.followers, alice.following) == (2, 1, 0)


async def test_validation_error_names_the_field(world):
    rp, _, ids = world
    with pytest.raises(errors.ValidationError) as info:
        await rp.statuses.post(ids["alice"], "hi", {"location": "x"})
    assert info.value.field == "location"
    with pytest.raises(errors.ValidationError) as info:
        await rp.timelines.home(ids["alice"], max_id="abc")
    assert info.value.field == "max_id"
    with pytest.raises(errors.ValidationError) as info:
        await rp.statuses.post("nope", "hi")
    assert info.value.field == "author_id"
