"""Remote HTML as the plain text Redpoll keeps: paragraphs become blank
lines, <br> a newline, links their text, every other tag dropped. Nothing of
a peer's markup survives (a link shortened into spans, as Mastodon
sends it, reads as its whole URL again), so nothing of it needs sanitizing later: statuses
are rendered from text (render.entities.html_text) like local ones."""

from __future__ import annotations

from html.parser import HTMLParser

_BLOCKS = {"p", "div", "blockquote", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre"}


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "br":
            self.out.append("\n")
        elif tag in _BLOCKS and self.out and not "".join(self.out).endswith("\n\n"):
            self.out.append("\n\n")

    def handle_data(self, data):
        self.out.append(data)


def html_to_text(markup: str) -> str:
    parser = _Text()
    parser.feed(markup or "")
    parser.close()
    text = "".join(parser.out)
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip()
