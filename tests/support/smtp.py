"""A real SMTP server for the mail tests (aiosmtpd on loopback, a free
port, in a thread of its own): it keeps every message it accepts, answers
550 (permanent) for the addresses in ``refuse`` and 451 (temporary) for
those in ``defer``, and can be stopped and started again on its port (a
server down and back). Helpers read a message's link and wait for mail."""

from __future__ import annotations

import re
import socket
import threading
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import getaddresses

import pytest
from aiosmtpd.controller import Controller

#: Bound on every wait (the machine is shared).
WAIT_S = 60.0
LINK = re.compile(r"https?://\S+")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Mailbox:
    """The aiosmtpd handler: what arrived, and what to refuse."""

    def __init__(self):
        self.messages: list[EmailMessage] = []
        self.refuse: set[str] = set()
        self.defer: set[str] = set()
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.lower() in self.refuse:
            return "550 5.1.1 No such mailbox here"
        if address.lower() in self.defer:
            return "451 4.3.0 Try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        msg = message_from_bytes(
            envelope.original_content or envelope.content, policy=policy.default
        )
        with self.lock:
            self.messages.append(msg)  # type: ignore[arg-type]
        return "250 Message accepted"


class SmtpServer:
    def __init__(self):
        self.port = free_port()
        self.box = Mailbox()
        self.controller: Controller | None = None

    def start(self) -> SmtpServer:
        self.controller = Controller(self.box, hostname="127.0.0.1", port=self.port)
        self.controller.start()
        return self

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    def env(self) -> dict[str, str]:
        """What ``redpoll serve`` needs to send through this server."""
        return {
            "REDPOLL_SMTP_HOST": "127.0.0.1",
            "REDPOLL_SMTP_PORT": str(self.port),
            "REDPOLL_SMTP_SECURITY": "none",
            "REDPOLL_SMTP_FROM": "Redpoll <notifications@redpoll.test>",
        }

    def to(self, address: str) -> list[EmailMessage]:
        with self.box.lock:
            return [
                m
                for m in self.box.messages
                if address.lower() in (a.lower() for _, a in getaddresses([str(m["To"])]))
            ]

    def wait_for(self, address: str, count: int = 1, timeout: float = WAIT_S) -> EmailMessage:
        """The ``count``-th message to ``address``, once it arrived."""
        deadline = time.monotonic() + timeout
        while len(found := self.to(address)) < count:
            assert time.monotonic() < deadline, f"no mail #{count} to {address} came"
            time.sleep(0.05)
        return found[count - 1]


def text_of(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    assert part is not None, msg
    return part.get_content()


def html_of(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("html",))
    assert part is not None, msg
    return part.get_content()


def link_in(msg: EmailMessage) -> str:
    found = LINK.findall(text_of(msg))
    links = [u for u in found if "token=" in u]
    assert len(links) == 1, text_of(msg)
    return links[0]


def token_of(link: str) -> str:
    return link.split("token=", 1)[1]


@pytest.fixture(scope="module")
def smtp():
    server = SmtpServer().start()
    yield server
    server.stop()
