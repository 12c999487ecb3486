"""What the inboxes read before any signature is checked, on a real
``redpoll serve``: a body over limits.FED_INBOX_MAX_BYTES is refused (413)
as soon as it is declared or, chunked, as soon as it passes the limit;
JSON nesting deeper than limits.JSON_MAX_DEPTH is refused (400) before it
is parsed, in the inboxes and the REST API alike."""

from __future__ import annotations

import select
import socket

import httpx
import pytest
from support.federation import Instance  # noqa: F401

from redpoll.core import limits
from redpoll.federation import signing

pytestmark = pytest.mark.timeout(120)
PAIR = signing.KeyPair.generate()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    one = Instance(tmp_path_factory.mktemp("bodies"), "a")
    with one.proc:
        yield one


def _answer(sock: socket.socket, wait: float = 10.0) -> bytes:
    """What the server answered on ``sock`` (its status line and headers)."""
    sock.settimeout(wait)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            got = sock.recv(65536)
            if not got:
                break
            data += got
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def _head(server: Instance, path: str, *lines: str) -> bytes:
    return "\r\n".join(
        [
            f"POST {path} HTTP/1.1",
            f"Host: {server.host}",
            "Content-Type: application/activity+json",
            *lines,
            "",
            "",
        ]
    ).encode()


@pytest.mark.parametrize("path", ["/inbox", "/users/nobody/inbox"])
def test_a_declared_body_over_the_limit_is_refused_before_it_is_sent(server, path):
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(_head(server, path, f"Content-Length: {64 * 1024 * 1024}"))
        answer = _answer(sock)  # not a byte of the body sent
    assert answer.startswith(b"HTTP/1.1 413"), answer


def test_a_chunked_body_is_refused_once_it_passes_the_limit(server):
    """The body never ends (no last chunk is sent): only a server that stops
    reading once past the limit answers at all."""
    chunk = b"x" * 16_384
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(_head(server, "/inbox", "Transfer-Encoding: chunked"))
        sock.settimeout(5)
        try:
            while sent < 16 * limits.FED_INBOX_MAX_BYTES:
                if select.select([sock], [], [], 0)[0]:
                    break  # answered
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
        except (TimeoutError, BrokenPipeError, ConnectionResetError):
            pass  # it stopped reading
        answer = _answer(sock)
    assert answer.startswith(b"HTTP/1.1 413"), (answer, sent)


def test_a_body_at_the_limit_is_still_read(server):
    body = b'{"type":"Follow","pad":"' + b"x" * (limits.FED_INBOX_MAX_BYTES - 40) + b'"}'
    answer = httpx.post(
        f"{server.url}/inbox", content=body, headers={"content-type": "application/activity+json"}
    )
    assert answer.status_code == 401  # read whole, then refused for its missing signature


def test_json_nested_too_deep_is_refused_cleanly_by_the_inbox(server):
    body = b"[" * 195_000
    url = f"{server.url}/inbox"
    headers = signing.sign(
        PAIR,
        "http://127.0.0.1:9/users/x#main-key",
        "POST",
        url,
        body,
        {"content-type": "application/activity+json"},
    )
    answer = httpx.post(url, content=body, headers=headers)
    assert answer.status_code == 400, answer.text
    assert "deeper than" in answer.json()["error"]
    nested = (
        b'{"type":"Note","a":'
        + b"[" * (limits.JSON_MAX_DEPTH + 1)
        + b"]" * (limits.JSON_MAX_DEPTH + 1)
        + b"}"
    )
    answer = httpx.post(
        url,
        content=nested,
        headers=signing.sign(PAIR, "http://127.0.0.1:9/users/x#main-key", "POST", url, nested),
    )
    assert answer.status_code == 400 and "deeper than" in answer.json()["error"]
    assert "Traceback" not in server.proc.logs() and "RecursionError" not in server.proc.logs()


def test_json_nested_too_deep_is_refused_cleanly_by_the_rest_api(server):
    for depth in (limits.JSON_MAX_DEPTH + 1, 60_000):
        body = (
            b'{"client_name":"x","redirect_uris":"urn:ietf:wg:oauth:2.0:oob","x":'
            + b"[" * depth
            + b"]" * depth
            + b"}"
        )
        answer = httpx.post(
            f"{server.url}/api/v1/apps",
            content=body[: limits.API_MAX_BODY_BYTES],
            headers={"content-type": "application/json"},
        )
        assert answer.status_code == 400, answer.text
        assert "deeper than" in answer.json()["error"]
    fine = httpx.post(
        f"{server.url}/api/v1/apps",
        json={
            "client_name": "x",
            "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
            "x": [[{"y": ['[[[["]]']}]],
        },
    )
    assert fine.status_code == 200, fine.text
