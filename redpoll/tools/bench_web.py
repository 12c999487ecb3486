"""``redpoll bench --web``: the web app over an emulated slow link, and the
API answers' compression levels compared.

It starts its own embedded Valkey and ``redpoll serve`` (rate limits
off), and drives Debian's chromium (``/usr/bin/chromium``, or
``REDPOLL_CHROMIUM``) through Playwright, which it imports only when used
(the tools extra has it).

**Fast 3G** (:func:`run_web`): one person signs up in the browser and
follows another who has written ``posts`` statuses; then, in a fresh
browser context (an empty HTTP cache, the session in localStorage) with
the network emulated through CDP ``Network.emulateNetworkConditions`` at
:data:`FAST_3G` (1.6 Mbps down, 750 kbps up, 150 ms round trip), the time
from the navigation's start to the first post in the DOM: on the first
navigation (cold cache) and on a reload (warm cache), each the median of
``rounds`` fresh contexts. The page records the moment itself (a
MutationObserver added before any of the app's scripts run, read against
``performance.timeOrigin``), so the figure has no polling in it. Also: the
bytes on the wire of the cold load (``Network.loadingFinished``'s
``encodedDataLength``, headers included) and the requests before the first
post.

**Compression** (:func:`compression_figures`): the reader's home and
notifications of 20, as served, compressed by each of :data:`CODECS`: bytes
and CPU µs per answer (docs/decisions.md, "API answers compressed").

    redpoll bench --no-engine --web

(The screenshots of docs/webapp.md are made by docs/screenshots/make.py.)
"""

from __future__ import annotations

import gzip
import os
import random
import re
import statistics
import tempfile
import time
import uuid
from typing import Any

import brotli
import httpx

from ..api.process import ServeProcess
from ..storage.server import EmbeddedServer

CHROMIUM = os.environ.get("REDPOLL_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"]
PASSWORD = "correct horse battery"
RATE_OFF = "1000000000/60"

#: Chrome DevTools' "Fast 3G" preset as the issue gives it (bytes per second)
FAST_3G = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1_600_000 / 8,
    "uploadThroughput": 750_000 / 8,
}

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}

#: added to every page before its scripts: the first <article> (a post) in
#: the DOM, in ms since the navigation's start
FIRST_POST = """
(() => {
  const mark = () => {
    if (window.__firstPost === undefined && document.querySelector('article')) {
      window.__firstPost = performance.now();
      return true;
    }
    return false;
  };
  const watch = new MutationObserver(() => { if (mark()) watch.disconnect(); });
  watch.observe(document, { childList: true, subtree: true });
})();
"""


class Site:
    """An embedded Valkey and a ``redpoll serve`` on it, for the browser."""

    def __init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="redpoll-bench-web-")
        self.embedded = EmbeddedServer(self.tmp.name + "/data")
        self.srv: ServeProcess | None = None

    def __enter__(self) -> Site:
        self.embedded.start()
        env = {
            "REDIS_URL": self.embedded.url,
            "REDPOLL_CLUSTER": "0",
            **{
                f"REDPOLL_RATE_{k}": RATE_OFF
                for k in ("TOKEN", "IP", "SIGNUP", "LOGIN", "APPS", "IP_TOKENS", "LOGIN_ACCOUNT")
            },
        }
        self.srv = ServeProcess(env, ["--no-access-log", "--log-level", "warning"])
        self.srv.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.srv is not None:
            self.srv.stop()
        self.embedded.stop()
        self.tmp.cleanup()

    @property
    def url(self) -> str:
        assert self.srv is not None
        return self.srv.url


def sign_up(page, prefix: str) -> tuple[str, str]:
    """A new account made through the sign-up page: (its name, its token)."""
    name = f"{prefix}{uuid.uuid4().hex[:6]}"
    page.goto("/")
    page.get_by_role("link", name="Create an account").click()
    page.get_by_label("Username").fill(name)
    page.get_by_label("E-mail").fill(f"{name}@example.com")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("checkbox", name=re.compile("I agree")).check()
    page.get_by_role("button", name="Sign up").click()
    page.get_by_role("textbox", name="Compose").wait_for()
    token = page.evaluate("JSON.parse(localStorage.getItem('redpoll.session')).token")
    return name, token


class Api:
    def __init__(self, base: str, token: str):
        self.http = httpx.Client(base_url=base, headers={"Authorization": "Bearer " + token})

    def __call__(self, method: str, path: str, **kw) -> Any:
        r = self.http.request(method, path, **kw)
        r.raise_for_status()
        return r.json()


