"""Link preview cards (redpoll.cards): statuses posted through Mastodon.py
to a real ``redpoll serve`` (no job workers: the tests drain the queue in
this process, as the remote media tests do) link to pages a real HTTP
server of the test serves (support.federation.Peer, on loopback, counting
its GETs); the cards are read back over the API, their images fetched
from this server."""

from __future__ import annotations

import asyncio
import uuid
from urllib.parse import urlsplit

import httpx
import pytest
from mastodon import Mastodon
from support.federation import Peer
from support.mastodon import LOOSE_LIMITS
from support.media import jpeg
from support.streams import StreamProc

from redpoll import Redpoll
from redpoll.cards import cards
from redpoll.cards import keys as card_keys
from redpoll.core import limits
from redpoll.federation import documents
from redpoll.federation import keys as fed_keys

pytestmark = [pytest.mark.timeout(240), pytest.mark.topology]

PAGE = """<!doctype html><html lang="en-GB"><head>
<title>Fallback title</title>
<meta property="og:title" content="Cats &amp; their &lt;b&gt;ways&lt;/b&gt;">
<meta property="og:description" content="All about   cats,
 in one page.">
<meta property="og:site_name" content="Cat News">
<meta property="og:image" content="/i/cat.jpg">
<meta property="og:image:alt" content="a red cat">
<meta property="article:published_time" content="2026-11-30T10:00:00Z">
<meta name="author" content="Ann Author">
</head><body><p>text</p></body></html>"""


@pytest.fixture(scope="module")
def media_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="module")
def serve(server, tmp_path_factory, media_dir):
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("serve"),
        REDPOLL_MEDIA_DIR=str(media_dir),
        REDPOLL_FEDERATION_LOOPBACK="1",
        REDPOLL_RATE_INBOX_HOST="off",
        **LOOSE_LIMITS,
    )
    proc.env["REDPOLL_PUBLIC_URL"] = proc.base
    yield proc.start()
    proc.stop()


@pytest.fixture
def alice(settings, serve) -> Mastodon:
    """An account of the serve's, made after ``settings`` flushed the database."""
    cid, secret = Mastodon.create_app(
        "cards-test", api_base_url=serve.base, scopes=["read", "write"]
    )
    m = Mastodon(client_id=cid, client_secret=secret, api_base_url=serve.base)
    name = "c" + uuid.uuid4().hex[:10]
    m.create_account(
        name,
        "correct horse battery",
        f"{name}@example.com",
        agreement=True,
        scopes=["read", "write"],
    )
    return m


def _engine(settings, serve, media_dir, loopback: bool):
    return Redpoll.open(
        settings.with_(
            public_url=serve.base, federation_loopback=loopback, media_dir=str(media_dir)
        )
    )


@pytest.fixture
async def rp(settings, serve, media_dir):
    engine = await _engine(settings, serve, media_dir, True)
    yield engine
    await engine.close()


@pytest.fixture
def peer():
    one = Peer()
    yield one
    try:
        one.close()
    except OSError:
        pass


def shown(serve, sid) -> dict:
    answer = httpx.get(f"{serve.base}/api/v1/statuses/{sid}")
    assert answer.status_code == 200, answer.text
    return answer.json()


async def post(alice: Mastodon, text: str, **kw) -> dict:
    return await asyncio.to_thread(alice.status_post, text, **kw)


