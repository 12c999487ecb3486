"""Roles in the web moderation area, in Debian's Chromium against a real
``redpoll serve``: an owner (``redpoll admin role``) defines a role with
only "Manage reports", gives it to a member, and the member's Moderation
entry then opens the reports and nothing else; the owner edits the role
(colour, a permission more) and the member's next page shows it; deleting
the role takes the Moderation entry away; an account's page gives a role
too."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from support.browser import browser, people, shot, web  # noqa: F401
from support.cli import admin_ok as admin

WIDE = {"width": 1440, "height": 900}

pytestmark = pytest.mark.timeout(300)


def test_an_owner_defines_a_role_gives_it_and_the_holder_sees_what_it_allows(
    people,  # noqa: F811
    server,
):
    owner, holder = people(WIDE), people(WIDE)
    owner_name = owner.sign_up("ro")
    holder_name = holder.sign_up("rh")
    admin(server, "role", owner_name, "owner")

    o = owner.page
    o.reload()
    o.get_by_role("link", name="Moderation").first.click()
    o.get_by_role("navigation", name="Moderation").get_by_role("link", name="Roles").click()
    expect(o.get_by_role("heading", level=1)).to_have_text("Roles")
    listed = o.get_by_role("list", name="Roles")
    expect(listed.locator("li").first).to_contain_text("Everyone")
    expect(listed).to_contain_text("Owner")

    form = o.locator("form", has=o.get_by_role("heading", name="Define a role"))
    form.get_by_label("Name").fill("Report desk")
    form.get_by_label("Position").fill("5")
    form.get_by_label("Colour").fill("#2a7")
    form.get_by_label("Show it on its holders’ profiles").check()
    form.get_by_label("Manage reports").check()
    shot(owner, "define", "roles-")
    form.get_by_role("button", name="Define").click()
    desk = listed.locator("li", has_text="Report desk")
    expect(desk).to_contain_text("position 5")
    expect(desk).to_contain_text("Manage reports")

    give = o.locator("form", has=o.get_by_role("heading", name="Give an account a role"))
    give.get_by_label("Account").fill(holder_name)
    give.get_by_label("Role").select_option(label="Report desk")
    give.get_by_role("button", name="Give role").click()
    expect(o.get_by_role("status").filter(has_text=f"@{holder_name}: Report desk")).to_be_visible()
    shot(owner, "list", "roles-")
    shown = owner.api("GET", f"/api/v1/accounts/lookup?acct={holder_name}").json()
    assert shown["roles"][0]["name"] == "Report desk" and shown["roles"][0]["color"] == "#2a7"

    # the holder: Moderation opens the reports, and only them
    h = holder.page
    h.reload()
    h.get_by_role("link", name="Moderation").first.click()
    expect(h.get_by_role("heading", level=1)).to_have_text("Reports")
    tabs = h.get_by_role("navigation", name="Moderation")
    expect(tabs.get_by_role("link")).to_have_count(1)
    expect(h.get_by_role("list", name="Open reports")).to_be_visible()
    h.goto("/moderation/accounts")
    expect(h.get_by_role("alert")).to_have_text("Your role does not allow this.")
    shot(holder, "holder", "roles-")

    # the owner edits the role: one permission more; the holder's next page has it
    desk.get_by_role("button", name="Edit the role Report desk").click()
    dialog = o.get_by_role("dialog", name="Edit the role Report desk")
    expect(dialog.get_by_label("Manage reports")).to_be_checked()
    dialog.get_by_label("View the audit log").check()
    dialog.get_by_role("button", name="Save").click()
    expect(desk).to_contain_text("View the audit log")
    h.goto("/")
    h.reload()
    h.get_by_role("link", name="Moderation").first.click()
    expect(h.get_by_role("navigation", name="Moderation").get_by_role("link")).to_have_count(2)

    # deleted: the holder holds no role, and no Moderation entry
    desk.get_by_role("button", name="Delete the role Report desk").click()
    o.get_by_role("dialog", name="Delete the role Report desk").get_by_role(
        "button", name="Delete"
    ).click()
    expect(listed.locator("li", has_text="Report desk")).to_have_count(0)
    h.goto("/")
    h.reload()
    expect(h.get_by_role("link", name="Moderation")).to_have_count(0)

    # from the account's page too: the owner makes the holder a moderator
    o.goto(f"/moderation/accounts/{shown['id']}")
    facts = o.locator(".mod-facts")
    expect(facts).to_contain_text("None")
    chooser = o.locator("form", has=o.get_by_role("button", name="Give role"))
    chooser.get_by_label("Role").select_option(label="Moderator")
    chooser.get_by_role("button", name="Give role").click()
    expect(facts).to_contain_text("Moderator")
    assert holder.api("GET", "/api/v1/accounts/verify_credentials").json()["role"]["id"] == "1"
