"""Video, GIF-like video and audio in the web app, played by Debian's
Chromium: a peer played by the test delivers signed notes whose attachments
are real files (a VP8 WebM made with PyAV, a WAV made with ``wave``, a JPEG
poster and a PNG) served on loopback by the test, and the reader of a real
federating ``redpoll serve`` sees them in their mentions: the video plays in
place (nothing fetched before it is played), the audio plays, a mixed
gallery opens the viewer, a sensitive video loads nothing page_until it is shown.

No server sends a ``gifv`` yet (another server's note does not say a video
is GIF-like: Mastodon decides it from the file, which is not fetched here;
local GIFs stay images), so the GIF test renders an attachment of that type
with the app's own module in the app's page, from a real file."""

from __future__ import annotations

import io
import re
import threading
import time
import uuid
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import av
import httpx
import pytest
from PIL import Image, ImageDraw
from playwright.sync_api import expect
from support.browser import (  # noqa: F401
    DESKTOP,
    Person,
    browser,
    page_until,  # noqa: F401
    status_in,
)
from support.federation import Instance, Peer, eventually  # noqa: F401

from redpoll import web
from redpoll.core.settings import Settings
from redpoll.federation import documents

pytestmark = pytest.mark.timeout(300)
PHONE_WIDE = {"width": 390, "height": 844}
VIDEO_SIZE = (320, 180)
VIDEO_FPS = 15
VIDEO_S = 2.0
TONE_HZ = 440
TONE_RATE = 8000
TONE_S = 2.0
HAVE_ENOUGH_DATA = 4  # HTMLMediaElement.readyState


