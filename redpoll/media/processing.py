"""Images as they are stored: checked, turned upright, stripped, bounded,
with a preview and a blurhash (Pillow; the blurhash from the ``blurhash``
package). Everything here is plain synchronous code on bytes: the callers
run it off the event loop (:func:`run`, on a small pool of low-priority
threads; Pillow lets go of the GIL while it decodes, scales and encodes).

Only four formats are opened at all (Pillow is told so): JPEG, PNG, WebP
and GIF. A GIF stays a GIF (animated or not); an animated PNG or WebP keeps
its first frame. What a file carries besides its pixels (EXIF with its GPS
position and camera, XMP, comments) is left behind: the pixels are written
anew, with the colour profile only. The EXIF orientation is applied to the
pixels first, so the picture stands as it was taken.
"""

from __future__ import annotations

import asyncio
import io
import math
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import blurhash
from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from ..core import limits
from ..core.errors import ValidationError

#: Pillow format -> (MIME type, file extension)
FORMATS = {
    "JPEG": ("image/jpeg", "jpg"),
    "PNG": ("image/png", "png"),
    "WEBP": ("image/webp", "webp"),
    "GIF": ("image/gif", "gif"),
}
SUPPORTED_MIME_TYPES = [mime for mime, _ in FORMATS.values()]
SUPPORTED = "JPEG, PNG, WebP and GIF images"
#: what a stored image keeps of the decoder's ``info`` (never EXIF, XMP, comments)
_KEPT_INFO = ("transparency", "duration", "loop", "background")

ATTACHMENT, AVATAR, HEADER = "attachment", "avatar", "header"


def sniff(data: bytes) -> str | None:
    """The format of ``data`` by its first bytes (what the client said the
    type was is not trusted), or None."""
    if data[:3] == b"\xff\xd8\xff":
        return "JPEG"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "PNG"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "GIF"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


@dataclass(frozen=True)
class Probe:
    """What an image's header says, read before any pixel is decoded."""

    format: str
    width: int
    height: int
    frames: int

    @property
    def mime(self) -> str:
        return FORMATS[self.format][0]


def unsupported(what: str = "this file") -> ValidationError:
    return ValidationError(
        "file",
        f"{what} is not supported: only {SUPPORTED} can be uploaded "
        f"({', '.join(SUPPORTED_MIME_TYPES)}); no video or audio yet",
    )


def _open(data: bytes, fmt: str, strict: bool = True) -> Image.Image:
    """The image, lazily (the header only); Pillow's own size guard turned
    into an error (``strict``; else only its hard limit). ValidationError
    if it is not a readable image."""
    with warnings.catch_warnings():
        warnings.simplefilter("error" if strict else "ignore", Image.DecompressionBombWarning)
        try:
            return Image.open(io.BytesIO(data), formats=[fmt])
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise _too_many_pixels() from None
        except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError):
            raise ValidationError("file", f"is not a readable {fmt} image") from None


def _too_many_pixels(width: int = 0, height: int = 0) -> ValidationError:
    said = f"{width} x {height} = {width * height:,} pixels; " if width else ""
    return ValidationError(
        "file", f"the image is too large ({said}at most {limits.MEDIA_IMAGE_MATRIX_MAX:,} pixels)"
    )


