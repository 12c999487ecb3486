"""Plain text as HTML, the one way every renderer (the Mastodon entities,
the ActivityPub documents) turns a status's or a bio's text into markup."""

from __future__ import annotations

import html


def html_text(text: str) -> str:
    """Plain text as Mastodon formats it: escaped, blank lines split
    paragraphs, single newlines become <br />."""
    paragraphs = [p for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return (
        "".join(
            "<p>" + html.escape(p, quote=True).replace("\n", "<br />") + "</p>" for p in paragraphs
        )
        or "<p></p>"
    )
