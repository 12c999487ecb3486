"""Quote posts in the web app, in Debian's Chromium: a quote shows the
quoted post inside a card (its author, its text, a link to it); once the
quoted author revokes the quote, the card says so and shows nothing of it."""

from __future__ import annotations

from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, people, status_in, web  # noqa: F401


def test_a_quote_shows_the_quoted_post_in_a_card_until_revoked(people):  # noqa: F811
    ann, ben = people(DESKTOP), people(PHONE)
    ann_name = ann.sign_up("ann")
    ben_name = ben.sign_up("ben")
    original = ann.api("POST", "/api/v1/statuses", json={"status": "Tea is best brewed slowly"})
    quoted_id = original.json()["id"]
    quoting = ben.api(
        "POST",
        "/api/v1/statuses",
        json={"status": "Could not agree more", "quoted_status_id": quoted_id},
    ).json()
    assert quoting["quote"]["state"] == "accepted"

    b = ben.page
    b.goto(f"/@{ben_name}")
    mine = status_in(b, "Could not agree more").first
    card = mine.locator("blockquote.quote-card")
    expect(card).to_contain_text("Tea is best brewed slowly")
    expect(card.get_by_role("link", name=f"@{ann_name}")).to_be_visible()
    expect(card.locator(f'a.time[href="/@{ann_name}/{quoted_id}"]')).to_have_count(1)
    b.screenshot(path="/tmp/redpoll-quote-card-phone.png", full_page=True)

    revoked = ann.api("POST", f"/api/v1/statuses/{quoted_id}/quotes/{quoting['id']}/revoke")
    assert revoked.status_code == 200
    b.reload()
    mine = status_in(b, "Could not agree more").first
    expect(mine.locator(".quote-gone")).to_have_text("The author removed this quote")
    expect(mine).not_to_contain_text("Tea is best brewed slowly")
    b.screenshot(path="/tmp/redpoll-quote-revoked-phone.png", full_page=True)
