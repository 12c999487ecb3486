"""Full-text search of statuses (redpoll.search.index) through Mastodon.py
2.3.3 against a real ``redpoll serve``, on one server and on the cluster:
Mastodon 4.2's scopes (the library, the public statuses of indexable
accounts), its operators, paging newest first, and an index that follows
edits, deletes and the ``indexable`` flag. The index is written by jobs:
each test waits for what it asks (a deadline, never a sleep to a time)."""

from __future__ import annotations

import io
import time

import pytest
from support.mastodon import new_app, register, serve_env  # noqa: F401
from support.media import png, ready
from support.names import unique

from redpoll.api.process import ServeProcess

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def api(server):
    with ServeProcess(serve_env(server)) as srv:
        yield srv
        assert srv.process.poll() is None, srv.logs()[-3000:]


def found(m, q: str, **kw) -> list[str]:
    return [s["id"] for s in m.search_v2(q, result_type="statuses", **kw)["statuses"]]


def until(what: str, check, seconds: float = 20):
    """``check()``'s value once it is truthy (the index is written by jobs)."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_public_posts_of_others_newest_first_with_paging(api):
    app = new_app(api)
    author, reader = register(api, app, unique("au")), register(api, app, unique("rd"))
    assert author.me()["indexable"] is True  # a new account's default
    word = unique("kiwi")
    ids = [author.status_post(f"a {word} number {i}")["id"] for i in range(5)]
    newest_first = ids[::-1]
    until("all five indexed", lambda: found(reader, word) == newest_first)
    assert found(reader, word, limit=2) == newest_first[:2]
    assert found(reader, word, limit=2, offset=2) == newest_first[2:4]
    assert found(reader, word, max_id=ids[3]) == newest_first[2:]
    assert found(reader, word, min_id=ids[2]) == newest_first[:2]
    assert found(reader, f"{word} number", account_id=author.me()["id"]) == newest_first
    # no viewer: no statuses, as Mastodon
    anon = type(reader)(api_base_url=api.url)
    assert anon.search_v2(word, resolve=False)["statuses"] == []
    assert found(reader, unique("absent")) == []


def test_operators(api):
    app = new_app(api)
    me, other = register(api, app, unique("me")), register(api, app, unique("ot"))
    w = unique("fig")
    root = other.status_post(f"{w} root words here", language="de")
    reply = me.status_post(f"{w} a reply", in_reply_to_id=root["id"], language="en")
    cw = me.status_post(f"{w} hidden text", spoiler_text="careful", language="en")
    poll = me.status_post(f"{w} vote please", poll=me.make_poll(["yes", "no"], 3600))
    link = other.status_post(f"{w} see https://example.org/page")
    media = me.media_post(io.BytesIO(png()), mime_type="image/png", description="a blue square")
    ready(me, media)
    pic = me.status_post(f"{w} a picture", media_ids=[media["id"]])
    everything = [pic, link, poll, cw, reply, root]
    until("all indexed", lambda: len(found(me, w)) == len(everything))
    ids = lambda *ss: [s["id"] for s in ss]  # noqa: E731
    assert found(me, w) == ids(*everything)
    assert found(me, f"{w} from:{other.me()['username']}") == ids(link, root)
    assert found(me, f"{w} from:@{other.me()['username']}") == ids(link, root)
    assert found(me, f"{w} from:me") == ids(pic, poll, cw, reply)
    assert found(me, f"{w} -from:me") == ids(link, root)
    assert found(me, f"{w} has:poll") == ids(poll)
    assert found(me, f"{w} has:media") == ids(pic)
    assert found(me, f"{w} has:image") == ids(pic)
    assert found(me, f"{w} -has:media") == ids(link, poll, cw, reply, root)
    assert found(me, f"{w} has:link") == ids(link)
    assert found(me, f"{w} is:reply") == ids(reply)
    assert found(me, f"{w} is:sensitive") == ids(cw)
    assert found(me, f"{w} language:de") == ids(root)
    assert found(me, f"{w} language:en-GB") == ids(cw, reply)
    assert found(me, "blue square") == ids(pic)  # an attachment's description is searched
    assert found(me, f'"{w} a reply"') == ids(reply)
    assert found(me, f'"reply a {w}"') == []
    assert found(me, f'{w} -"a reply"') == ids(pic, link, poll, cw, root)
    assert found(me, f"{w} -picture -vote") == ids(link, cw, reply, root)
    assert found(me, f"{w} yes") == ids(poll)  # a poll's options too
    assert found(me, f"{w} careful") == ids(cw)  # and the content warning
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert found(me, f"{w} during:{today}") == ids(*everything)
    assert found(me, f"{w} before:{today}") == []
    assert found(me, f"{w} after:2000-01-01") == ids(*everything)
    assert found(me, f"{w} after:{today}") == []
    assert found(me, f"{w} before:yesterday") == []  # not a day: nothing, as a parse error
    # in:library: what the viewer wrote or touched; in:public: indexable public posts
    # (root: replied to)
    assert found(me, f"{w} in:library") == ids(pic, poll, cw, reply, root)
    other_reader = register(api, app, unique("third"))
    assert found(other_reader, f"{w} in:library") == []
    assert found(other_reader, f"{w} in:public") == ids(*everything)
    other_reader.status_favourite(root["id"])
    assert found(other_reader, f"{w} in:library") == ids(root)
    # operators alone read the from: author's statuses, or the library
    assert found(me, f"from:{other.me()['username']} has:link") == ids(link)
    assert found(me, "in:library is:sensitive") == ids(cw)


def test_indexable_off_then_only_the_library_finds(api):
    app = new_app(api)
    author, reader = register(api, app, unique("ix")), register(api, app, unique("rx"))
    word = unique("plum")
    a = author.status_post(f"{word} first")["id"]
    b = author.status_post(f"{word} second")["id"]
    until("indexed", lambda: found(reader, word) == [b, a])
    assert author.account_update_credentials(indexable=False)["indexable"] is False
    assert author.me()["indexable"] is False
    assert author.account(author.me()["id"])["indexable"] is False
    # every hit is checked now: gone at once, and the reindex job moves them
    assert found(reader, word) == []
    assert found(author, word) == [b, a]  # one's own, always
    reader.status_bookmark(a)
    assert found(reader, word) == [a]  # what one interacted with
    reader.status_unbookmark(a)
    reader.status_reblog(b)
    until("the boosted found", lambda: found(reader, word) == [b])
    author.account_update_credentials(indexable=True)
    until("public again", lambda: found(reader, word) == [b, a])


def test_edit_delete_and_visibility_take_hits_away(api):
    app = new_app(api)
    author, reader = register(api, app, unique("ed")), register(api, app, unique("re"))
    old, new, gone = unique("pear"), unique("quince"), unique("lime")
    s = author.status_post(f"{old} to be edited")
    d = author.status_post(f"{gone} to be deleted")
    until("indexed", lambda: found(reader, old) and found(reader, gone))
    author.status_update(s["id"], f"{new} after the edit")
    assert found(reader, old) == []  # checked against the status as it is now
    until("the edit indexed", lambda: found(reader, new) == [s["id"]])
    author.status_delete(d["id"])
    assert found(reader, gone) == []
    assert found(author, gone) == []
    # a private post: never for one who cannot see it, even a follower who
    # did not touch it; found by its author and the mentioned
    secret = unique("date")
    reader.account_follow(author.me()["id"])
    stranger = register(api, app, unique("st"))
    p = author.status_post(f"{secret} @{stranger.me()['username']} private", visibility="private")
    until("the private one indexed", lambda: found(author, secret) == [p["id"]])
    until("the mentioned finds it", lambda: found(stranger, secret) == [p["id"]])
    assert found(reader, secret) == []
    u = author.status_post(f"{secret} unlisted", visibility="unlisted")
    until("the unlisted one indexed", lambda: found(author, secret) == [u["id"], p["id"]])
    assert found(reader, secret) == []  # unlisted: not in the public index


def test_blocks_and_mutes_hide_hits(api):
    app = new_app(api)
    author = register(api, app, unique("bl"))
    blocked, blocker, muter = (register(api, app, unique(n)) for n in ("bd", "br", "mu"))
    word = unique("grape")
    s = author.status_post(f"{word} for all")["id"]
    until("indexed", lambda: found(muter, word) == [s])
    author.account_block(blocked.me()["id"])
    blocker.account_block(author.me()["id"])
    muter.account_mute(author.me()["id"])
    assert found(blocked, word) == []
    assert found(blocker, word) == []
    assert found(muter, word) == []
    muter.account_unmute(author.me()["id"])
    assert found(muter, word) == [s]