async def test_a_link_gets_its_card_once_per_url_its_image_kept_here(rp, serve, alice, peer):
    peer.files["/p/cats.html"] = (PAGE.encode(), "text/html; charset=utf-8")
    peer.files["/i/cat.jpg"] = (jpeg((800, 600)), "image/jpeg")
    link = f"{peer.base}/p/cats.html"
    first = await post(alice, f"look {link} !")
    second = await post(alice, f"again: {link}")
    assert first["card"] is None  # (made by a job, after the post)
    await rp.drain()

    card = shown(serve, first["id"])["card"]
    assert card["url"] == link and card["type"] == "link"
    assert card["title"] == "Cats & their ways"  # entities unescaped, tags dropped
    assert card["description"] == "All about cats, in one page."
    assert card["provider_name"] == "Cat News" and card["provider_url"] == peer.base
    assert card["author_name"] == "Ann Author" and card["language"] == "en"
    assert card["image_description"] == "a red cat"
    assert card["published_at"].startswith("2026-11-30T10:00:00")
    assert card["html"] == "" and card["embed_url"] == ""
    # the image is this server's copy (through the media proxy), never the origin's
    assert card["image"].startswith(f"{serve.base}/media_proxy/cards/{first['id']}/")
    assert card["width"] == 400 and card["height"] == 300 and card["blurhash"]
    assert "_im" not in card and "_imr" not in card
    image = httpx.get(card["image"])
    assert image.status_code == 302
    assert image.headers["location"].startswith(f"{serve.base}/system/media/")
    image = httpx.get(card["image"], follow_redirects=True)
    assert image.status_code == 200 and image.headers["content-type"].startswith("image/")
    # the same card for the second status; the page and the image fetched once
    again = shown(serve, second["id"])["card"]
    assert again == card | {"image": card["image"].replace(f"/{first['id']}/", f"/{second['id']}/")}
    assert peer.gets.count("/p/cats.html") == 1 and peer.gets.count("/i/cat.jpg") == 1
    # the deprecated endpoint answers the same card
    assert httpx.get(f"{serve.base}/api/v1/statuses/{first['id']}/card").json() == card
    # Mastodon.py reads it back too
    assert (await asyncio.to_thread(alice.status, first["id"]))["card"]["title"] == card["title"]


@pytest.mark.parametrize(
    "what",
    ["no title", "too large", "not html", "missing"],
)
async def test_a_page_that_makes_no_card_leaves_none(rp, serve, alice, peer, what):
    path = "/p/page.html"
    if what == "no title":
        peer.files[path] = (b"<html><head><meta name=x content=y></head></html>", "text/html")
    elif what == "too large":
        big = b"<html><head><title>Big</title></head><body>" + b"x" * limits.CARD_PAGE_MAX_BYTES
        peer.files[path] = (big, "text/html")
    elif what == "not html":
        peer.files[path] = (b"<title>plain</title>", "text/plain")
    kept_before = await rp.media.cache_stats()
    status = await post(alice, f"see {peer.base}{path}")
    await rp.drain()
    assert shown(serve, status["id"])["card"] is None
    assert httpx.get(f"{serve.base}/api/v1/statuses/{status['id']}/card").json() == {}
    assert peer.gets.count(path) == 1
    # kept as no card (not fetched again at once), and nothing else written
    url = f"{peer.base}{path}"
    assert await rp.store.get(card_keys.card(cards.digest(url))) == b"none"
    assert await rp.media.cache_stats() == kept_before
    again = await post(alice, f"and again {url}")
    await rp.drain()
    assert shown(serve, again["id"])["card"] is None and peer.gets.count(path) == 1


async def test_a_direct_status_and_this_servers_links_are_never_fetched(rp, serve, alice, peer):
    peer.files["/p/cats.html"] = (PAGE.encode(), "text/html")
    me = (await asyncio.to_thread(alice.me))["acct"]
    await post(alice, f"@{me} secret {peer.base}/p/cats.html", visibility="direct")
    own = await post(alice, f"mine: {serve.base}/@{me}")
    await rp.drain()
    assert peer.gets == []
    assert shown(serve, own["id"])["card"] is None
    # the deprecated endpoint: {} for no card, 404 for a status not to be seen
    assert httpx.get(f"{serve.base}/api/v1/statuses/{own['id']}/card").json() == {}
    missing = httpx.get(f"{serve.base}/api/v1/statuses/99999999/card")
    assert missing.status_code == 404 and "error" in missing.json()


async def test_an_edit_to_another_link_changes_the_card(rp, serve, alice, peer):
    peer.files["/p/cats.html"] = (PAGE.encode(), "text/html")
    peer.files["/p/dogs.html"] = (b"<html><title>Dogs</title></html>", "text/html")
    status = await post(alice, f"{peer.base}/p/cats.html")
    await rp.drain()
    assert shown(serve, status["id"])["card"]["title"] == "Cats & their ways"
    await asyncio.to_thread(alice.status_update, status["id"], f"no: {peer.base}/p/dogs.html")
    await rp.drain()
    card = shown(serve, status["id"])["card"]
    assert card["title"] == "Dogs" and card["image"] is None
    await asyncio.to_thread(alice.status_update, status["id"], "no link now")
    await rp.drain()
    assert shown(serve, status["id"])["card"] is None


