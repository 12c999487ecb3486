"""Small images to upload, and waiting for an upload's processing."""

from __future__ import annotations

import io
import time

from mastodon import Mastodon
from PIL import Image


def small_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 120, 240)).save(out, "PNG")
    return out.getvalue()


def jpeg(size=(640, 480), color=(200, 30, 30), exif: bytes | None = None, quality=90) -> bytes:
    img = Image.new("RGB", size, color)
    for x in range(0, size[0], 8):  # something to compress
        img.putpixel((x, x % size[1]), (x % 256, 0, 255 - x % 256))
    out = io.BytesIO()
    img.save(out, "JPEG", quality=quality, **({"exif": exif} if exif else {}))
    return out.getvalue()


def png(size=(300, 200), color=(10, 120, 240, 255)) -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", size, color).save(out, "PNG")
    return out.getvalue()


def bearer(m: Mastodon) -> dict:
    return {"Authorization": f"Bearer {m.access_token}"}


def ready(m: Mastodon, media, seconds: float = 30) -> dict:
    """Poll GET /api/v1/media/:id (206 while processing) until it has a url."""
    deadline = time.monotonic() + seconds
    while media["url"] is None:
        assert time.monotonic() < deadline, "upload never became ready"
        time.sleep(0.05)
        media = m.media(media["id"])
    return media
