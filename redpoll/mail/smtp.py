"""One message to the SMTP server the settings name, with aiosmtplib
(docs/decisions.md, "E-mail"): plain, STARTTLS (required, not merely tried)
or TLS from the first byte, and a login when one is set. What goes wrong is
sorted into :class:`Temporary` (no connection, a drop, a time-out, a 4xx
answer: worth another try later) and :class:`Permanent` (a 5xx answer: the
server refused this message for good)."""

from __future__ import annotations

from email.message import EmailMessage

import aiosmtplib

from ..core import limits
from ..core.settings import Settings


class Temporary(Exception):
    pass


class Permanent(Exception):
    pass


def _code_error(code: int, text: str) -> Exception:
    return (Permanent if code >= 500 else Temporary)(f"{code} {text}".strip())


async def deliver(settings: Settings, message: EmailMessage) -> None:
    """Send ``message`` (its From and To headers say who to whom)."""
    try:
        await aiosmtplib.send(
            message,
            hostname=settings.smtp_host,
            port=settings.smtp_port,
            username=settings.smtp_username,
            password=settings.smtp_password,
            use_tls=settings.smtp_security == "tls",
            start_tls=settings.smtp_security == "starttls",
            timeout=limits.SMTP_TIMEOUT_S,
        )
    except aiosmtplib.SMTPRecipientsRefused as exc:
        codes = [r.code for r in exc.recipients]
        worst = min(codes) if codes else 450  # any temporary refusal: try again
        raise _code_error(worst, "; ".join(r.message for r in exc.recipients)) from None
    except (aiosmtplib.SMTPConnectError, aiosmtplib.SMTPServerDisconnected) as exc:
        raise Temporary(str(exc) or type(exc).__name__) from None
    except aiosmtplib.SMTPResponseException as exc:
        raise _code_error(exc.code, exc.message) from None
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        raise Temporary(str(exc) or type(exc).__name__) from None


def describe(settings: Settings) -> str:
    """What the server does about e-mail, in one line for the start-up log."""
    if not settings.mail:
        return (
            "off (REDPOLL_SMTP_HOST is not set): no e-mail is sent, no account "
            "needs confirming its address, no password can be reset by e-mail"
        )
    login = f", as {settings.smtp_username}" if settings.smtp_username else ""
    return (
        f"on: SMTP {settings.smtp_host}:{settings.smtp_port} ({settings.smtp_security}{login}), "
        f"from {settings.smtp_from}; new accounts confirm their address"
    )