def webm(colour: tuple[int, int, int]) -> bytes:
    """A second of VP8 video: a yellow square crossing a coloured field."""
    out = io.BytesIO()
    with av.open(out, "w", format="webm") as box:
        stream = box.add_stream("libvpx", rate=VIDEO_FPS)
        stream.width, stream.height = VIDEO_SIZE
        stream.pix_fmt = "yuv420p"
        w, h = VIDEO_SIZE
        frames = int(VIDEO_S * VIDEO_FPS)
        for i in range(frames):
            img = Image.new("RGB", VIDEO_SIZE, colour)
            x = i * (w - 60) // frames
            ImageDraw.Draw(img).rectangle((x, h // 3, x + 60, h // 3 + 60), fill=(250, 210, 40))
            for packet in stream.encode(av.VideoFrame.from_image(img)):
                box.mux(packet)
        for packet in stream.encode():
            box.mux(packet)
    return out.getvalue()


def tone() -> bytes:
    """A 440 Hz tone as a 16-bit mono WAV (triangle wave: no math needed)."""
    out = io.BytesIO()
    period = TONE_RATE // TONE_HZ
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(TONE_RATE)
        samples = bytearray()
        for i in range(int(TONE_RATE * TONE_S)):
            phase = (i % period) / period
            value = int((4 * abs(phase - 0.5) - 1) * 8000)
            samples += value.to_bytes(2, "little", signed=True)
        w.writeframes(bytes(samples))
    return out.getvalue()


def still(colour: tuple[int, int, int], fmt: str) -> bytes:
    img = Image.new("RGB", VIDEO_SIZE, colour)
    ImageDraw.Draw(img).ellipse((110, 40, 210, 140), fill=(250, 250, 250))
    out = io.BytesIO()
    img.save(out, fmt)
    return out.getvalue()


class Files:
    """Another server's media files on loopback, as a web server serves
    them (byte ranges, which browsers ask for media), each request kept."""

    def __init__(self):
        self.files: dict[str, tuple[str, bytes]] = {}
        self.asked: list[str] = []
        files = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                # what a reader's browser asked for (the server's own
                # fetches for its media cache are not a reader's)
                if "Mozilla" in self.headers.get("User-Agent", ""):
                    files.asked.append(self.path)
                kind, body = files.files.get(self.path, ("text/plain", b""))
                status, headers = (200 if body else 404), {"Accept-Ranges": "bytes"}
                ranged = self.headers.get("Range", "")
                if body and ranged.startswith("bytes="):
                    first, _, last = ranged[6:].partition("-")
                    start = int(first or 0)
                    end = min(int(last), len(body) - 1) if last else len(body) - 1
                    headers["Content-Range"] = f"bytes {start}-{end}/{len(body)}"
                    body, status = body[start : end + 1], 206
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def put(self, name: str, kind: str, body: bytes) -> str:
        self.files[f"/m/{name}"] = (kind, body)
        return f"{self.base}/m/{name}"

    def fetched(self, url: str) -> bool:
        return url.removeprefix(self.base) in self.asked


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A federating ``redpoll serve``, the peer delivering to it and the
    peer's media files."""
    a = Instance(tmp_path_factory.mktemp("webav"), "a")
    peer, files = Peer(), Files()
    with a.proc:
        yield a, peer, files
        assert a.proc.process.poll() is None, a.proc.logs()[-3000:]
    peer.close()
    files.server.shutdown()


def deliver(site, reader: str, text: str, attachment: list[dict], sensitive: bool = False) -> None:
    """A public note of eve's mentioning ``reader``, delivered signed."""
    a, peer, _ = site
    eve = peer.actor("eve")
    reader_uri = f"{a.url}/users/{reader}"
    note_id = f"{eve}/statuses/{uuid.uuid4().hex}"
    note = {
        "id": note_id,
        "type": "Note",
        "attributedTo": eve,
        "sensitive": sensitive,
        "content": f"<p>{text} @{reader}</p>",
        "to": [documents.PUBLIC],
        "cc": [reader_uri],
        "tag": [{"type": "Mention", "href": reader_uri, "name": f"@{reader}"}],
        "attachment": attachment,
    }
    assert (
        peer.post(
            f"{a.url}/inbox",
            {"id": f"{note_id}/activity", "type": "Create", "actor": eve, "object": note},
        )
        == 202
    )


def here_or(origin: str) -> re.Pattern:
    """A remote video's or sound's ``src``: the copy this server keeps
    (redpoll.media.remote), its media proxy until the job fetched it, or
    its origin as that proxy's target; never any other."""
    ext = re.escape(origin.rsplit(".", 1)[1])
    return re.compile(
        "^(" + re.escape(origin) + "|.*/media_proxy/[0-9]+/[0-9]+/[0-9a-f]+/original"
        "|.*/system/media/.+[.]" + ext + ")$"
    )


def video_doc(url: str, poster: str, name: str) -> dict:
    w, h = VIDEO_SIZE
    return {
        "type": "Document",
        "mediaType": "video/webm",
        "url": url,
        "name": name,
        "width": w,
        "height": h,
        "icon": {"type": "Image", "url": poster},
    }


PLAYED = "m => m.readyState >= %d && m.played.length > 0 && m.played.end(m.played.length - 1) > %s"


def playing(media, past: float = 0.3, timeout: float = 15.0) -> None:
    """The element ``media`` (a locator) has played beyond ``past`` seconds,
    with enough of it decoded (HAVE_ENOUGH_DATA)."""
    end = time.monotonic() + timeout
    while not media.evaluate(PLAYED % (HAVE_ENOUGH_DATA, past)):
        if time.monotonic() > end:
            state = media.evaluate(
                "m => [m.readyState, m.paused, m.currentTime, m.error && m.error.message]"
            )
            raise AssertionError(f"not played past {past} s: {state}")
        time.sleep(0.05)


def test_media_may_load_from_other_servers_and_the_bucket_only_where_they_are(site):
    a, _, _ = site
    csp = httpx.get(a.url + "/notifications").headers["content-security-policy"]
    assert httpx.get(a.url + "/@nobody_here").headers["content-security-policy"] == csp
    assert "img-src 'self' data: https: http:;" in csp and "media-src 'self' https: http:;" in csp
    assert "script-src 'self';" in csp and "connect-src 'self';" in csp  # no wider than media
    bucket = Settings(s3_bucket="b", s3_public_url="https://cdn.example/media/")
    assert web.media_sources(bucket) == "https://cdn.example"
    assert (
        "media-src 'self' https://cdn.example;"
        in web.shell_headers(bucket)["Content-Security-Policy"]
    )
    assert web.media_sources(Settings(public_url="https://social.example")) == "https:"
    assert web.shell_headers(Settings())["Content-Security-Policy"] == web.CSP
    assert "media-src 'self';" in web.CSP and "http" not in web.CSP


def test_video_audio_and_a_sensitive_video_from_another_server(site, browser):  # noqa: F811
    a, peer, files = site
    clip = files.put("clip.webm", "video/webm", webm((30, 70, 140)))
    poster = files.put("clip.jpg", "image/jpeg", still((30, 70, 140), "JPEG"))
    photo = files.put("photo.png", "image/png", still((40, 150, 70), "PNG"))
    song = files.put("tone.wav", "audio/wav", tone())
    hidden = files.put("hidden.webm", "video/webm", webm((150, 40, 90)))
    hidden_poster = files.put("hidden.jpg", "image/jpeg", still((150, 40, 90), "JPEG"))
    ann = Person(browser, a, DESKTOP, others=(files.base,))
    try:
        reader = ann.sign_up("ann")
        deliver(
            site,
            reader,
            "a clip and a photo",
            [
                video_doc(clip, poster, "A yellow square crossing blue"),
                {
                    "type": "Document",
                    "mediaType": "image/png",
                    "url": photo,
                    "name": "A white moon on green",
                },
            ],
        )
        deliver(
            site,
            reader,
            "a tone for you",
            [{"type": "Document", "mediaType": "audio/wav", "url": song, "name": "A 440 Hz tone"}],
        )
        deliver(
            site,
            reader,
            "careful with this one",
            [video_doc(hidden, hidden_poster, "A square crossing purple")],
            sensitive=True,
        )
        eventually(
            lambda: len(ann.api("GET", "/api/v1/notifications").json()) == 3,
            what="eve's three notes",
        )
        p = ann.page
        p.goto("/notifications/mentions")

        # a video: a player with the preview as its poster, nothing fetched yet
        post = status_in(p, "a clip and a photo").first
        gallery = post.get_by_role("group", name="2 attachments")
        expect(gallery).to_be_visible()
        video = gallery.locator("video")
        expect(video).to_have_attribute("src", here_or(clip))
        # the preview as this server keeps it, or its origin until the
        # cache's job has fetched it
        expect(video).to_have_attribute(
            "poster", re.compile(re.escape(poster) + "|/system/media/.+[.]jpg$")
        )
        expect(video).to_have_attribute("aria-label", "A yellow square crossing blue")
        expect(video).to_have_attribute("preload", "none")
        assert video.evaluate("v => v.controls && !v.autoplay && v.paused")
        eventually(
            lambda: files.fetched(poster) or "/system/media/" in video.get_attribute("poster"),
            what="the poster shown (from here once kept)",
        )
        assert not files.fetched(clip)
        # the photo beside it opens the viewer, which moves on to the video
        gallery.get_by_role("img", name="A white moon on green").click()
        expect(p.get_by_role("dialog", name="Image 2 of 2")).to_be_visible()
        p.keyboard.press("ArrowLeft")
        viewer = p.get_by_role("dialog", name="Video 1 of 2")
        expect(viewer.locator("video")).to_have_attribute("src", here_or(clip))
        assert viewer.locator("video").evaluate("v => v.controls")
        p.keyboard.press("Escape")
        expect(p.get_by_role("dialog")).to_have_count(0)
        # played in place
        video.evaluate("v => v.play()")  # (what its play button does)
        playing(video)
        assert video.evaluate("v => [v.videoWidth, v.videoHeight]") == list(VIDEO_SIZE)
        p.screenshot(path="/tmp/redpoll-av-video-desktop.png")

        # a sound: its description over a player that plays
        tune = status_in(p, "a tone for you").first
        expect(tune.get_by_role("group", name="Audio")).to_contain_text("A 440 Hz tone")
        audio = tune.locator("audio")
        expect(audio).to_have_attribute("src", here_or(song))
        expect(audio).to_have_attribute("aria-label", "A 440 Hz tone")
        assert not files.fetched(song)
        audio.evaluate("a => a.play()")
        playing(audio)

        # a sensitive video loads nothing, poster included, page_until shown
        careful = status_in(p, "careful with this one").first
        cover = careful.get_by_role("button", name="Sensitive content — show")
        expect(cover).to_be_visible()
        covered = careful.locator("video")
        expect(covered).to_be_hidden()
        assert covered.get_attribute("src") is None and covered.get_attribute("poster") is None
        careful.scroll_into_view_if_needed()
        p.screenshot(path="/tmp/redpoll-av-sensitive-desktop.png")
        assert not files.fetched(hidden) and not files.fetched(hidden_poster)
        cover.click()
        expect(covered).to_have_attribute("src", here_or(hidden))
        expect(covered).to_be_visible()
        covered.evaluate("v => v.play()")
        playing(covered)
        careful.get_by_role("button", name="Hide sensitive content").click()
        expect(covered).to_be_hidden()
        assert covered.evaluate("v => v.paused")  # covered again, it stops

        # a phone's width: the players fit the screen
        p.set_viewport_size(PHONE_WIDE)
        p.goto("/notifications/mentions")
        expect(status_in(p, "a tone for you").first.locator("audio")).to_be_visible()
        assert p.evaluate("document.documentElement.scrollWidth") <= PHONE_WIDE["width"]
        for player in p.locator("article video:visible, article audio").all():
            box = player.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE_WIDE["width"], box
        p.screenshot(path="/tmp/redpoll-av-phone.png", full_page=True)
        assert not ann.problems, ann.problems
    finally:
        ann.context.close()


GIF_STATUS = """async ([url, poster, file]) => {
    const src = document.querySelector('script[type=module][src$="/app.js"]').src.replace('app.js', 'media.js');
    const { renderMedia } = await import(src);
    const box = renderMedia({ sensitive: false, media_attachments: [
        { id: '1', type: 'gifv', url, preview_url: poster, description: 'A square crossing, looped',
          meta: { original: { width: 320, height: 180 } } },
        { id: '2', type: 'unknown', url: file, remote_url: file, description: 'the score' }] });
    const article = document.createElement('article');
    article.className = 'status gif-test';
    article.append(box);
    document.querySelector('main').prepend(article);
    const v = box.querySelector('video');
    window.gifWraps = 0;
    let last = 0;
    v.addEventListener('timeupdate', () => { if (v.currentTime < last) window.gifWraps += 1; last = v.currentTime; });
}"""


def test_a_gif_like_video_plays_muted_looped_and_waits_when_asked_for_less_motion(site, browser):  # noqa: F811
    a, _, files = site
    loop = files.put("loop.webm", "video/webm", webm((20, 110, 110)))
    poster = files.put("loop.jpg", "image/jpeg", still((20, 110, 110), "JPEG"))
    score = files.put("score.pdf", "application/pdf", b"%PDF-1.4 a score")
    for motion in ("no-preference", "reduce"):
        bo = Person(browser, a, DESKTOP, others=(files.base,), reduced_motion=motion)
        try:
            bo.sign_up("bo")
            p = bo.page
            p.evaluate(GIF_STATUS, [loop, poster, score])
            gif = p.locator(".gif-test video")
            expect(gif).to_have_attribute("src", loop)
            assert gif.evaluate(
                "v => v.muted && v.loop && !v.controls && v.hasAttribute('playsinline')"
            )
            expect(p.locator(".gif-test .media-badge", has_text="GIF")).to_be_visible()
            link = p.locator(".gif-test").get_by_role("link", name="score.pdf")
            expect(link).to_have_attribute("href", score)
            if motion == "reduce":  # still page_until hovered, and again once left
                p.wait_for_timeout(500)
                assert gif.evaluate("v => v.paused && v.currentTime === 0")
                p.screenshot(path="/tmp/redpoll-av-gif-still.png")
                gif.hover()
                playing(gif, past=0.1)
                p.mouse.move(0, 0)
                page_until(p, "document.querySelector('.gif-test video').paused")
            else:  # plays on screen by itself, round and round
                playing(gif, past=0.1)
                page_until(p, "window.gifWraps >= 1", timeout=10)
                assert not gif.evaluate("v => v.paused")
                p.screenshot(path="/tmp/redpoll-av-gif-playing.png")
                # a click opens it in the viewer, looped there too
                p.locator(".gif-test .media-gifv").click()
                shown = p.get_by_role("dialog", name="GIF 1 of 1").locator("video")
                expect(shown).to_have_attribute("src", loop)
                assert shown.evaluate("v => v.muted && v.loop && !v.controls")
                page_until(
                    p,
                    "(() => { const v = document.querySelector('dialog video');"
                    " return v && !v.paused && v.currentTime > 0.1; })()",
                )
                p.keyboard.press("Escape")
            assert not bo.problems, bo.problems
        finally:
            bo.context.close()
