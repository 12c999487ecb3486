"""A member's own lists and choices in the web app, end to end in Debian's
Chromium against one real ``redpoll serve`` (the fixtures of
support/browser.py): filtered notifications (the policy set in Settings, a
stranger's mention behind "Filtered notifications (1)", its request opened
and accepted, the mention then in the list); a featured hashtag and a
featured account on one's profile as another sees them (the hashtag's link
to one's posts with it); a private note kept over a reload and shown to
nobody else; muting and blocking from a profile undone from Settings'
pages; a blocked domain added behind Mastodon's warning and removed; a
followed hashtag unfollowed. At a desk's size and a phone's (390x844)."""

from __future__ import annotations

import re

from playwright.sync_api import expect
from support.browser import browser, counted, people, shot, status_in, until, web  # noqa: F401

DESK = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}


def account_id(person, name: str) -> str:
    return person.api("GET", "/api/v1/accounts/lookup", params={"acct": name}).json()["id"]


def test_a_strangers_mention_waits_in_filtered_notifications_until_accepted(people):  # noqa: F811
    ann, bo = people(DESK), people(PHONE)
    name = ann.sign_up("fn")
    stranger = bo.sign_up("st")
    p = ann.page
    # the policy, in Settings: people one does not follow are filtered
    p.get_by_role("link", name="Settings").click()
    policy = p.get_by_role("combobox", name=re.compile("People you don't follow"))
    expect(policy).to_have_value("accept")
    expect(policy).to_be_enabled()
    policy.select_option("filter")
    expect(p.locator("#toast")).to_have_text("Notification policy saved")
    assert ann.api("GET", "/api/v2/notifications/policy").json()["for_not_following"] == "filter"
    shot(ann, "notification-policy")
    hidden = bo.api("POST", "/api/v1/statuses", data={"status": f"@{name} hello from a stranger"})
    assert hidden.status_code == 200, hidden.text
    until(
        lambda: (
            ann.api("GET", "/api/v2/notifications/policy").json()["summary"][
                "pending_requests_count"
            ]
            == 1
        )
    )
    p.get_by_role("link", name=counted("Notifications")).first.click()
    entry = p.get_by_role("link", name=re.compile("Filtered notifications"))
    expect(entry).to_have_text(re.compile(r"Filtered notifications \(1\)"))
    expect(status_in(p, "hello from a stranger")).to_have_count(0)
    entry.click()
    expect(p.get_by_role("heading", name="Filtered notifications")).to_be_visible()
    expect(p.locator(".request")).to_have_count(1)
    expect(p.locator(".request")).to_contain_text(f"@{stranger}")
    expect(p.locator(".request-preview")).to_have_text(f"@{name} hello from a stranger")
    shot(ann, "notification-requests")
    # one request: the sender's notifications, Accept there
    p.get_by_role("link", name=re.compile(f"1 notification from @{stranger}")).click()
    expect(p.get_by_role("heading", name=re.compile("From "))).to_be_visible()
    expect(p.locator(".notification.mention")).to_have_count(1)
    p.get_by_role("button", name=f"Accept notifications from @{stranger}").click()
    expect(p.get_by_text("Accepted: their notifications are in your list")).to_be_visible()
    p.get_by_role("link", name=counted("Notifications")).first.click()
    expect(status_in(p, "hello from a stranger")).to_be_visible()
    expect(p.get_by_role("link", name=re.compile("Filtered notifications"))).to_be_hidden()
    # two more strangers' requests, ticked and dismissed at once, at a phone's size
    more = [people(PHONE), people(PHONE)]
    names = [person.sign_up("th") for person in more]
    for person in more:
        person.api("POST", "/api/v1/statuses", data={"status": f"@{name} me too"})
    until(
        lambda: (
            ann.api("GET", "/api/v2/notifications/policy").json()["summary"][
                "pending_requests_count"
            ]
            == 2
        )
    )
    p.set_viewport_size(PHONE)
    p.goto("/notifications")
    expect(p.get_by_role("link", name=re.compile("Filtered notifications"))).to_have_text(
        re.compile(r"\(2\)")
    )
    p.get_by_role("link", name=re.compile("Filtered notifications")).click()
    expect(p.locator(".request")).to_have_count(2)
    expect(p.get_by_role("button", name="Dismiss selected")).to_be_disabled()
    for other in names:
        p.get_by_role("checkbox", name=f"Select @{other}").check()
    assert p.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    ann.width = PHONE["width"]
    shot(ann, "notification-requests")
    p.get_by_role("button", name="Dismiss 2").click()
    expect(p.locator(".request .choices")).to_have_text(["Dismissed", "Dismissed"])
    expect(p.get_by_role("button", name="Dismiss selected")).to_be_disabled()
    assert ann.api("GET", "/api/v1/notifications/requests").json() == []
    p.get_by_role("link", name="Change the policy").click()  # Settings, at the policy
    expect(p.get_by_role("heading", name="Filter notifications from")).to_be_in_viewport()


