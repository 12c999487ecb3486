"""Signing up as a community decides, end to end in Debian's Chromium against
a real ``redpoll serve``: the server's rules with the agreement, the reason
and the pending message when accounts wait for approval, the closed
message, an invite made in Settings and used through its /invite/:code
link while registrations are closed, and the Report dialog's rules."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from playwright.sync_api import expect
from support.browser import DESKTOP, PASSWORD, PHONE, browser, people, shot, web  # noqa: F401
from support.cli import admin_ok as admin


@pytest.fixture
def rules(server):
    """Two server rules for the test (removed after it), registrations open after it."""
    made = [
        admin(server, "rules-add", text, "--hint", hint).split("#")[1].strip()
        for text, hint in (("Be kind to each other", "No insults"), ("No spam", ""))
    ]
    try:
        yield made
    finally:
        admin(server, "registrations", "open", "--message", "", "--reason-optional")
        for rid in made:
            admin(server, "rules-remove", rid)


def fill(page, login: str) -> None:
    page.get_by_label("Username").fill(login)
    page.get_by_label("E-mail").fill(f"{login}@example.com")
    page.get_by_label("Password").fill(PASSWORD)


def test_approval_mode_shows_the_rules_asks_a_reason_and_says_the_account_waits(
    people,
    web,
    server,
    rules,  # noqa: F811
):
    admin(server, "registrations", "approval", "--reason-required")
    for viewport in (DESKTOP, PHONE):
        visitor = people(viewport)
        p = visitor.page
        p.goto("/signup")
        section = p.get_by_role("region", name="Server rules")
        expect(section.locator("li")).to_have_count(2)
        expect(section.locator("li").first).to_contain_text("Be kind to each other")
        expect(section.locator("li").first).to_contain_text("No insults")
        expect(p.get_by_text("A moderator approves each new account")).to_be_visible()
        expect(p.locator(".welcome")).not_to_contain_text("null")
        login = "w" + uuid.uuid4().hex[:9]
        fill(p, login)
        p.get_by_label("Why do you want to join?").fill("I watch birds")
        # without the agreement the form is not sent
        p.get_by_role("button", name="Sign up").click()
        assert not [r for r in visitor.requests if r[1].endswith("/api/v1/accounts")]
        p.get_by_role("checkbox", name="I agree to the server rules").check()
        shot(visitor, "signup-approval")
        p.get_by_role("button", name="Sign up").click()
        expect(p.get_by_role("status").filter(has_text="waiting for a moderator")).to_be_visible()
        shot(visitor, "signup-pending")
        # not signed in: the pending token was refused and not kept
        assert p.evaluate("localStorage.getItem('redpoll.session')") is None
        visitor.expected_error(403, "/api/v1/accounts/verify_credentials")
        sent = [b for m, u, b in visitor.requests if m == "POST" and u.endswith("/api/v1/accounts")]
        assert len(sent) == 1 and "reason=I+watch+birds" in sent[0]
        assert "agreement=true" in sent[0]
    admin(server, "registrations", "closed", "--message", "Full for now, see you in spring")
    visitor = people(PHONE)
    p = visitor.page
    p.goto("/signup")
    expect(p.get_by_role("status").filter(has_text="not taking sign-ups")).to_be_visible()
    expect(p.get_by_text("Full for now, see you in spring")).to_be_visible()
    expect(p.get_by_role("button", name="Sign up")).to_have_count(0)


def test_an_invite_made_in_settings_lets_one_sign_up_while_closed(
    people,
    web,
    server,
    rules,  # noqa: F811
):
    host = people(DESKTOP)
    host.sign_up("ih")
    p = host.page
    p.goto("/settings")
    p.get_by_role("link", name="Invite people").click()
    expect(p.get_by_role("heading", name="Invite people", level=1)).to_be_visible()
    p.get_by_label("Can be used").select_option("1")
    p.get_by_role("button", name="Make an invite link").click()
    link = p.get_by_role("textbox", name="Invite link")
    expect(link).to_have_count(1)
    url = link.input_value()
    assert re.fullmatch(re.escape(web.url.rstrip("/")) + r"/invite/[A-Za-z0-9]{8}", url), url
    expect(p.locator("li.invite")).to_contain_text("0 of 1 used")
    shot(host, "invites")
    admin(server, "registrations", "closed")
    guest = people(PHONE)
    g = guest.page
    g.goto(url)
    expect(g.get_by_role("heading", name="You are invited")).to_be_visible()
    expect(g.get_by_text("Your invite lets you join this server.")).to_be_visible()
    expect(g.get_by_role("region", name="Server rules").locator("li")).to_have_count(2)
    login = "g" + uuid.uuid4().hex[:9]
    fill(g, login)
    g.get_by_role("checkbox", name="I agree to the server rules").check()
    g.get_by_role("button", name="Sign up").click()
    expect(g.get_by_role("textbox", name="Compose")).to_be_visible()
    sent = [b for m, u, b in guest.requests if m == "POST" and u.endswith("/api/v1/accounts")]
    assert "invite_code=" + url.rsplit("/", 1)[1] in sent[0]
    # used up: the host sees it, and the link tells the next visitor
    p.reload()
    expect(p.locator("li.invite")).to_contain_text("1 of 1 used")
    late = people(DESKTOP)
    late.page.goto(url)
    expect(late.page.get_by_role("alert")).to_contain_text("not valid any more")
    expect(late.page.get_by_role("status").filter(has_text="not taking sign-ups")).to_be_visible()


def test_the_report_dialog_ticks_the_rules_it_breaks(people, web, server, rules):  # noqa: F811
    fay, gus = people(DESKTOP), people(PHONE)
    gus_name = gus.sign_up("rg")
    fay.sign_up("rf")
    p = fay.page
    p.goto(f"/@{gus_name}")
    p.locator(".relation").get_by_role("button", name="Report").click()
    dialog = p.get_by_role("dialog", name=f"Report @{gus_name}")
    expect(dialog.get_by_role("group", name="Which rules does it break?")).to_be_hidden()
    dialog.get_by_label("Reason").select_option("violation")
    group = dialog.get_by_role("group", name="Which rules does it break?")
    expect(group.get_by_role("checkbox")).to_have_count(2)
    # none ticked: asked for, nothing sent
    dialog.get_by_role("button", name="Send report").click()
    expect(dialog.get_by_role("alert")).to_have_text("Tick the rules it breaks.")
    group.get_by_role("checkbox", name="No spam").check()
    shot(fay, "report-rules")
    dialog.get_by_role("button", name="Send report").click()
    expect(dialog).to_have_count(0)
    sent = [
        json.loads(body)
        for method, url, body in fay.requests
        if method == "POST" and url.endswith("/api/v1/reports")
    ]
    assert len(sent) == 1
    assert sent[0]["category"] == "violation" and sent[0]["rule_ids"] == [rules[1]]
