"""Remote HTML as Redpoll keeps it, twice: as plain text (:func:`html_to_text`:
paragraphs become blank lines, <br> a newline, links their text; what
search, filters, counts and the mentions' parsing read) and as the HTML a
status is shown with (:func:`sanitize`: Mastodon's allowed subset, with nh3,
docs/decisions.md "Remote HTML"), kept in the status record's ``html`` and
served as its ``content`` (render.entities)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import nh3

from ..core import limits

#: The elements Mastodon keeps of remote HTML (Sanitize::Config::MASTODON_STRICT);
#: every other tag goes and its text stays (a script's or style's goes whole).
TAGS = frozenset(
    {"p", "br", "span", "a", "del", "s", "pre", "blockquote", "code", "b", "strong", "u", "i"}
    | {"em", "ul", "ol", "li"}
)
#: Their attributes (a link's ``rel`` and ``target`` are set, never kept).
ATTRIBUTES = {
    "a": {"href", "class", "translate"},
    "span": {"class", "translate"},
    "ol": {"start", "reversed"},
    "li": {"value"},
}
#: The schemes a link may have (Mastodon's LINK_PROTOCOLS); a relative link,
#: or one of another scheme, loses its href.
LINK_SCHEMES = frozenset(
    {"http", "https", "dat", "dweb", "ipfs", "ipns", "ssb", "gopher", "xmpp", "magnet", "gemini"}
)
#: Classes kept: microformats (h-card, u-url...), mentions and hashtags, and
#: the link-shortening ones (Mastodon's CLASS_WHITELIST_TRANSFORMER).
_CLASS = re.compile(r"(?:h|p|u|dt|e)-[\w-]+|mention|hashtag|ellipsis|invisible")
_HEADING = re.compile(r"<(/?)h[1-6](?=[\s>/])", re.IGNORECASE)


def _attribute(tag: str, name: str, value: str) -> str | None:
    if name == "class":
        return " ".join(c for c in value.split() if _CLASS.fullmatch(c)) or None
    if name == "translate":
        return value if value in ("yes", "no") else None
    if name in ("start", "value"):
        return value if value.lstrip("-").isdigit() and len(value) < 10 else None
    return value


#: Elements whose content is no text (sanitize drops them whole too).
_UNSHOWN = {"script", "style", "template"}


_CLEANER = nh3.Cleaner(
    tags=set(TAGS),
    attributes=ATTRIBUTES,
    attribute_filter=_attribute,
    link_rel="nofollow noopener noreferrer",
    set_tag_attribute_values={"a": {"target": "_blank"}},
    url_schemes=set(LINK_SCHEMES),
    url_relative="deny",
    clean_content_tags=set(_UNSHOWN),
)


def sanitize(markup: str) -> str:
    """A remote status's HTML as it may be shown here (the module's rule;
    headings become paragraphs, as Mastodon makes them); "" when there is
    none, or when it is longer than limits.FED_NOTE_HTML_MAX_BYTES (then
    the status is shown from its text, as a local one)."""
    if not markup or len(markup.encode()) > limits.FED_NOTE_HTML_MAX_BYTES:
        return ""
    cleaned = _CLEANER.clean(_HEADING.sub(r"<\1p", markup)).strip()
    return cleaned if len(cleaned.encode()) <= limits.FED_NOTE_HTML_MAX_BYTES else ""


_BLOCKS = {"p", "div", "blockquote", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre"}


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.hidden = 0  # inside a script or style

    def handle_endtag(self, tag):
        if tag in _UNSHOWN and self.hidden:
            self.hidden -= 1

    def handle_starttag(self, tag, attrs):
        if tag in _UNSHOWN:
            self.hidden += 1
        elif tag == "br":
            self.out.append("\n")
        elif tag in _BLOCKS and self.out and not "".join(self.out).endswith("\n\n"):
            self.out.append("\n\n")

    def handle_data(self, data):
        if not self.hidden:
            self.out.append(data)


def html_to_text(markup: str) -> str:
    parser = _Text()
    parser.feed(markup or "")
    parser.close()
    text = "".join(parser.out)
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip()