def test_featured_hashtags_accounts_and_a_private_note_on_profiles(people):  # noqa: F811
    ann, bo = people(DESK), people(PHONE)
    name = ann.sign_up("fe")
    friend = bo.sign_up("fr")
    for text in ("first #Birding", "second #birding", "about #cats"):
        assert ann.api("POST", "/api/v1/statuses", data={"status": text}).status_code == 200
    p = ann.page
    # Settings > Featured hashtags: a suggestion taken, one typed in, one removed
    p.goto("/settings")
    p.get_by_role("link", name="Featured hashtags").click()
    expect(p.get_by_role("heading", name="Featured hashtags")).to_be_visible()
    p.get_by_role("button", name="Feature #birding").click()
    expect(p.locator(".setting-list")).to_contain_text("#birding")
    expect(p.locator(".setting-list")).to_contain_text("2 posts")
    p.get_by_label("Hashtag to feature").fill("#cats")
    p.get_by_role("button", name="Feature", exact=True).click()
    expect(p.locator(".setting-list li")).to_have_count(2)
    shot(ann, "featured-hashtags")
    p.get_by_role("button", name="Remove #cats").click()
    expect(p.locator(".setting-list li")).to_have_count(1)
    # featuring an account one follows, from its profile's menu
    p.goto(f"/@{friend}")
    p.get_by_role("button", name="Follow", exact=True).click()
    expect(p.get_by_role("button", name="Unfollow")).to_be_visible()
    menu = p.get_by_role("button", name=f"More for @{friend}")
    menu.click()
    p.get_by_role("button", name="Feature on profile").click()
    expect(p.locator("#toast")).to_have_text(f"@{friend} is featured on your profile")
    # the private note: saved on leaving the box, there after a reload
    note = p.get_by_role("textbox", name=re.compile("Note"))
    note.fill("met at the birding club")
    p.keyboard.press("Tab")
    expect(p.locator(".private-note [role=status]")).to_have_text("Saved")
    shot(ann, "profile-note")
    p.reload()
    expect(p.get_by_role("textbox", name=re.compile("Note"))).to_have_value(
        "met at the birding club"
    )
    menu = p.get_by_role("button", name=f"More for @{friend}")
    menu.click()
    expect(p.get_by_role("button", name="Remove from featured")).to_be_focused()
    shot(ann, "profile-menu")
    p.keyboard.press("Escape")
    expect(menu).to_be_focused()
    # another viewer (a phone): the hashtag and the account on ann's profile, no note
    q = bo.page
    q.goto(f"/@{name}")
    featured = q.get_by_role("region", name="Featured hashtags")
    expect(featured).to_contain_text("#birding")
    expect(q.get_by_role("region", name="Featured accounts")).to_contain_text(f"@{friend}")
    shot(bo, "profile-featured")
    q.emulate_media(color_scheme="dark")
    shot(bo, "profile-featured-dark")
    q.emulate_media(color_scheme="light")
    featured.get_by_role("link", name=re.compile("#birding")).click()
    expect(q).to_have_url(re.compile(f"/@{name}/tagged/birding$"))
    expect(q.locator(".tag-chip[aria-current=page]")).to_contain_text("#birding")
    expect(status_in(q, "first #Birding")).to_be_visible()
    expect(status_in(q, "second #birding")).to_be_visible()
    expect(status_in(q, "about #cats")).to_have_count(0)
    shot(bo, "profile-tagged")
    q.goto(f"/@{name}")
    expect(q.get_by_role("button", name=f"More for @{name}")).to_be_visible()
    expect(q.get_by_role("textbox", name=re.compile("Note"))).to_have_value("")
    assert "birding club" not in q.content()
    # unfeaturing: gone from the profile
    p.get_by_role("button", name=f"More for @{friend}").click()
    p.get_by_role("button", name="Remove from featured").click()
    expect(p.locator("#toast")).to_have_text(f"@{friend} is no longer featured")
    q.reload()
    expect(q.get_by_role("region", name="Featured hashtags")).to_be_visible()
    expect(q.get_by_role("region", name="Featured accounts")).to_have_count(0)