async def test_a_remote_note_gets_the_card_of_its_first_plain_link(rp, serve, peer):
    peer.files["/p/cats.html"] = (PAGE.encode(), "text/html")
    peer.files["/i/cat.jpg"] = (jpeg((300, 200)), "image/jpeg")
    peer.files["/p/tag.html"] = (b"<title>tag</title>", "text/html")
    eve = peer.actor("eve")
    note_id = f"{eve}/statuses/{uuid.uuid4().hex}"
    content = (
        f'<p><a href="{peer.base}/p/tag.html" rel="tag" class="mention hashtag">#cats</a> '
        f'<span class="h-card"><a href="{eve}" class="u-url mention">@eve</a></span> '
        f'read <a href="{peer.base}/p/cats.html" rel="nofollow noopener">this</a></p>'
    )
    note = {
        "id": note_id,
        "type": "Note",
        "attributedTo": eve,
        "content": content,
        "to": [documents.PUBLIC],
        "cc": [],
    }
    create = {"id": f"{note_id}/activity", "type": "Create", "actor": eve, "object": note}
    assert await asyncio.to_thread(peer.post, f"{serve.base}/inbox", create) == 202
    await rp.drain()
    sid = int(await rp.store.get(fed_keys.note(note_id)))
    card = shown(serve, sid)["card"]
    assert card["url"] == f"{peer.base}/p/cats.html"
    assert card["image"].startswith(f"{serve.base}/media_proxy/cards/{sid}/")
    assert "/p/tag.html" not in peer.gets

    # its server edits it to link another page: the new page's card
    peer.files["/p/dogs.html"] = (b"<html><title>Dogs</title></html>", "text/html")
    edited = note | {
        "content": f'<p>no, <a href="{peer.base}/p/dogs.html">this</a></p>',
        "updated": "2026-12-01T10:00:00Z",
    }
    update = {"id": f"{note_id}#update", "type": "Update", "actor": eve, "object": edited}
    assert await asyncio.to_thread(peer.post, f"{serve.base}/inbox", update) == 202
    await rp.drain()
    card = shown(serve, sid)["card"]
    assert card["url"] == f"{peer.base}/p/dogs.html" and card["title"] == "Dogs"


async def test_without_the_loopback_switch_a_private_address_is_never_fetched(
    settings, serve, alice, peer, media_dir
):
    peer.files["/p/cats.html"] = (PAGE.encode(), "text/html")
    strict = await _engine(settings, serve, media_dir, False)
    try:
        status = await post(alice, f"{peer.base}/p/cats.html")
        await strict.drain()
    finally:
        await strict.close()
    assert peer.gets == []
    assert shown(serve, status["id"])["card"] is None


async def test_a_page_in_the_charset_its_meta_names(rp, serve, alice, peer):
    page = (
        '<html><head><meta charset="iso-8859-1"><title>Caf\u00e9 cr\u00e8me</title></head></html>'
    )
    peer.files["/p/cafe.html"] = (page.encode("latin-1"), "text/html")
    status = await post(alice, f"{peer.base}/p/cafe.html")
    await rp.drain()
    card = shown(serve, status["id"])["card"]
    assert card["title"] == "Caf\u00e9 cr\u00e8me"
    assert card["description"] == "" and card["image"] is None and card["provider_name"] == ""


async def test_a_server_whose_media_are_rejected_gives_a_card_with_no_image(rp, serve, alice, peer):
    await rp.federation.domain_block("127.0.0.1", "noop", reject_media=True)
    peer.files["/p/cats.html"] = (PAGE.encode(), "text/html")
    peer.files["/i/cat.jpg"] = (jpeg(), "image/jpeg")
    try:
        status = await post(alice, f"{peer.base}/p/cats.html")
        await rp.drain()
    finally:  # (the database outlives this module: the modules after it see no block)
        await rp.federation.domain_unblock("127.0.0.1")
    card = shown(serve, status["id"])["card"]
    assert card["title"] == "Cats & their ways"
    assert card["image"] is None and card["blurhash"] is None
    assert "/i/cat.jpg" not in peer.gets and await rp.media.cache_stats() == (0, 0)


