"""The web app in Debian's chromium (Playwright): a real ``redpoll serve`` for
the browser tests, people signed in through the sign-in page, and waits on
what a page shows."""

from __future__ import annotations

import os
import re
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import redis
from playwright.sync_api import Page, expect, sync_playwright

from redpoll.api.process import ServeProcess
from redpoll.storage.server import EmbeddedCluster
from support.mastodon import serve_env

CHROMIUM = "/usr/bin/chromium"


FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


PASSWORD = "correct horse battery"

#: where the browser tests keep their screenshots (look at them)
SHOTS = Path(os.environ.get("REDPOLL_SHOTS", "/tmp/redpoll-shots"))


def shot(person, name: str, prefix: str = "") -> None:
    """A full-page screenshot of ``person``'s page: ``{prefix}{name}-{width}.png``."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    person.page.screenshot(path=str(SHOTS / f"{prefix}{name}-{person.width}.png"), full_page=True)


DESKTOP = {"width": 1280, "height": 900}


PHONE = {"width": 360, "height": 740}


def clean_database(server) -> None:
    """Empty the worker's database (every node of a cluster). The browser
    tests' modules share one database per worker; each module's ``web``
    starts from this, before its ``redpoll serve`` (which makes what a
    fresh database needs), so no module sees another's registration mode,
    blocks or accounts. FLUSHALL of a test database takes milliseconds."""
    _, _, handle = server
    nodes = handle.nodes if isinstance(handle, EmbeddedCluster) else [handle]
    for node in nodes:
        with redis.Redis(port=node.port) as r:
            r.flushall()


@contextmanager
def fresh_serve(server, env: dict | None = None, args: list[str] | None = None):
    """A ``redpoll serve`` (:func:`support.mastodon.serve_env` and ``env``)
    on a clean database (:func:`clean_database`), checked still running at
    the end: what every browser-test module's ``web`` is."""
    clean_database(server)
    with ServeProcess({**serve_env(server), **(env or {})}, args=args) as srv:
        yield srv
        assert srv.process.poll() is None, srv.logs()[-3000:]


@pytest.fixture(scope="module")
def web(server):
    with fresh_serve(server) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"the browser tests need Debian's chromium at {CHROMIUM}: apt-get install chromium",
            pytrace=False,
        )
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


class Person:
    """One browser context (its own storage) and page, watched for errors."""

    def __init__(self, browser, web, viewport: dict, others: tuple[str, ...] = (), **context):
        """``others``: origins this page may fetch from too (another
        server's media); ``context``: more options of the browser context."""
        self.web = web
        self.width = viewport["width"]
        self.context = browser.new_context(viewport=viewport, base_url=web.url, **context)
        self.context.set_default_timeout(15_000)
        self.page: Page = self.context.new_page()
        self.problems: list[str] = []
        self.requests: list[tuple[str, str, str | None]] = []
        self.idempotency_keys: list[str | None] = []
        origin = web.url.rstrip("/")
        ws_origin = origin.replace("http://", "ws://", 1)

        def on_console(msg):
            if msg.type == "error":
                self.problems.append(f"console: {msg.text} {msg.location.get('url', '')}")

        def on_request(req):
            self.requests.append((req.method, req.url, req.post_data))
            if req.method == "POST" and req.url.endswith("/api/v1/statuses"):
                self.idempotency_keys.append(req.headers.get("idempotency-key"))
            if not (
                req.url.startswith(origin + "/")
                or req.url.startswith("data:")
                or any(req.url.startswith(o.rstrip("/") + "/") for o in others)
            ):
                self.problems.append(f"request to another origin: {req.url}")

        def on_socket(ws):
            if not ws.url.startswith(ws_origin + "/"):
                self.problems.append(f"WebSocket to another origin: {ws.url}")

        self.page.on("console", on_console)
        self.page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        self.page.on("request", on_request)
        self.page.on("websocket", on_socket)
        self.name = ""

    def sign_up(self, prefix: str) -> str:
        self.name = f"{prefix}{uuid.uuid4().hex[:8]}"
        page = self.page
        page.goto("/")
        page.get_by_role("link", name="Create an account").click()
        page.get_by_label("Username").fill(self.name)
        page.get_by_label("E-mail").fill(f"{self.name}@example.com")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("checkbox", name=re.compile("I agree")).check()
        page.get_by_role("button", name="Sign up").click()
        expect(page.get_by_role("textbox", name="Compose")).to_be_visible()
        return self.name

    def expected_error(self, status: int, path: str) -> None:
        """The browser logs a failed request as a console error: take out the
        one this test caused on purpose (and fail if it did not happen)."""
        line = f"status of {status} "
        found = [p for p in self.problems if line in p and p.split("?")[0].endswith(path)]
        assert found, (status, path, self.problems)
        self.problems.remove(found[0])

    def token(self) -> str:
        return self.page.evaluate("JSON.parse(localStorage.getItem('redpoll.session')).token")

    def api(self, method: str, path: str, **kw) -> httpx.Response:
        return httpx.request(
            method, self.web.url + path, headers={"Authorization": "Bearer " + self.token()}, **kw
        )


@pytest.fixture
def people(browser, web):
    made: list[Person] = []

    def make(viewport: dict = DESKTOP, **context) -> Person:
        made.append(Person(browser, web, viewport, **context))
        return made[-1]

    yield make
    for person in made:
        if not person.page.is_closed() and person.page.url.startswith(web.url):
            wide = person.page.evaluate("document.documentElement.scrollWidth")
            if wide > person.width:  # the last page each person saw fits their screen
                person.problems.append(
                    f"{person.page.url} is {wide}px wide on a {person.width}px screen"
                )
        person.context.close()
    problems = [p for person in made for p in person.problems]
    assert not problems, "\n".join(problems)


def counted(word: str) -> re.Pattern:
    """The accessible name of a control that shows a count: its word, then
    the count when there is one ("Favourite 3", "Notifications 2 unread")."""
    return re.compile(rf"^{word}( (\d+|40\+)( unread)?)?$")


def status_in(page: Page, text: str):
    return page.locator("article", has_text=text)


def me(person) -> dict:
    return person.api("GET", "/api/v1/accounts/verify_credentials").json()


def until(check, seconds: float = 15.0):
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, "never held"
        time.sleep(0.2)
    return found


def page_until(page, js: str, timeout: float = 15.0) -> None:
    """Wait page_until ``js`` (an expression) is true in the page: polled with
    evaluate, as the app's CSP refuses the string evaluation
    ``wait_for_function`` falls back on."""
    end = time.monotonic() + timeout
    while not page.evaluate(js):
        if time.monotonic() > end:
            raise AssertionError(f"still false after {timeout} s: {js}")
        time.sleep(0.05)
