"""Polls in the web app, as people use them in Debian's Chromium: the
composer's Poll button (options, duration, multiple choice), the poll under
the status, voting with radio buttons or checkboxes, the results (bars,
percentages, who voted, the time left) right after the vote, and the
author's own view; an edit in place keeps the poll and its votes."""

from __future__ import annotations

from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, people, status_in, web  # noqa: F401


def test_compose_a_poll_vote_in_it_and_see_the_results(people):  # noqa: F811
    ann, ben = people(DESKTOP), people(PHONE)
    ann_name = ann.sign_up("ann")
    ben.sign_up("ben")
    a = ann.page
    a.get_by_role("button", name="Poll", exact=True).click()
    post_button = a.get_by_role("button", name="Post", exact=True)
    a.get_by_role("textbox", name="Compose").fill("Which season?")
    a.get_by_label("Option 1").fill("Spring")
    expect(post_button).to_be_disabled()  # one option is no poll
    a.get_by_label("Option 2").fill("Summer")
    a.get_by_role("button", name="Add an option").click()
    a.get_by_label("Option 3").fill("Autumn")
    a.get_by_role("button", name="Add an option").click()
    a.get_by_label("Option 4").fill("Winter")
    expect(a.get_by_role("button", name="Add an option")).to_be_hidden()  # four at most
    a.get_by_label("Poll duration").select_option("3600")
    a.screenshot(path="/tmp/redpoll-poll-compose-desktop.png")
    post_button.click()
    mine = status_in(a, "Which season?").first
    expect(mine.get_by_role("group", name="Poll")).to_contain_text("0 people · ends in 1 hour")
    # the author sees the results, not a Vote button
    expect(mine.get_by_role("button", name="Vote")).to_have_count(0)
    sent = [
        data
        for method, url, data in ann.requests
        if method == "POST" and url.endswith("/api/v1/statuses")
    ]
    assert sent and '"options":["Spring","Summer","Autumn","Winter"]' in sent[-1]
    assert '"expires_in":3600' in sent[-1]
    poll_id = ann.api("GET", "/api/v1/timelines/home").json()[0]["poll"]["id"]

    # ben votes from ann's profile with the radio buttons
    b = ben.page
    b.goto(f"/@{ann_name}")
    theirs = status_in(b, "Which season?").first
    vote = theirs.get_by_role("button", name="Vote")
    expect(vote).to_be_disabled()
    theirs.get_by_role("radio", name="Autumn").check()
    b.screenshot(path="/tmp/redpoll-poll-vote-form-phone.png", full_page=True)
    vote.click()
    poll = theirs.get_by_role("group", name="Poll")
    expect(poll).to_contain_text("100%")
    expect(poll).to_contain_text("1 person")
    expect(poll.get_by_label("your choice")).to_have_count(1)
    expect(theirs.get_by_role("button", name="Vote")).to_have_count(0)
    b.screenshot(path="/tmp/redpoll-poll-voted-phone.png", full_page=True)
    counted = ben.api("GET", f"/api/v1/polls/{poll_id}").json()
    assert counted["own_votes"] == [2] and counted["votes_count"] == 1

    # after a reload ben still sees the results; ann sees the vote counted
    b.reload()
    expect(status_in(b, "Which season?").first.get_by_role("group", name="Poll")).to_contain_text(
        "100%"
    )
    a.reload()
    expect(status_in(a, "Which season?").first.get_by_role("group", name="Poll")).to_contain_text(
        "1 person"
    )
    a.screenshot(path="/tmp/redpoll-poll-author-desktop.png", full_page=True)

    # editing the text in place keeps the poll and its votes
    status_in(a, "Which season?").first.get_by_role("button", name="More actions").click()
    status_in(a, "Which season?").first.get_by_role("button", name="Edit", exact=True).click()
    form = a.get_by_role("form", name="Edit post")
    form.get_by_role("textbox", name="Edit post").fill("Which season do you like?")
    form.get_by_role("button", name="Save").click()
    edited = status_in(a, "Which season do you like?").first
    expect(edited.get_by_role("group", name="Poll")).to_contain_text("1 person")
    assert ben.api("GET", f"/api/v1/polls/{poll_id}").json()["own_votes"] == [2]


def test_a_multiple_choice_poll_takes_checkboxes(people):  # noqa: F811
    cal, dee = people(DESKTOP), people(DESKTOP)
    cal_name = cal.sign_up("cal")
    dee.sign_up("dee")
    cal.api(
        "POST",
        "/api/v1/statuses",
        json={
            "status": "Pick toppings",
            "poll": {
                "options": ["cheese", "olives", "basil"],
                "expires_in": 86_400,
                "multiple": True,
            },
        },
    )
    d = dee.page
    d.goto(f"/@{cal_name}")
    post = status_in(d, "Pick toppings").first
    post.get_by_role("checkbox", name="cheese").check()
    post.get_by_role("checkbox", name="basil").check()
    post.get_by_role("button", name="Vote").click()
    poll = post.get_by_role("group", name="Poll")
    expect(poll.get_by_label("your choice")).to_have_count(2)
    expect(poll).to_contain_text("1 person · ends in 1 day")
    d.screenshot(path="/tmp/redpoll-poll-multiple-desktop.png", full_page=True)