async def test_a_trending_link_shows_its_card(rp, serve, alice, peer):
    """/api/v1/trends/links answers each link as its kept card (Mastodon's
    Trends::Link), not its host and path, once a post's job made the card."""
    peer.files["/p/trend.html"] = (PAGE.encode(), "text/html; charset=utf-8")
    peer.files["/i/cat.jpg"] = (jpeg((800, 600)), "image/jpeg")
    link = f"{peer.base}/p/trend.html"
    plain = f"{peer.base}/p/no-card-yet.html"
    await post(alice, f"trending {link}")
    await rp.drain()
    await post(alice, f"and {plain}")  # its card job not run yet
    trends = httpx.get(f"{serve.base}/api/v1/trends/links").json()
    by_url = {t["url"]: t for t in trends}
    card = by_url[link]
    assert card["title"] == "Cats & their ways" and card["provider_name"] == "Cat News"
    assert card["image"].startswith(f"{serve.base}/media_proxy/cards/0/")
    shown_image = httpx.get(card["image"], follow_redirects=True)
    assert shown_image.status_code == 200
    assert shown_image.headers["content-type"].startswith("image/")
    assert card["history"] and card["history"][0]["accounts"] == "1"
    bare = by_url[plain]
    assert bare["title"] == urlsplit(plain).hostname + "/p/no-card-yet.html"
    assert bare["image"] is None and bare["history"]


@pytest.mark.parametrize("how", ["cleared", "past the bound"])
async def test_a_card_image_dropped_from_the_cache_is_fetched_again(
    settings, serve, alice, peer, media_dir, how
):
    """The remote media cache drops a card's image (the admin command, or
    more kept than its size bound): the card's image URL answers 404 (its
    fetch queued; never a redirect to the image's server), then, once the
    job ran, the image again, fetched once more through the guard."""
    peer.files["/p/cats.html"] = (PAGE.encode(), "text/html")
    peer.files["/i/cat.jpg"] = (jpeg((800, 600)), "image/jpeg")
    engine = await _engine(settings, serve, media_dir, True)
    try:
        status = await post(alice, f"{peer.base}/p/cats.html")
        await engine.drain()
        card = shown(serve, status["id"])["card"]
        first = httpx.get(card["image"], follow_redirects=True)
        assert first.status_code == 200 and peer.gets.count("/i/cat.jpg") == 1
        count, weight = await engine.media.cache_stats()
        assert count == 1 and weight > 0
        if how == "cleared":
            assert await engine.media.cache_clear() == 1
        else:  # another card's image kept by an engine whose bound is 1 byte
            await engine.close()
            engine = await Redpoll.open(
                settings.with_(
                    public_url=serve.base,
                    federation_loopback=True,
                    media_dir=str(media_dir),
                    remote_media_max_bytes=1,
                )
            )
            peer.files["/p/dogs.html"] = (
                PAGE.replace("/i/cat.jpg", "/i/dog.jpg").encode(),
                "text/html",
            )
            peer.files["/i/dog.jpg"] = (jpeg((640, 480)), "image/jpeg")
            await post(alice, f"{peer.base}/p/dogs.html")
            await engine.drain()
        assert (await engine.media.cache_stats())[0] == 0
        # the file is gone: the card's URL answers no image, and never the origin
        gone = httpx.get(card["image"])
        assert gone.status_code == 404 and "location" not in gone.headers
        assert shown(serve, status["id"])["card"]["image"] == card["image"]
        # asked again before the job ran: queued once
        assert httpx.get(card["image"]).status_code == 404
        await engine.close()
        engine = await _engine(settings, serve, media_dir, True)
        await engine.drain()
        back = httpx.get(card["image"])
        assert back.status_code == 302
        assert back.headers["location"].startswith(f"{serve.base}/system/media/")
        image = httpx.get(card["image"], follow_redirects=True)
        assert image.status_code == 200 and image.headers["content-type"].startswith("image/")
        assert peer.gets.count("/i/cat.jpg") == 2
        assert (await engine.media.cache_stats())[0] == 1
    finally:
        await engine.close()


@pytest.mark.parametrize(
    "path",
    [
        "/media_proxy/cards/%C2%B9/" + "0" * 64 + ".2",  # a superscript one
        "/media_proxy/accounts/%C2%B2/avatar",
        "/media_proxy/%D9%A3/1/" + "0" * 16 + "/small",  # an Arabic-Indic three
        "/users/nobody/statuses/%C2%B3",
    ],
)
def test_an_id_of_other_digits_is_an_unknown_id_not_a_server_error(serve, path):
    """str.isdigit takes superscripts and other scripts' digits, which int()
    refuses: such an id in a path is a 404, as any unknown one."""
    r = httpx.get(serve.base + path, headers={"Accept": "application/activity+json"})
    assert r.status_code == 404, (path, r.status_code, r.text[:200])