#: words the seeded posts are drawn from (varied, so that compression is
#: measured on text that repeats about as much as people's posts do)
WORDS = (
    "morning light estuary redpolls back alder trees counted eleven feeder two ringed notes "
    "survey follow tide low mud flats curlew whimbrel heard before seen wind north-east cold "
    "coffee flask scope tripod hide path flooded again council says spring repairs maybe "
    "photo blurry sorry still the first siskin of the year singing from a larch near car park "
    "anyone know whether mealy or lesser rump pale streaked flanks bill tiny yellow ringing "
    "group meets Saturday nine sharp bring gloves tea cake volunteers welcome new members "
    "report sent county recorder thanks everyone who came out today great numbers kestrel "
    "hovering over dunes sparrowhawk took a starling right in front of us dramatic minute"
).split()


def _text(i: int) -> str:
    pick = random.Random(i)
    words = [pick.choice(WORDS) for _ in range(pick.randint(8, 45))]
    if i % 4 == 0:
        words.append(f"https://birds.example/{pick.randrange(10**6)}/sightings?day={i}")
    if i % 3 == 0:
        words.append(f"#{pick.choice(WORDS).replace('-', '')}")
    return " ".join(words).capitalize() + pick.choice((".", "!", "?", " :)"))


def seed(site: Site, browser, posts: int) -> dict[str, Any]:
    """Two people: ``reader`` (whose session the measured pages use) follows
    ``writer``, who wrote ``posts`` statuses, some with replies, favourites
    and boosts from the reader, so that home and notifications are full."""
    out: dict[str, Any] = {}
    for role in ("writer", "reader"):
        ctx = browser.new_context(viewport=DESKTOP, base_url=site.url)
        page = ctx.new_page()
        name, token = sign_up(page, role[:1])
        out[role] = {"name": name, "token": token, "state": ctx.storage_state()}
        ctx.close()
    writer = Api(site.url, out["writer"]["token"])
    reader = Api(site.url, out["reader"]["token"])
    wid = writer("GET", "/api/v1/accounts/verify_credentials")["id"]
    reader("POST", f"/api/v1/accounts/{wid}/follow")
    rid = reader("GET", "/api/v1/accounts/verify_credentials")["id"]
    writer("POST", f"/api/v1/accounts/{rid}/follow")
    writer(
        "PATCH",
        "/api/v1/accounts/update_credentials",
        data={"display_name": "Wren Writer", "note": "Counting birds on the estuary."},
    )
    ids = []
    for i in range(posts):
        ids.append(writer("POST", "/api/v1/statuses", data={"status": _text(i)})["id"])
    thread = ids[-1]
    reply = reader(
        "POST",
        "/api/v1/statuses",
        data={
            "status": f"@{out['writer']['name']} Eleven! Were any of them mealy?",
            "in_reply_to_id": thread,
        },
    )
    writer(
        "POST",
        "/api/v1/statuses",
        data={
            "status": f"@{out['reader']['name']} One, I think: paler rump.",
            "in_reply_to_id": reply["id"],
        },
    )
    for sid in ids[-6:]:
        reader("POST", f"/api/v1/statuses/{sid}/favourite")
    mine = [
        reader("POST", "/api/v1/statuses", data={"status": _text(100 + i)})["id"] for i in range(4)
    ]
    for sid in mine:
        writer("POST", f"/api/v1/statuses/{sid}/favourite")
        writer("POST", f"/api/v1/statuses/{sid}/reblog")
    out["thread"] = thread
    deadline = time.monotonic() + 30  # fan-out and notifications are jobs: wait for them
    while len(reader("GET", "/api/v1/timelines/home", params={"limit": 40})) < min(posts, 40):
        assert time.monotonic() < deadline, "home never filled"
        time.sleep(0.2)
    while len(reader("GET", "/api/v1/notifications", params={"limit": 20})) < 8:
        assert time.monotonic() < deadline, "notifications never came"
        time.sleep(0.2)
    return out


def _launch(pw):
    if not os.access(CHROMIUM, os.X_OK):
        raise RuntimeError(f"the web bench needs chromium at {CHROMIUM}: apt-get install chromium")
    return pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)


def _first_post(page, timeout: float = 30.0) -> float:
    end = time.monotonic() + timeout
    while (ms := page.evaluate("window.__firstPost")) is None:
        if time.monotonic() > end:
            raise RuntimeError("no post showed")
        time.sleep(0.02)
    return float(ms)


def _measure(browser, site: Site, state: dict, viewport: dict) -> dict[str, Any]:
    """One cold navigation to ``/`` and one reload under Fast 3G."""
    ctx = browser.new_context(viewport=viewport, base_url=site.url, storage_state=state)
    ctx.add_init_script(FIRST_POST)
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", FAST_3G)
    wire: dict[str, int] = {"bytes": 0}
    urls: dict[str, str] = {}
    before: list[str] = []
    cdp.on(
        "Network.requestWillBeSent", lambda e: urls.__setitem__(e["requestId"], e["request"]["url"])
    )

    def done(e):
        wire["bytes"] += int(e.get("encodedDataLength", 0))

    cdp.on("Network.loadingFinished", done)
    page.goto("/", wait_until="commit")
    cold = _first_post(page)
    before = list(urls.values())
    page.wait_for_load_state("networkidle")
    cold_bytes = wire["bytes"]
    page.reload(wait_until="commit")
    warm = _first_post(page)
    ctx.close()
    return {"navigation_ms": cold, "reload_ms": warm, "bytes": cold_bytes, "requests": before}