def test_mutes_blocks_domains_and_followed_hashtags_undone_in_settings(people):  # noqa: F811
    ann, bo = people(PHONE), people(DESK)
    ann.sign_up("mb")
    other = bo.sign_up("ot")
    p = ann.page
    p.goto(f"/@{other}")
    # muted for a day from the profile's menu (Mastodon's Mute dialog), then blocked
    p.get_by_role("button", name=f"More for @{other}").click()
    p.get_by_role("button", name="Mute for a while…").click()
    dialog = p.get_by_role("dialog", name=f"Mute @{other}?")
    dialog.get_by_label("Duration").select_option(label="1 day")
    expect(dialog.get_by_role("checkbox", name="Hide notifications from them")).to_be_checked()
    shot(ann, "mute-dialog")
    dialog.get_by_role("button", name="Mute", exact=True).click()
    expect(p.get_by_role("button", name="Unmute")).to_be_visible()
    p.get_by_role("button", name="Block", exact=True).click()
    expect(p.get_by_role("button", name="Unblock")).to_be_visible()
    # Settings > Muted accounts: there with the mute's end, Unmute
    p.goto("/settings")
    p.get_by_role("link", name="Muted accounts").click()
    expect(p.get_by_role("heading", name="Muted accounts")).to_be_visible()
    row = p.locator(".setting-account", has_text=f"@{other}")
    expect(row).to_contain_text(re.compile(r"Until \w"))
    shot(ann, "muted-accounts")
    row.get_by_role("button", name=f"Unmute @{other}").click()
    expect(row.get_by_role("button", name=f"Mute @{other}")).to_be_visible()
    # Blocked accounts: Unblock
    p.goto("/settings/blocks")
    row = p.locator(".setting-account", has_text=f"@{other}")
    row.get_by_role("button", name=f"Unblock @{other}").click()
    expect(row.get_by_role("button", name=f"Block @{other}")).to_be_visible()
    rel = ann.api(
        "GET", "/api/v1/accounts/relationships", params={"id[]": account_id(ann, other)}
    ).json()[0]
    assert not rel["muting"] and not rel["blocking"]
    p.goto("/settings/mutes")
    expect(p.get_by_text("You mute nobody.")).to_be_visible()
    # Blocked domains: Mastodon's warning first; Cancel blocks nothing
    p.goto("/settings/domain_blocks")
    p.get_by_label("Domain to block").fill("spam.example")
    p.get_by_role("button", name="Block domain").click()
    dialog = p.get_by_role("dialog", name="Block spam.example?")
    expect(dialog).to_contain_text("Are you really, really sure you want to block the entire")
    expect(dialog).to_contain_text("Your followers from that domain will be removed.")
    shot(ann, "domain-block-warning")
    dialog.get_by_role("button", name="Cancel").click()
    expect(p.get_by_role("button", name="Block domain")).to_be_focused()
    assert ann.api("GET", "/api/v1/domain_blocks").json() == []
    p.get_by_role("button", name="Block domain").click()
    p.get_by_role("button", name="Block entire domain").click()
    expect(p.locator(".setting-row", has_text="spam.example")).to_be_visible()
    assert ann.api("GET", "/api/v1/domain_blocks").json() == ["spam.example"]
    shot(ann, "blocked-domains")
    p.emulate_media(color_scheme="dark")
    shot(ann, "blocked-domains-dark")
    p.emulate_media(color_scheme="light")
    p.get_by_role("button", name="Unblock spam.example").click()
    expect(p.locator(".setting-row", has_text="spam.example")).to_have_count(0)
    assert ann.api("GET", "/api/v1/domain_blocks").json() == []
    # Followed hashtags: listed, unfollowed (and the page at a desk)
    for tag in ("knitting", "gardening"):
        assert ann.api("POST", f"/api/v1/tags/{tag}/follow").status_code == 200
    p.goto("/settings/followed_tags")
    expect(p.locator(".setting-row")).to_have_count(2)
    p.get_by_role("button", name="Unfollow #knitting").click()
    expect(p.get_by_role("button", name="Follow #knitting")).to_be_visible()
    assert [t["name"] for t in ann.api("GET", "/api/v1/followed_tags").json()] == ["gardening"]
    bo.page.goto("/settings")
    expect(bo.page.get_by_role("region", name="Filter notifications from")).to_be_visible()
    shot(bo, "settings-lists")
