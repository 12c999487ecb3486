"""The web app's scheduling, end to end in Debian's Chromium against a real
``redpoll serve`` (the fixtures and checks of test_webapp.py): the
composer's Schedule option makes a scheduled status (too soon: the server's
422 shown), the Scheduled posts view lists it, reschedules and cancels it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from playwright.sync_api import expect
from support.browser import DESKTOP, browser, people, status_in, web  # noqa: F401


def local_input(person, minutes: int) -> str:
    """The browser's local time ``minutes`` ahead, as a datetime-local value."""
    return person.page.evaluate(
        f"(() => {{ const d = new Date(Date.now() + {minutes} * 60000 - "
        "new Date().getTimezoneOffset() * 60000); return d.toISOString().slice(0, 16); })()"
    )


def test_schedule_from_the_composer_then_reschedule_and_cancel(people):  # noqa: F811
    lee = people(DESKTOP)
    lee.sign_up("lee")
    p = lee.page
    p.get_by_role("textbox", name="Compose").fill("a post for later")
    p.get_by_role("button", name="Schedule", exact=True).click()
    when = p.get_by_label("Schedule for")
    expect(when).to_be_visible()
    when.fill(local_input(lee, 2))  # too soon: the server says so, nothing scheduled
    p.get_by_role("button", name="Schedule post").click()
    expect(p.get_by_role("status").filter(has_text="at least 5 minutes")).to_be_visible()
    lee.expected_error(422, "/api/v1/statuses")
    assert lee.api("GET", "/api/v1/scheduled_statuses").json() == []

    when.fill(local_input(lee, 60))
    p.get_by_role("button", name="Schedule post").click()
    expect(p.get_by_role("status").filter(has_text="Scheduled")).to_be_visible()
    expect(p.get_by_role("textbox", name="Compose")).to_have_value("")
    expect(status_in(p, "a post for later")).to_have_count(0)  # not posted now
    listed = lee.api("GET", "/api/v1/scheduled_statuses").json()
    assert [s["params"]["text"] for s in listed] == ["a post for later"]
    at = datetime.fromisoformat(listed[0]["scheduled_at"].replace("Z", "+00:00"))
    assert timedelta(minutes=58) < at - datetime.now(UTC) < timedelta(minutes=61)

    p.get_by_role("link", name="Scheduled posts").click()
    item = p.locator("li.scheduled-post", has_text="a post for later")
    expect(item).to_be_visible()
    item.get_by_label("New time for a post for later").fill(local_input(lee, 180))
    item.get_by_role("button", name="Reschedule").click()
    expect(p.get_by_role("status").filter(has_text="Rescheduled")).to_be_visible()
    moved = lee.api("GET", f"/api/v1/scheduled_statuses/{listed[0]['id']}").json()
    at = datetime.fromisoformat(moved["scheduled_at"].replace("Z", "+00:00"))
    assert timedelta(minutes=178) < at - datetime.now(UTC) < timedelta(minutes=181)

    p.get_by_role("button", name="Cancel scheduled post a post for later").click()
    expect(p.get_by_text("No scheduled posts.")).to_be_visible()
    assert lee.api("GET", "/api/v1/scheduled_statuses").json() == []
