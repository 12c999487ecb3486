"""Images in the web app, as people use them in Debian's Chromium: attaching
images in the composer (the file chooser, alt text, progress, errors from
the server), the gallery under a status (previews over their blurhash, the
viewer with Esc and arrow keys, sensitive images behind a cover), the avatar
and header in Settings; and going Back to a timeline where one left it
(the phone's back arrow and its "More" menu too)."""

from __future__ import annotations

import io
import re

import blurhash as blurhash_lib
import httpx
import pytest
from PIL import Image, ImageDraw
from playwright.sync_api import expect
from support.browser import (  # noqa: F401
    DESKTOP,
    PHONE,
    Person,
    browser,
    fresh_serve,
    page_until,  # noqa: F401
    people,
    status_in,
)


@pytest.fixture(scope="module")
def web(server, tmp_path_factory):
    """``redpoll serve`` keeping media files in a folder of this module's own
    (``people`` from test_webapp uses this ``web``)."""
    media = tmp_path_factory.mktemp("webmedia")
    with fresh_serve(server, {"REDPOLL_MEDIA_DIR": str(media)}) as srv:
        yield srv


def picture(colour: tuple[int, int, int], size=(800, 600), fmt="PNG") -> bytes:
    """A picture with some structure (a blurhash of a flat colour is dull)."""
    img = Image.new("RGB", size, colour)
    draw = ImageDraw.Draw(img)
    w, h = size
    draw.ellipse((w // 5, h // 5, w * 3 // 5, h * 4 // 5), fill=(255, 255 - colour[1], 80))
    draw.rectangle((w * 2 // 3, h // 6, w - 20, h // 2), fill=(20, 40, 200))
    out = io.BytesIO()
    img.save(out, fmt)
    return out.getvalue()


def upload(person: Person, data: bytes, description: str = "") -> dict:
    r = person.api(
        "POST",
        "/api/v1/media",
        files={"file": ("p.png", data, "image/png")},
        data={"description": description} if description else {},
    )
    assert r.status_code == 200, r.text
    return r.json()


# --- composing with images ------------------------------------------------------------------
def test_attach_two_images_with_alt_text_and_post_them(people, web):  # noqa: F811
    ann = people(DESKTOP)
    ann.sign_up("ann")
    a = ann.page
    add = a.get_by_role("button", name="Add images")
    with a.expect_file_chooser() as chooser:
        add.click()
    chooser.value.set_files(
        [
            {"name": "harbour.png", "mimeType": "image/png", "buffer": picture((30, 120, 200))},
            {
                "name": "garden.jpg",
                "mimeType": "image/jpeg",
                "buffer": picture((40, 160, 60), fmt="JPEG"),
            },
        ]
    )
    attached = a.get_by_role("list", name="Attached images")
    expect(attached.get_by_role("listitem")).to_have_count(2)
    # images and a poll exclude each other (the server refuses both)
    expect(a.get_by_role("button", name="Poll", exact=True)).to_be_disabled()
    a.get_by_label("Alt text for image 1").fill("A blue harbour at noon")
    a.get_by_label("Alt text for image 2").fill("A green garden with a yellow sun")
    expect(attached.locator("img")).to_have_count(2)  # both processed: their previews show
    page_until(
        a,
        "[...document.querySelectorAll('.compose-media img')].every(i => i.complete && i.naturalWidth > 0)",
    )
    post = a.get_by_role("button", name="Post", exact=True)
    expect(post).to_be_enabled()  # no text: images alone make a post
    a.screenshot(path="/tmp/redpoll-media-compose-desktop.png")
    post.click()

    mine = a.locator("article").first
    gallery = mine.get_by_role("group", name="2 images")
    expect(gallery).to_be_visible()
    first = gallery.get_by_role("img", name="A blue harbour at noon")
    second = gallery.get_by_role("img", name="A green garden with a yellow sun")
    expect(first).to_be_visible()
    expect(second).to_be_visible()
    page_until(
        a,
        "[...document.querySelectorAll('article .media-item img')].every(i => i.complete && i.naturalWidth > 0)",
    )
    expect(attached).to_be_hidden()  # the composer is empty again
    # served from the server, as the API says
    status = ann.api("GET", "/api/v1/timelines/home").json()[0]
    assert [m["description"] for m in status["media_attachments"]] == [
        "A blue harbour at noon",
        "A green garden with a yellow sun",
    ]
    assert status["content"] in ("", "<p></p>")
    src = first.get_attribute("src")
    assert src == status["media_attachments"][0]["preview_url"] and src.startswith(web.url)
    served = httpx.get(src)
    assert served.status_code == 200 and served.headers["content-type"].startswith("image/")
    a.screenshot(path="/tmp/redpoll-media-status-desktop.png")

    # the viewer: the original, arrow keys move, Esc closes and gives focus back
    first.click()
    viewer = a.get_by_role("dialog", name="Image 1 of 2")
    expect(viewer).to_be_visible()
    expect(viewer.get_by_role("img", name="A blue harbour at noon")).to_have_attribute(
        "src", status["media_attachments"][0]["url"]
    )
    a.keyboard.press("ArrowRight")
    expect(a.get_by_role("dialog", name="Image 2 of 2")).to_contain_text("A green garden")
    a.screenshot(path="/tmp/redpoll-media-viewer-desktop.png")
    a.keyboard.press("ArrowRight")
    expect(a.get_by_role("dialog", name="Image 1 of 2")).to_be_visible()
    a.keyboard.press("Escape")
    expect(a.get_by_role("dialog")).to_have_count(0)
    expect(gallery.locator(".media-item").first).to_be_focused()


def test_a_refused_upload_says_why_and_blocks_posting_until_removed(people):  # noqa: F811
    bo = people(PHONE)
    bo.sign_up("bo")
    b = bo.page
    box = b.get_by_role("textbox", name="Compose")
    box.click()
    box.fill("with a broken picture")
    with b.expect_file_chooser() as chooser:
        b.get_by_role("button", name="Add images").click()
    chooser.value.set_files(
        [
            {"name": "broken.png", "mimeType": "image/png", "buffer": b"this is not a png at all"},
            {
                "name": "fine.png",
                "mimeType": "image/png",
                "buffer": picture((200, 60, 60), size=(300, 200)),
            },
        ]
    )
    alert = b.get_by_role("alert").filter(has_text="broken.png")
    expect(alert).to_be_visible()
    expect(b.get_by_role("list", name="Attached images").locator("img")).to_have_count(1)
    post = b.get_by_role("button", name="Post", exact=True)
    expect(post).to_be_disabled()
    bo.expected_error(422, "/api/v2/media")
    b.screenshot(path="/tmp/redpoll-media-error-phone.png", full_page=True)
    b.get_by_role("button", name="Remove image 1").click()
    expect(alert).to_have_count(0)
    expect(post).to_be_enabled()
    post.click()
    mine = status_in(b, "with a broken picture").first
    expect(mine.get_by_role("group", name="Image")).to_be_visible()
    assert len(bo.api("GET", "/api/v1/timelines/home").json()[0]["media_attachments"]) == 1


def test_images_dropped_on_the_box_or_pasted_attach_too(people):  # noqa: F811
    jo = people(DESKTOP)
    jo.sign_up("jo")
    j = jo.page
    j.evaluate("""async () => {
        const image = async (colour) => {
            const c = document.createElement('canvas');
            c.width = 120; c.height = 80;
            const g = c.getContext('2d');
            g.fillStyle = colour; g.fillRect(0, 0, 120, 80);
            const blob = await new Promise((r) => c.toBlob(r, 'image/png'));
            return new File([blob], colour.slice(1) + '.png', { type: 'image/png' });
        };
        const form = document.querySelector('form.compose');
        const dropped = new DataTransfer();
        dropped.items.add(await image('#3366cc'));
        form.dispatchEvent(new DragEvent('dragover', { dataTransfer: dropped, bubbles: true, cancelable: true }));
        form.dispatchEvent(new DragEvent('drop', { dataTransfer: dropped, bubbles: true, cancelable: true }));
        const pasted = new DataTransfer();
        pasted.items.add(await image('#cc3366'));
        form.querySelector('textarea').dispatchEvent(new ClipboardEvent('paste', { clipboardData: pasted, bubbles: true, cancelable: true }));
    }""")
    attached = j.get_by_role("list", name="Attached images")
    expect(attached.locator("img")).to_have_count(2)
    j.get_by_label("Alt text for image 2").fill("A pink rectangle")
    j.get_by_role("button", name="Post", exact=True).click()
    expect(j.locator("article").first.get_by_role("img", name="A pink rectangle")).to_be_visible()
    expect(
        j.locator("article").first.get_by_role("button", name="Open image 1 of 2")
    ).to_be_visible()


# --- showing images ---------------------------------------------------------------------------
def test_sensitive_images_stay_covered_until_asked(people):  # noqa: F811
    cy, di = people(DESKTOP), people(PHONE)
    cy_name = cy.sign_up("cy")
    di.sign_up("di")
    media = upload(cy, picture((180, 40, 120)), "A magenta blob")
    r = cy.api(
        "POST",
        "/api/v1/statuses",
        json={"status": "spoilers inside", "media_ids": [media["id"]], "sensitive": True},
    )
    assert r.status_code == 200 and r.json()["sensitive"] is True
    d = di.page
    d.goto(f"/@{cy_name}")
    post = status_in(d, "spoilers inside").first
    expect(post).to_be_visible()
    cover = post.get_by_role("button", name="Sensitive content — show")
    expect(cover).to_be_visible()
    image = post.locator(".media-item img")
    expect(image).to_be_hidden()
    assert image.get_attribute("src") is None  # not even loaded
    expect(post.locator("canvas.blurhash")).to_be_visible()  # the blurhash stands in
    d.screenshot(path="/tmp/redpoll-media-sensitive-phone.png", full_page=True)
    cover.click()
    expect(post.get_by_role("img", name="A magenta blob")).to_be_visible()
    expect(cover).to_be_hidden()
    post.get_by_role("button", name="Hide sensitive content").click()
    expect(image).to_be_hidden()


def test_blurhash_decoder_agrees_with_the_reference(people):  # noqa: F811
    ed = people(DESKTOP)
    ed.sign_up("ed")
    media = upload(ed, picture((10, 200, 220)))
    hash_ = media["blurhash"]
    assert hash_
    want = blurhash_lib.decode(hash_, 8, 6)  # rows of [r, g, b]
    got = ed.page.evaluate(
        """async (hash) => {
        const src = document.querySelector('script[type=module][src$="/app.js"]').src.replace('app.js', 'blurhash.js');
        const { decode, averageColor } = await import(src);
        return { px: Array.from(decode(hash, 8, 6)), avg: averageColor(hash), bad: decode('not a hash!', 4, 4) };
    }""",
        hash_,
    )
    assert got["bad"] is None and re.fullmatch(r"rgb\(\d+ \d+ \d+\)", got["avg"])
    for y in range(6):
        for x in range(8):
            o = 4 * (y * 8 + x)
            assert all(abs(got["px"][o + c] - want[y][x][c]) <= 2 for c in range(3)), (x, y)


# --- profile pictures -------------------------------------------------------------------------
def test_avatar_and_header_upload_in_settings(people, web):  # noqa: F811
    fa = people(DESKTOP)
    fa_name = fa.sign_up("fa")
    assert fa.api("POST", "/api/v1/statuses", data={"status": "my face soon"}).status_code == 200
    f = fa.page
    f.goto("/settings")
    f.get_by_label("Avatar").set_input_files(
        {
            "name": "me.png",
            "mimeType": "image/png",
            "buffer": picture((240, 160, 30), size=(500, 500)),
        }
    )
    expect(f.locator(".profile-images .avatar img")).to_have_attribute(
        "src", re.compile("^data:image/png")
    )
    f.get_by_label("Header").set_input_files(
        {
            "name": "wide.jpg",
            "mimeType": "image/jpeg",
            "buffer": picture((20, 90, 160), size=(1500, 500), fmt="JPEG"),
        }
    )
    expect(f.locator(".header-preview img")).to_have_attribute(
        "src", re.compile("^data:image/jpeg")
    )
    f.get_by_label("Display name").fill("Fa with a face")
    f.get_by_role("button", name="Save").click()
    expect(f.get_by_role("status").filter(has_text="Settings saved")).to_be_visible()
    me = fa.api("GET", "/api/v1/accounts/verify_credentials").json()
    assert me["display_name"] == "Fa with a face"
    assert "missing" not in me["avatar"] and "missing" not in me["header"]
    expect(f.locator(".profile-images .avatar img")).to_have_attribute("src", me["avatar_static"])
    f.screenshot(path="/tmp/redpoll-media-settings-desktop.png", full_page=True)

    # the profile and the posts show the new avatar, served from the server
    f.goto(f"/@{fa_name}")
    card = f.locator(".profile-card")
    expect(card.locator(".avatar img")).to_have_attribute("src", me["avatar_static"])
    expect(card.locator(".profile-header img")).to_have_attribute("src", me["header_static"])
    post = status_in(f, "my face soon").first
    expect(post.locator(".avatar img")).to_have_attribute("src", me["avatar_static"])
    page_until(f, "document.querySelector('.profile-card .avatar img').naturalWidth > 0")
    assert httpx.get(me["avatar_static"]).status_code == 200
    f.screenshot(path="/tmp/redpoll-media-profile-desktop.png", full_page=True)


# --- back keeps your place ----------------------------------------------------------------------
def home_first_pages(person: Person) -> list[str]:
    return [
        url
        for method, url, _ in person.requests
        if method == "GET" and "/api/v1/timelines/home" in url and "max_id" not in url
    ]


def test_back_returns_to_the_same_place_in_a_long_timeline(people):  # noqa: F811
    gus = people(DESKTOP)
    gus.sign_up("gus")
    for i in range(30):
        assert (
            gus.api("POST", "/api/v1/statuses", data={"status": f"numbered post {i}"}).status_code
            == 200
        )
    g = gus.page
    g.reload()
    expect(g.locator("article")).to_have_count(20)
    g.locator("article").last.scroll_into_view_if_needed()
    expect(g.locator("article")).to_have_count(30)  # the second page came in
    target = status_in(g, "numbered post 4").first
    target.scroll_into_view_if_needed()
    g.evaluate("window.scrollBy(0, -200)")
    y = g.evaluate("window.scrollY")
    assert y > 1000
    firsts = len(home_first_pages(gus))
    top = target.bounding_box()["y"]
    target.locator("a.time").click()
    expect(g.locator("article.focused")).to_contain_text("numbered post 4")
    page_until(g, "window.scrollY === 0")
    g.go_back()
    expect(g.get_by_role("heading", name="Home")).to_be_visible()
    expect(g.locator("article")).to_have_count(30)  # what was loaded is still there
    page_until(g, f"Math.abs(window.scrollY - {y}) <= 3")
    expect(status_in(g, "numbered post 4").first.locator("a.time")).to_be_focused()
    assert len(home_first_pages(gus)) == firsts  # no first page asked for again
    # Forward shows the post again, as it was
    g.go_forward()
    expect(g.locator("article.focused")).to_contain_text("numbered post 4")
    # a reply written here goes into the kept timeline, a post arriving live
    # waits behind "new posts": neither moves the place Back returns to
    g.locator("article.focused").get_by_role("button", name="Reply").click()
    g.get_by_role("textbox", name="Compose").fill("a reply from the thread")
    g.get_by_role("button", name="Post", exact=True).click()
    expect(status_in(g, "a reply from the thread")).to_be_visible()
    assert (
        gus.api("POST", "/api/v1/statuses", data={"status": "arrived meanwhile"}).status_code == 200
    )
    g.wait_for_timeout(500)  # (the stream's event reaches the kept timeline)
    g.go_back()
    expect(g.get_by_role("button", name=re.compile(r"new posts?$"))).to_be_visible()
    expect(g.locator("article")).to_have_count(31)
    box = status_in(g, "numbered post 4").first.bounding_box()
    assert abs(box["y"] - top) <= 3, (box, top)
    # a link to Home (not Back) starts it afresh, at the top
    g.get_by_role("link", name="Home", exact=True).click()
    expect(g.locator("article")).to_have_count(20)
    expect(status_in(g, "arrived meanwhile")).to_be_visible()
    page_until(g, "window.scrollY === 0")
    assert len(home_first_pages(gus)) == firsts + 1
    assert not [u for u in home_first_pages(gus) if "min_id" in u or "since_id" in u]


def test_phone_back_arrow_more_menu_and_one_line_compose_box(people):  # noqa: F811
    hal = people(PHONE)
    hal.sign_up("hal")
    for i in range(25):
        assert (
            hal.api("POST", "/api/v1/statuses", data={"status": f"phone post {i}"}).status_code
            == 200
        )
    p = hal.page
    p.reload()
    compose = p.get_by_role("textbox", name="Compose")
    expect(compose).to_be_visible()
    expect(
        p.get_by_role("button", name="Post", exact=True)
    ).to_be_hidden()  # one line page_until tapped
    assert compose.bounding_box()["height"] < 60
    p.screenshot(path="/tmp/redpoll-phone-home-collapsed.png")
    compose.click()
    expect(p.get_by_role("button", name="Post", exact=True)).to_be_visible()
    expect(p.get_by_role("button", name="Add images")).to_be_visible()
    p.screenshot(path="/tmp/redpoll-phone-home-open.png")
    p.get_by_role("heading", name="Home").click()
    expect(p.get_by_role("button", name="Post", exact=True)).to_be_hidden()

    post = status_in(p, "phone post 15").first
    post.scroll_into_view_if_needed()
    y = p.evaluate("window.scrollY")
    post.locator("a.time").click()
    expect(p.locator("article.focused")).to_contain_text("phone post 15")
    p.screenshot(path="/tmp/redpoll-phone-post.png")
    p.get_by_role("button", name="Back", exact=True).click()
    expect(p.get_by_role("heading", name="Home")).to_be_visible()
    page_until(p, f"Math.abs(window.scrollY - {y}) <= 3")

    # Settings, Bookmarks and Sign out are under "More"
    nav = p.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Settings")).to_be_hidden()
    more = nav.get_by_role("button", name="More", exact=True)
    more.click()
    expect(more).to_have_attribute("aria-expanded", "true")
    for name in ("Bookmarks", "Scheduled posts", "Settings"):
        expect(nav.get_by_role("link", name=name)).to_be_visible()
    expect(nav.get_by_role("button", name="Sign out")).to_be_visible()
    p.screenshot(path="/tmp/redpoll-phone-more.png")
    nav.get_by_role("link", name="Settings").click()
    expect(p.get_by_role("heading", name="Settings", level=1)).to_be_visible()
    expect(more).to_have_attribute("aria-expanded", "false")
    # a post page opened directly: the arrow goes home
    sid = hal.api("GET", "/api/v1/timelines/home").json()[0]["id"]
    p.goto(f"/@{hal.name}/{sid}")
    expect(p.locator("article.focused")).to_be_visible()
    p.get_by_role("button", name="Back", exact=True).click()
    expect(p.get_by_role("heading", name="Home")).to_be_visible()