def run_web(posts: int = 20, rounds: int = 3, say=lambda msg: None) -> dict[str, Any]:
    """The Fast 3G figures (see the module), phone size."""
    from playwright.sync_api import sync_playwright

    with Site() as site, sync_playwright() as pw:
        browser = _launch(pw)
        say("web: seeding through the sign-up page and the API ...")
        people = seed(site, browser, posts)
        runs = []
        for i in range(rounds + 1):  # the first round warms the server's kept bodies
            runs.append(_measure(browser, site, people["reader"]["state"], PHONE))
            say(
                f"web: round {i}: navigation {runs[-1]['navigation_ms']:.0f} ms, "
                f"reload {runs[-1]['reload_ms']:.0f} ms, {runs[-1]['bytes']:,} bytes"
            )
        browser.close()
        say("web: the API answers' compression ...")
        rows = compression_figures(answers(site, people["reader"]["token"]))
    kept = runs[1:]
    origin = site.url.rstrip("/")
    return {
        "posts": posts,
        "rounds": rounds,
        "link": "Fast 3G: 1.6 Mbps down, 750 kbps up, 150 ms RTT",
        "navigation_ms": round(statistics.median(r["navigation_ms"] for r in kept)),
        "reload_ms": round(statistics.median(r["reload_ms"] for r in kept)),
        "first_load_bytes": round(statistics.median(r["bytes"] for r in kept)),
        "requests_before_first_post": [u.replace(origin, "") for u in kept[-1]["requests"]],
        "compression": rows,
    }


def format_web(res: dict[str, Any]) -> str:
    lines = [
        f"web app on {res['link']} (median of {res['rounds']}, phone 390x844, home of "
        f"{res['posts']} posts):",
        f"  first post after navigation   {res['navigation_ms']:>8,} ms   (goal 2,000)",
        f"  first post after reload       {res['reload_ms']:>8,} ms   (goal 1,000)",
        f"  first load on the wire        {res['first_load_bytes']:>8,} bytes (goal 150 KB)",
        f"  requests before the first post: {len(res['requests_before_first_post'])}",
    ]
    lines += [f"    {u}" for u in res["requests_before_first_post"]]
    lines.append("API answers compressed (CPU per answer, this machine):")
    lines.append(format_compression(res["compression"]))
    return "\n".join(lines)


#: the codecs the API's per-answer compression was chosen among
CODECS = (("gzip", 1), ("gzip", 4), ("gzip", 6), ("br", 1), ("br", 4))


def compression_figures(bodies: dict[str, bytes], reps: int = 200) -> list[dict[str, Any]]:
    """For each body (an API answer as served) and each of :data:`CODECS`:
    its compressed size and the CPU µs one compression takes (the mean of
    ``reps``, process CPU time)."""
    out = []
    for name, body in bodies.items():
        for codec, level in CODECS:
            if codec == "gzip":

                def pack(b=body, lv=level):
                    return gzip.compress(b, compresslevel=lv, mtime=0)
            else:

                def pack(b=body, lv=level):
                    return brotli.compress(b, quality=lv, mode=brotli.MODE_TEXT)

            size = len(pack())
            t0 = time.process_time()
            for _ in range(reps):
                pack()
            us = (time.process_time() - t0) / reps * 1e6
            out.append(
                {
                    "answer": name,
                    "bytes": len(body),
                    "codec": f"{codec} {level}",
                    "packed": size,
                    "ratio": round(len(body) / size, 2),
                    "cpu_us": round(us),
                }
            )
    return out


def format_compression(rows: list[dict[str, Any]]) -> str:
    lines = [f"  {'answer':<24}{'codec':<9}{'bytes':>9}{'packed':>9}{'ratio':>7}{'CPU us':>8}"]
    for r in rows:
        lines.append(
            f"  {r['answer']:<24}{r['codec']:<9}{r['bytes']:>9,}{r['packed']:>9,}"
            f"{r['ratio']:>7}{r['cpu_us']:>8,}"
        )
    return "\n".join(lines)


def answers(site: Site, token: str) -> dict[str, bytes]:
    """The reader's home timeline and notifications, 20 of each, as served
    (identity encoding)."""
    http = httpx.Client(
        base_url=site.url,
        headers={"Authorization": "Bearer " + token, "Accept-Encoding": "identity"},
    )
    return {
        "home, 20 statuses": http.get("/api/v1/timelines/home", params={"limit": 20}).content,
        "notifications, 20": http.get("/api/v1/notifications", params={"limit": 20}).content,
        "grouped notifications": http.get("/api/v2/notifications", params={"limit": 20}).content,
    }
