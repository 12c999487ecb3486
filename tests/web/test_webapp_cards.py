"""A link's preview card in the web app (Debian's Chromium): a post with a
link to a page a real HTTP server of the test serves shows, once its card
was made (by the serve's job workers), the card under the text: its image
from this server (the page's server is never asked by the browser: the
people fixture fails on a request to another origin), its title,
description and provider, the whole card one link opening the page in a
new tab."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, fresh_serve, people, status_in, until  # noqa: F401
from support.federation import Peer
from support.media import jpeg

PAGE = """<!doctype html><html lang="en"><head><title>x</title>
<meta property="og:title" content="The red cat of Lisbon">
<meta property="og:description" content="A long story about a red cat who walks the hills of Lisbon
every morning, greets the tram drivers, and sleeps in the sun by the river all afternoon long.">
<meta property="og:site_name" content="Cat Weekly">
<meta property="og:image" content="/i/cat.jpg">
</head><body></body></html>"""


@pytest.fixture(scope="module")
def web(server, tmp_path_factory):
    """``redpoll serve`` with its job workers, allowed to fetch from loopback
    (``people`` uses this ``web``)."""
    media = tmp_path_factory.mktemp("cardmedia")
    env = {"REDPOLL_MEDIA_DIR": str(media), "REDPOLL_FEDERATION_LOOPBACK": "1"}
    with fresh_serve(server, env) as srv:
        yield srv


def test_a_post_with_a_link_shows_its_card_opening_the_page_in_a_new_tab(people):  # noqa: F811
    peer = Peer()
    try:
        peer.files["/p/cat.html"] = (PAGE.encode(), "text/html")
        peer.files["/i/cat.jpg"] = (jpeg((1200, 630)), "image/jpeg")
        link = f"{peer.base}/p/cat.html"
        for viewport, shot in ((DESKTOP, "desktop"), (PHONE, "phone")):
            ann = people(viewport)
            ann.sign_up("ann")
            a = ann.page
            a.get_by_role("textbox", name="Compose").fill(f"Read this {link}")
            a.get_by_role("button", name="Post", exact=True).click()
            expect(status_in(a, "Read this").first).to_be_visible()
            until(lambda: ann.api("GET", "/api/v1/timelines/home").json()[0]["card"])
            a.reload()
            card = status_in(a, "Read this").first.locator("a.link-card")
            expect(card).to_be_visible()
            expect(card).to_contain_text("The red cat of Lisbon")
            expect(card).to_contain_text("Cat Weekly")
            assert card.get_attribute("href") == link
            assert card.get_attribute("target") == "_blank"
            assert set(card.get_attribute("rel").split()) == {"noopener", "noreferrer", "nofollow"}
            image = card.locator("img")
            assert image.get_attribute("src").startswith(
                ann.web.url.rstrip("/") + "/media_proxy/cards/"
            )
            assert image.get_attribute("loading") == "lazy"
            until(lambda: a.evaluate("document.querySelector('a.link-card img').naturalWidth > 0"))
            # the description is held to two lines
            lines = a.evaluate(
                "(() => { const d = document.querySelector('.link-card-description');"
                " return d.getBoundingClientRect().height / parseFloat(getComputedStyle(d).lineHeight); })()"
            )
            assert lines <= 2.2
            a.screenshot(path=f"/tmp/redpoll-card-{shot}.png")
            if viewport is PHONE:  # the dark theme's colours, from the style sheet
                a.emulate_media(color_scheme="dark")
                panel = card.evaluate("(el) => getComputedStyle(el).backgroundColor")
                assert panel == "rgb(26, 29, 36)", panel
                a.screenshot(path="/tmp/redpoll-card-phone-dark.png")
        # the page and its image were fetched once, by the server, for both posts
        assert peer.gets.count("/p/cat.html") == 1 and peer.gets.count("/i/cat.jpg") == 1
    finally:
        peer.close()
