"""Draws the app's PNG icons and ``favicon.ico`` into ``static/`` (run once,
``python -m redpoll.web.icons``; the files are committed, nothing draws them
at run time): the logo of ``static/icon.svg``, a red disc with a white dot,
on a transparent ground (``icon-192.png``, ``icon-512.png``), full bleed on
red for the maskable icon (the dot inside the middle 40 %, the safe zone
of a mask) and for ``apple-touch-icon.png`` (iOS rounds its corners)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

RED = (200, 16, 46, 255)
WHITE = (255, 255, 255, 255)
STATIC = Path(__file__).with_name("static")
SCALE = 4  # drawn larger, then scaled down: smooth edges


def logo(size: int, *, full_bleed: bool) -> Image.Image:
    big = size * SCALE
    img = Image.new("RGBA", (big, big), RED if full_bleed else (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    if full_bleed:
        r, cy = big * 0.2, big * 0.46  # the dot, inside the maskable safe zone
    else:
        draw.ellipse([big * 2 / 32, big * 2 / 32, big * 30 / 32, big * 30 / 32], fill=RED)
        r, cy = big * 5 / 32, big * 13 / 32
    draw.ellipse([big / 2 - r, cy - r, big / 2 + r, cy + r], fill=WHITE)
    return img.resize((size, size), Image.Resampling.LANCZOS)


def main() -> None:
    for size in (192, 512):
        logo(size, full_bleed=False).save(STATIC / f"icon-{size}.png", optimize=True)
    logo(512, full_bleed=True).save(STATIC / "icon-maskable-512.png", optimize=True)
    logo(180, full_bleed=True).convert("RGB").save(STATIC / "apple-touch-icon.png", optimize=True)
    logo(48, full_bleed=False).save(STATIC / "favicon.ico", sizes=[(16, 16), (32, 32), (48, 48)])


if __name__ == "__main__":
    main()