def inspect(data: bytes) -> Probe:
    """The decompression-bomb guard and the type check: the format from the
    first bytes, the size and frames from the header, refused (422) before
    anything is decoded when they are over the bounds in limits.py."""
    if len(data) > limits.MEDIA_IMAGE_MAX_BYTES:
        raise ValidationError("file", f"is larger than {limits.MEDIA_IMAGE_MAX_BYTES} bytes")
    fmt = sniff(data)
    if fmt is None:
        raise unsupported()
    with _open(data, fmt, strict=False) as img:  # our bound, checked next, is lower
        width, height = img.size
        if width < 1 or height < 1:
            raise ValidationError("file", "the image has no pixels")
        if width * height > limits.MEDIA_IMAGE_MATRIX_MAX:
            raise _too_many_pixels(width, height)
        frames = 1
        if fmt == "GIF":
            try:
                frames = img.n_frames
            except (OSError, EOFError, ValueError, SyntaxError):
                raise ValidationError("file", "is not a readable GIF image") from None
            if frames > limits.MEDIA_GIF_FRAMES_MAX:
                raise ValidationError(
                    "file", f"the GIF has {frames} frames; at most {limits.MEDIA_GIF_FRAMES_MAX}"
                )
            if width * height * frames > limits.MEDIA_GIF_TOTAL_PIXELS_MAX:
                raise ValidationError(
                    "file",
                    "the GIF is too large (its frames hold more than "
                    f"{limits.MEDIA_GIF_TOTAL_PIXELS_MAX:,} pixels)",
                )
    return Probe(fmt, width, height, frames)


@dataclass(frozen=True)
class Output:
    """One file to store: its bytes and extension."""

    data: bytes
    ext: str

    @property
    def content_type(self) -> str:
        return {ext: mime for mime, ext in FORMATS.values()}[self.ext]


@dataclass(frozen=True)
class Processed:
    """What an upload becomes: ``files`` (for an attachment the original and
    its preview; for an avatar or header the image and its still), ``meta``
    as Mastodon's MediaAttachment shows it, and the blurhash."""

    files: list[Output]
    meta: dict = field(default_factory=dict)
    blurhash: str | None = None


def _size(img: Image.Image) -> dict:
    w, h = img.size
    return {"width": w, "height": h, "size": f"{w}x{h}", "aspect": round(w / h, 6)}


def _clean(img: Image.Image) -> Image.Image:
    """Keep only what the pixels need of the decoder's info."""
    img.info = {k: v for k, v in img.info.items() if k in _KEPT_INFO}
    return img


def _upright(img: Image.Image, bound: int | None) -> Image.Image:
    """The first frame decoded (a JPEG at a reduced scale when it will be
    scaled down anyway), the EXIF orientation applied to its pixels."""
    if bound is not None and img.format == "JPEG" and max(img.size) > bound:
        # libjpeg decodes at 1/2, 1/4 or 1/8 scale when the result still
        # covers the size asked for (the bound, in the image's own proportions)
        scale = bound / max(img.size)
        img.draft("RGB", (math.ceil(img.width * scale), math.ceil(img.height * scale)))
    img.load()
    turned = ImageOps.exif_transpose(img)
    return turned if turned is not None else img


def _encode(img: Image.Image, fmt: str, icc: bytes | None) -> Output:
    out = io.BytesIO()
    _clean(img)
    extra = {"icc_profile": icc} if icc else {}
    if fmt == "JPEG":
        if img.mode not in ("RGB", "L"):
            img = img.convert("RGB")
        img.save(out, "JPEG", quality=limits.MEDIA_QUALITY, **extra)
    elif fmt == "WEBP":
        if img.mode not in ("RGB", "RGBA"):
            img = img.convert("RGBA" if img.has_transparency_data else "RGB")
        img.save(out, "WEBP", quality=limits.MEDIA_QUALITY, **extra)
    elif fmt == "PNG":
        if img.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
            img = img.convert("RGBA")
        img.save(out, "PNG", **extra)
    else:
        img.save(out, "GIF")
    return Output(out.getvalue(), FORMATS[fmt][1])


def _scaled(img: Image.Image, bound: int) -> Image.Image:
    if max(img.size) <= bound:
        return img
    img = img.copy()
    img.thumbnail((bound, bound), Image.Resampling.LANCZOS, reducing_gap=2.0)
    return img


