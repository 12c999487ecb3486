"""The mails the server sends, each as plain text with a simple HTML
alternative, naming the server (its title) and its public URL."""

from __future__ import annotations

import html
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import urlsplit

from ..core import limits
from ..core.settings import Settings

#: A moderator's action, in words: (subject, what it means for the member)
ACTIONS = {
    "none": ("A warning from the moderators of {title}", "The moderators sent you a warning."),
    "disable": (
        "Your account on {title} was disabled",
        "The moderators disabled your account: you cannot sign in to it, and its "
        "apps and devices were signed out. Your posts and profile stay.",
    ),
    "sensitive": (
        "Your media on {title} will be marked sensitive",
        "The moderators decided that the media you post are marked sensitive from now on.",
    ),
    "silence": (
        "Your account on {title} was limited",
        "The moderators limited your account: only the people who follow you see your posts.",
    ),
    "suspend": (
        "Your account on {title} was suspended",
        "The moderators suspended your account: it and its posts are hidden, and "
        "you cannot use it any more.",
    ),
}


@dataclass(frozen=True, slots=True)
class Draft:
    subject: str
    #: paragraphs; a link is its own paragraph (made a link in the HTML)
    paragraphs: tuple[str, ...]
    link: str = ""
    quote: str = ""


def _hours(seconds: int) -> str:
    return f"{seconds // 86_400} days" if seconds >= 2 * 86_400 else f"{seconds // 3_600} hours"


def draft(settings: Settings, message: str, login: str, *, link: str = "", text: str = "") -> Draft:
    """What ``message`` says to @``login`` (``link``: the single-use link it
    carries; ``text``: what it quotes, e.g. the new address or the
    moderator's action and warning)."""
    title = settings.instance_title
    site = settings.public_url or ""
    who = f"@{login}"
    if message == "confirm":
        return Draft(
            f"Confirm your e-mail address for {title}",
            (
                f"Welcome to {title}, {who}! Follow this link to confirm your e-mail address:",
                f"The link works for {_hours(limits.CONFIRMATION_TTL_S)}, once. Until the "
                "address is confirmed, your account can sign in but not post or follow.",
                f"If you did not sign up at {site}, ignore this mail.",
            ),
            link,
        )
    if message == "change":
        return Draft(
            f"Confirm your new e-mail address for {title}",
            (
                f"The account {who} on {title} asked to use this address from now on. "
                "Follow this link to confirm it:",
                f"The link works for {_hours(limits.CONFIRMATION_TTL_S)}, once. Until then "
                "the account keeps its old address.",
                f"If you did not ask for this at {site}, ignore this mail.",
            ),
            link,
        )
    if message == "changing":
        return Draft(
            f"Your e-mail address on {title} is being changed",
            (
                f"The account {who} on {title} asked to change its e-mail address to "
                f"{text}. The change takes effect when the link sent there is followed.",
                "If you did not ask for this, someone may know your password: sign in at "
                f"{site}, change your password, and sign out the apps and devices you do "
                "not know (in Settings).",
            ),
        )
    if message == "reset":
        return Draft(
            f"Reset your password on {title}",
            (
                f"Someone (hopefully you) asked to reset the password of {who} on {title}. "
                "Follow this link to choose a new one:",
                f"The link works for {_hours(limits.PASSWORD_RESET_TTL_S)}, once. Setting a "
                "new password signs out every app and device signed in to the account.",
                "If you did not ask for this, ignore this mail: your password stays as it is.",
            ),
            link,
        )
    if message == "warning":
        action, _, warning = text.partition("\n")
        subject, meaning = ACTIONS.get(action, ACTIONS["none"])
        return Draft(
            subject.format(title=title),
            (f"Hello {who},", meaning, f"{title}: {site}"),
            quote=warning,
        )
    if message == "approved":
        return Draft(
            f"Your account on {title} was approved",
            (
                f"Hello {who}, the moderators of {title} approved your account. "
                "You can sign in now:",
            ),
            site + "/",
        )
    raise ValueError(f"unknown message {message!r}")


def _text(d: Draft) -> str:
    parts = [d.paragraphs[0]]
    if d.link:
        parts.append(d.link)
    if d.quote:
        parts.append("\n".join("> " + line for line in d.quote.splitlines()))
    parts += d.paragraphs[1:]
    return "\n\n".join(parts) + "\n"


def _html(d: Draft, title: str) -> str:
    e = html.escape
    parts = [f"<p>{e(d.paragraphs[0])}</p>"]
    if d.link:
        parts.append(f'<p><a href="{e(d.link)}">{e(d.link)}</a></p>')
    if d.quote:
        quoted = "<br>".join(e(line) for line in d.quote.splitlines())
        parts.append(f"<blockquote>{quoted}</blockquote>")
    parts += [f"<p>{e(p)}</p>" for p in d.paragraphs[1:]]
    return (
        f"<!DOCTYPE html><html><head><meta charset=utf-8><title>{e(d.subject)}</title></head>"
        f"<body><h1>{e(title)}</h1>{''.join(parts)}</body></html>"
    )


def build(settings: Settings, to: str, d: Draft) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = settings.smtp_from
    msg["To"] = to
    msg["Subject"] = d.subject
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain=urlsplit(settings.public_url or "").hostname or None)
    msg["Auto-Submitted"] = "auto-generated"
    msg.set_content(_text(d))
    msg.add_alternative(_html(d, settings.instance_title), subtype="html")
    return msg
