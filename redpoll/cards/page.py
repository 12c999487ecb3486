"""What a linked page says of itself, read with the standard library's
HTML parser (docs/decisions.md): OpenGraph properties (``og:*``,
``article:*``), Twitter's (``twitter:*``) and plain meta names as
fallbacks, the ``<title>`` and ``<html lang>``. Every value is plain text
(entities unescaped, tags dropped, spaces folded), bounded in length."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

from ..core import limits

_SPACES = re.compile(r"\s+")
_TAGS = re.compile(r"<[^>]*>")


def plain(value: str, most: int) -> str:
    """``value`` as plain text of at most ``most`` characters (entities are
    unescaped by the parser already; what looks like a tag is dropped)."""
    text = _SPACES.sub(" ", _TAGS.sub("", value)).strip()
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, str] = {}
        self.lang = ""
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "html" and not self.lang:
            self.lang = a.get("lang", "")
        elif tag == "meta":
            name = (a.get("property") or a.get("name") or "").strip().lower()
            if name and "content" in a and name not in self.meta:
                self.meta[name] = a["content"]
        elif tag == "title" and not self.title:
            self._in_title = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


@dataclass(frozen=True)
class Page:
    """What a page says of itself, for its card (plain text, bounded)."""

    url: str
    title: str
    description: str = ""
    image: str = ""
    image_width: int = 0
    image_height: int = 0
    image_description: str = ""
    provider_name: str = ""
    author_name: str = ""
    author_url: str = ""
    language: str = ""
    published_at: str = ""


def _int(value: str) -> int:
    try:
        return max(0, min(int(value.strip()), 100_000))
    except ValueError:
        return 0


def _web(url: str, base: str) -> str:
    """``url`` made absolute against ``base``, if it is an http(s) URL of
    bounded length; else ''."""
    full = urljoin(base, url.strip()) if url.strip() else ""
    parts = urlsplit(full)
    ok = (
        parts.scheme in ("http", "https")
        and parts.hostname
        and len(full) <= limits.CARD_URL_MAX_CHARS
    )
    return full if ok else ""


_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)


def decoded(body: bytes) -> str:
    """A page's text: in the charset its ``<meta>`` names (in its first
    2 KB), else UTF-8; what does not decode is replaced."""
    found = _CHARSET.search(body[:2048])
    try:
        return body.decode(found.group(1).decode() if found else "utf-8", "replace")
    except LookupError:
        return body.decode("utf-8", "replace")


def read(html: str, url: str) -> Page | None:
    """The page at ``url`` of text ``html``; None when it has no title (no card)."""
    reader = _Reader()
    try:
        reader.feed(html)
        reader.close()
    except (AssertionError, ValueError):  # (a page the parser gives up on: what it read)
        pass
    m = reader.meta

    def first(*names: str, most: int = limits.CARD_NAME_MAX_CHARS) -> str:
        for n in names:
            if m.get(n, "").strip():
                return plain(m[n], most)
        return ""

    title = first("og:title", "twitter:title", most=limits.CARD_TITLE_MAX_CHARS) or plain(
        reader.title, limits.CARD_TITLE_MAX_CHARS
    )
    if not title:
        return None
    canonical = _web(m.get("og:url", ""), url)
    # (a page naming another site as its own is shown at the URL linked)
    if not canonical or urlsplit(canonical).hostname != urlsplit(url).hostname:
        canonical = url
    author_url = _web(m.get("article:author", ""), url)
    lang = plain(reader.lang or m.get("og:locale", ""), 16).replace("_", "-")
    return Page(
        url=canonical,
        title=title,
        description=first(
            "og:description",
            "twitter:description",
            "description",
            most=limits.CARD_DESCRIPTION_MAX_CHARS,
        ),
        image=_web(m.get("og:image") or m.get("og:image:url") or m.get("twitter:image", ""), url),
        image_width=_int(m.get("og:image:width", "")),
        image_height=_int(m.get("og:image:height", "")),
        image_description=first(
            "og:image:alt", "twitter:image:alt", most=limits.CARD_DESCRIPTION_MAX_CHARS
        ),
        provider_name=first("og:site_name", "application-name"),
        author_name=first("author", "twitter:creator")
        or (
            plain(m["article:author"], limits.CARD_NAME_MAX_CHARS)
            if m.get("article:author") and not author_url
            else ""
        ),
        author_url=author_url,
        language=lang.split("-")[0].lower()
        if re.fullmatch(r"[A-Za-z]{2,3}([-_][A-Za-z0-9]+)*", lang)
        else "",
        published_at=plain(m.get("article:published_time", ""), 40),
    )
