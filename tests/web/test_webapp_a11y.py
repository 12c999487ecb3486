"""The web app's accessibility, checked in Debian's Chromium against a real
``redpoll serve``: axe-core (npm, pinned in tests/axe/package-lock.json,
installed by ./test.sh) run in the page on the main screens (home, a
thread, a profile, notifications, search, settings, the compose dialog) at
a phone's and a desk's size, in the light and the dark theme, with no
serious or critical violation (contrast AA among them); a focused control
shows it is focused; with reduced motion asked for, nothing moves."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import expect
from support.browser import DESKTOP, Person, browser, people, web  # noqa: F401

AXE = Path(__file__).parents[1] / "axe" / "node_modules" / "axe-core" / "axe.min.js"

PHONE = {"width": 390, "height": 844}

#: the rules run: WCAG 2.1 A and AA (contrast among them) and axe's best practices
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(
            f"axe-core is not installed at {AXE}: run ./test.sh once, or "
            "'npm ci --prefix tests/axe'",
            pytrace=False,
        )
    return AXE.read_text()


def violations(page, source: str) -> list[str]:
    """axe-core's serious and critical violations on what ``page`` shows now,
    one line each (rule, impact, the first nodes' selectors and summary).
    axe is evaluated through the DevTools protocol, which the page's CSP
    (script-src 'self') does not govern."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(source)
    found = page.evaluate(
        """async (tags) => {
            const r = await axe.run(document, {
                runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
            return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
              .map(v => ({ id: v.id, impact: v.impact, help: v.help,
                           nodes: v.nodes.slice(0, 4).map(n => n.target.join(' ') + ': ' +
                                                          (n.failureSummary || '').slice(0, 240)) }));
        }""",
        TAGS,
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"]) for v in found
    ]


def screens(person, writer: str, thread: str):
    """Each main screen opened as a person would, yielding its name once shown."""
    p = person.page
    p.goto("/")
    expect(p.locator("article").first).to_be_visible()
    yield "home"
    p.goto(f"/@{writer}/{thread}")
    expect(p.locator("article").nth(1)).to_be_visible()
    yield "thread"
    p.goto(f"/@{writer}")
    expect(p.locator("article").first).to_be_visible()
    yield "profile"
    p.goto("/notifications")
    expect(p.locator("main").get_by_text("favourited your post").first).to_be_visible()
    yield "notifications"
    p.goto("/search?q=alder")
    expect(p.locator("main article").first).to_be_visible()
    yield "search"
    p.goto("/settings")
    expect(p.get_by_role("heading", name="Settings").first).to_be_visible()
    yield "settings"
    p.goto("/about")
    expect(p.get_by_role("heading", name="Server rules")).to_be_visible()
    yield "about"
    p.goto(f"/@{writer}/{thread}/favourites")
    expect(p.locator(".feed .account-row").first).to_be_visible()
    yield "favourited by"
    p.goto(f"/@{writer}")
    expect(p.locator("article").first).to_be_visible()
    p.get_by_role("button", name="New post").first.click()
    expect(p.locator("dialog textarea")).to_be_focused()
    p.locator("dialog textarea").fill("Eleven redpolls this morning")
    yield "compose"


@pytest.fixture(scope="module")
def cast(browser, web):  # noqa: F811
    """A writer with a thread, and the reader's browser state (signed in,
    following the writer, with notifications): made once for the module."""
    writer, reader = Person(browser, web, DESKTOP), Person(browser, web, DESKTOP)
    wname = writer.sign_up("wri")
    reader.sign_up("rea")
    wid = writer.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    reader.api("POST", f"/api/v1/accounts/{wid}/follow").raise_for_status()
    ids = [
        writer.api(
            "POST", "/api/v1/statuses", data={"status": f"The redpolls are back at the alder {i}"}
        ).json()["id"]
        for i in range(4)
    ]
    reply = reader.api(
        "POST",
        "/api/v1/statuses",
        data={"status": f"@{wname} how many?", "in_reply_to_id": ids[-1]},
    ).json()
    writer.api("POST", f"/api/v1/statuses/{reply['id']}/favourite").raise_for_status()
    reader.api("POST", f"/api/v1/statuses/{ids[-1]}/favourite").raise_for_status()  # favourited by
    deadline = time.monotonic() + 15
    while not reader.api("GET", "/api/v1/notifications").json():
        assert time.monotonic() < deadline, "no notification came"
        time.sleep(0.1)
    state = reader.context.storage_state()
    for person in (writer, reader):
        assert not person.problems, person.problems
        person.context.close()
    return {"writer": wname, "thread": ids[-1], "state": state}


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_main_screens_have_no_serious_axe_violation(people, cast, axe_source, size, theme):  # noqa: F811
    person = people(
        PHONE if size == "phone" else DESKTOP, storage_state=cast["state"], color_scheme=theme
    )
    found = {}
    for screen in screens(person, cast["writer"], cast["thread"]):
        person.page.wait_for_timeout(150)  # what a screen shows after its first paint settles
        if problems := violations(person.page, axe_source):
            found[screen] = problems
    assert not found, "\n".join(f"{s}:\n  " + "\n  ".join(v) for s, v in found.items())


def test_focus_is_visible_and_reduced_motion_is_honoured(people, cast):  # noqa: F811
    person = people(DESKTOP, storage_state=cast["state"], reduced_motion="reduce")
    p = person.page
    p.goto("/")
    expect(p.locator("article").first).to_be_visible()
    # keyboard focus on a link, a button and a post: each shows a ring
    rings = []
    for target in (
        p.get_by_role("link", name="Notifications"),
        p.get_by_role("button", name="New post").first,
        p.locator("article").first.get_by_role("button", name="Favourite"),
    ):
        target.focus()
        p.keyboard.press("Shift+Tab")
        p.keyboard.press("Tab")  # focus that came from the keyboard (:focus-visible)
        rings.append(
            target.evaluate(
                """el => { const s = getComputedStyle(el);
                   return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2)
                          || (s.boxShadow && s.boxShadow !== 'none'); }"""
            )
        )
    assert rings == [True, True, True], rings
    moving = p.evaluate(
        """() => [...document.querySelectorAll('*')].filter(el => {
             const s = getComputedStyle(el);
             const t = s.transitionDuration.split(',').some(d => parseFloat(d) > 0.01);
             const a = s.animationName !== 'none' && s.animationDuration.split(',')
                         .some(d => parseFloat(d) > 0.01);
             return t || a; }).map(el => el.tagName + '.' + el.className).slice(0, 10)"""
    )
    assert moving == [], moving
    assert p.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches")