def _fit(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    return ImageOps.fit(img, size, Image.Resampling.LANCZOS)


def _gif(img: Image.Image, reshape) -> Output:
    """An animated GIF written anew frame by frame (``reshape`` applied to
    each), its timing and looping kept, nothing else."""
    frames, durations = [], []
    for frame in ImageSequence.Iterator(img):
        durations.append(frame.info.get("duration", 100))
        frames.append(reshape(frame.convert("RGBA")))
    out = io.BytesIO()
    frames[0].info = {}
    frames[0].save(
        out,
        "GIF",
        save_all=True,
        append_images=frames[1:],
        duration=durations,
        loop=img.info.get("loop", 0),
        disposal=2,
    )
    return Output(out.getvalue(), "gif")


def _blurhash(img: Image.Image) -> str:
    small = img.convert("RGB")
    small.thumbnail((limits.MEDIA_BLURHASH_SOURCE_SIDE, limits.MEDIA_BLURHASH_SOURCE_SIDE))
    w, h = small.size
    flat = small.tobytes()
    rows = [[list(flat[(y * w + x) * 3 : (y * w + x) * 3 + 3]) for x in range(w)] for y in range(h)]
    x_comp, y_comp = limits.MEDIA_BLURHASH_COMPONENTS
    return blurhash.encode(rows, components_x=x_comp, components_y=y_comp)


def process(data: bytes, probe: Probe, kind: str = ATTACHMENT) -> Processed:
    """The files, meta and blurhash of an upload whose header passed
    :func:`inspect`. ValidationError if its pixels cannot be read after all
    (a truncated file)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with _open(data, probe.format) as img:
                return _process(img, probe, kind)
    except ValidationError:
        raise
    except (
        OSError,
        SyntaxError,
        ValueError,
        EOFError,
        Image.DecompressionBombError,
        Image.DecompressionBombWarning,
    ):
        raise ValidationError(
            "file", f"the {probe.format} image could not be read (damaged or truncated)"
        ) from None


def _process(img: Image.Image, probe: Probe, kind: str) -> Processed:
    icc = img.info.get("icc_profile")
    animated = probe.format == "GIF" and probe.frames > 1
    if kind == ATTACHMENT:
        bound = limits.MEDIA_ORIGINAL_MAX_SIDE
        first = _upright(img, bound)
        original = _scaled(first, bound)
        small = _scaled(original, limits.MEDIA_SMALL_MAX_SIDE)
        if animated:
            scale = min(1.0, bound / max(probe.width, probe.height))
            size = (max(1, round(probe.width * scale)), max(1, round(probe.height * scale)))
            main = _gif(
                img, lambda f: f if f.size == size else f.resize(size, Image.Resampling.LANCZOS)
            )
        else:
            main = _encode(original.copy(), probe.format, icc)
        preview_format = "PNG" if probe.format == "GIF" else probe.format
        preview = _encode(small.copy(), preview_format, icc)
        meta = {"original": _size(original), "small": _size(small)}
        if animated:
            meta["original"]["frames"] = probe.frames
        return Processed([main, preview], meta, _blurhash(small))
    size = limits.AVATAR_SIZE if kind == AVATAR else limits.HEADER_SIZE
    first = _upright(img, max(size) * 2)
    still = _fit(first, size)
    if animated:
        main = _gif(img, lambda f: _fit(f, size))
        return Processed([main, _encode(still, "PNG", icc)], {"original": _size(still)})
    return Processed([_encode(still, probe.format, icc)], {"original": _size(still)})


# --- off the event loop ---------------------------------------------------------------
def _lower_priority() -> None:
    """Each processing thread runs at a lower priority than the event loop's
    (Linux sets it per thread), so uploads take the CPU the requests leave."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError):
        pass


_POOL = ThreadPoolExecutor(
    max_workers=limits.MEDIA_PROCESSING_THREADS,
    thread_name_prefix="media",
    initializer=_lower_priority,
)


async def run(fn, *args):
    """``fn(*args)`` on the processing threads."""
    return await asyncio.get_running_loop().run_in_executor(_POOL, fn, *args)
