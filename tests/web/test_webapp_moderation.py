"""The moderation area end to end in Debian's Chromium against a real
``redpoll serve`` (federating, on loopback): a member reports a post through
the report dialog; a moderator (``redpoll admin role``) finds it in the
queue, assigns it, warns the poster with a text from the report and
suspends another account from its page; the poster reads the warning in
Settings and appeals it; the suspended account can no longer sign in; the
moderator, made an admin, rejects the appeal and blocks a domain in the web
app, after which that domain's signed inbox POST is refused at once. The
Moderation entry shows only for a role that may moderate."""

from __future__ import annotations

import json
import re
import time
import uuid

import httpx
import pytest
from playwright.sync_api import expect
from support.browser import PASSWORD, Person, browser, fresh_serve, shot, status_in  # noqa: F401
from support.cli import admin_ok as admin
from support.federation import free_port
from support.peers import Host

from redpoll.federation import signing

WIDE = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def web(server):
    """A server with a public address (its inbox answers), on loopback."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {"REDPOLL_PUBLIC_URL": url, "REDPOLL_FEDERATION_LOOPBACK": "1"}
    with fresh_serve(server, env, args=["--port", str(port)]) as srv:
        yield srv


@pytest.fixture
def people(browser, web):  # noqa: F811
    made: list[Person] = []

    def make(viewport: dict) -> Person:
        made.append(Person(browser, web, viewport))
        return made[-1]

    yield make
    for person in made:
        if not person.page.is_closed() and person.page.url.startswith(web.url):
            wide = person.page.evaluate("document.documentElement.scrollWidth")
            assert wide <= person.width, f"{person.page.url} is {wide}px wide"
        assert not person.problems, person.problems
        person.context.close()


def password_grant(web, name: str) -> int:
    app = httpx.post(
        web.url + "/api/v1/apps",
        data={"client_name": "cli", "redirect_uris": "urn:ietf:wg:oauth:2.0:oob"},
    ).json()
    return httpx.post(
        web.url + "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": name,
            "password": PASSWORD,
        },
    ).status_code


def inbox_post(web, pair, actor: str, target: str) -> int:
    """A Follow of ``target`` signed by ``actor``'s key, to the shared inbox."""
    activity = {
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": f"{actor}/follows/{time.time_ns()}",
        "type": "Follow",
        "actor": actor,
        "object": target,
    }
    body = json.dumps(activity).encode()
    url = web.url + "/inbox"
    headers = signing.sign(
        pair, f"{actor}#main-key", "POST", url, body, {"content-type": "application/activity+json"}
    )
    return httpx.post(url, content=body, headers=headers, timeout=30).status_code


def moderation(p, section: str) -> None:
    p.goto("/")
    p.get_by_role("link", name="Moderation").first.click()
    p.get_by_role("navigation", name="Moderation").get_by_role("link", name=section).click()
    expect(p.get_by_role("heading", level=1)).to_have_text(section)


def test_reports_warnings_suspension_appeals_and_domain_blocks(people, web, server):
    poster, spammer, reporter = people(PHONE), people(WIDE), people(WIDE)
    poster_name = poster.sign_up("mp")
    spammer_name = spammer.sign_up("ms")
    reporter.sign_up("mr")
    mod = people(WIDE)
    mod_name = mod.sign_up("mm")
    # no role, no Moderation
    expect(mod.page.get_by_role("link", name="Moderation")).to_have_count(0)
    admin(server, "role", mod_name, "moderator")
    posted = poster.api("POST", "/api/v1/statuses", data={"status": "a rude reply here"}).json()

    # a member reports the post through the report dialog
    r = reporter.page
    r.goto(f"/@{poster_name}")
    post = status_in(r, "a rude reply here")
    post.get_by_role("button", name="More actions").click()
    post.get_by_role("button", name="Report").click()
    dialog = r.get_by_role("dialog", name=f"Report @{poster_name}")
    dialog.get_by_label("Comment").fill("Insults in every reply")
    dialog.get_by_role("button", name="Send report").click()
    expect(r.get_by_role("status").filter(has_text="sent to the moderators")).to_be_visible()

    # a member's own address of the area shows nothing of it
    r.goto("/moderation/reports")
    expect(r.get_by_role("alert")).to_have_text("Your role does not allow this.")
    expect(r.get_by_role("list", name="Open reports")).to_have_count(0)

    # the moderator: the queue, the report, assign, warn from it
    m = mod.page
    m.reload()
    moderation(m, "Reports")
    tabs = m.get_by_role("navigation", name="Moderation")
    expect(tabs.get_by_role("link", name="Accounts")).to_be_visible()
    expect(tabs.get_by_role("link", name="Domain blocks")).to_have_count(0)  # not a moderator's
    queue = m.get_by_role("list", name="Open reports")
    item = queue.locator("li", has_text=f"@{poster_name}").first
    expect(item).to_contain_text("Insults in every reply")
    expect(item.get_by_role("list", name="Reported posts")).to_contain_text("a rude reply here")
    shot(mod, "reports", "mod-")
    item.get_by_role("link", name=re.compile("Report #")).click()
    expect(m.locator(".mod-report").get_by_role("list", name="Reported posts")).to_contain_text(
        "a rude reply here"
    )
    expect(m.locator("main")).not_to_contain_text("null")
    report_path = m.url.removeprefix(web.url)
    m.get_by_role("button", name="Assign to me").click()
    expect(m.get_by_role("button", name="Unassign")).to_be_visible()
    expect(m.locator(".mod-report")).to_contain_text(f"assigned to @{mod_name}")
    shot(mod, "report", "mod-")
    m.get_by_role("group", name=f"Act on @{poster_name}").get_by_role("button", name="Warn").click()
    warn = m.get_by_role("dialog", name=f"Send a warning: @{poster_name}")
    warn.get_by_label("Warning").fill("Please keep it civil.")
    expect(warn.get_by_label("E-mail the member")).to_be_checked()
    warn.get_by_label("E-mail the member").uncheck()
    shot(mod, "warn-dialog", "mod-")
    warn.get_by_role("button", name="Warn").click()
    expect(warn).to_have_count(0)
    expect(
        m.get_by_role("status").filter(has_text=f"Warning sent to @{poster_name}")
    ).to_be_visible()
    sent = [
        body
        for method, url, body in mod.requests
        if method == "POST"
        and url.endswith(f"/api/v1/admin/accounts/{posted['account']['id']}/action")
    ]
    assert len(sent) == 1 and "type=none" in sent[0] and "send_email_notification=false" in sent[0]
    # the warning resolved the report it was given from; reopened, resolved again
    m.get_by_role("button", name="Reopen").click()
    m.get_by_role("button", name="Resolve").click()
    expect(m.get_by_role("button", name="Reopen")).to_be_visible()
    moderation(m, "Reports")
    expect(
        m.get_by_role("list", name="Open reports").locator("li", has_text=f"@{poster_name}")
    ).to_have_count(0)

    # suspend the spammer from Accounts
    moderation(m, "Accounts")
    m.get_by_label("Username").fill(spammer_name)
    m.get_by_role("button", name="Search").click()
    found = m.get_by_role("list", name="Accounts").locator("li")
    expect(found).to_have_count(1)
    shot(mod, "accounts", "mod-")
    found.get_by_role("link", name=f"@{spammer_name}").click()
    m.get_by_role("button", name="Suspend").click()
    suspend = m.get_by_role("dialog", name=f"Suspend the account: @{spammer_name}")
    suspend.get_by_label("Warning text").fill("Spam, over and over.")
    suspend.get_by_role("button", name="Suspend").click()
    expect(m.get_by_role("button", name="Lift the suspension")).to_be_visible()
    expect(m.locator(".mod-states")).to_contain_text("suspended")
    shot(mod, "account", "mod-")

    # the suspended account is signed out and cannot sign in again
    s = spammer.page
    s.goto("/settings")
    s.get_by_role("button", name="Sign in").click()
    s.get_by_label("Username or e-mail").fill(spammer_name)
    s.get_by_label("Password").fill(PASSWORD)
    s.get_by_role("button", name="Sign in").click()
    expect(s.get_by_text("Invalid username or password.")).to_be_visible()
    assert password_grant(web, spammer_name) == 400
    spammer.problems.clear()  # its refused requests (401) are the point

    # the poster reads the warning and appeals
    p = poster.page
    p.goto("/settings")
    p.get_by_role("link", name="Warnings about your account").click()
    warning = p.get_by_role("list", name="Warnings").locator("li").first
    expect(warning).to_contain_text("Please keep it civil.")
    expect(warning).to_contain_text("Warning")
    # until when it may be appealed: the server's date (appealable_until)
    expect(warning).to_contain_text("You may appeal until")
    warning.get_by_role("button", name="Appeal").click()
    appeal = p.get_by_role("dialog", name="Appeal this decision")
    appeal.get_by_label("Your appeal").fill("It was a joke between friends.")
    shot(poster, "appeal-dialog", "mod-")
    appeal.get_by_role("button", name="Send appeal").click()
    expect(warning).to_contain_text("Appeal pending")
    expect(warning.get_by_role("button", name="Appeal")).to_have_count(0)
    shot(poster, "warnings", "mod-")

    # made an admin: appeals and domain blocks
    admin(server, "role", mod_name, "admin")
    m.reload()
    moderation(m, "Appeals")
    pending = m.get_by_role("list", name="Appeals").locator("li", has_text=f"@{poster_name}")
    expect(pending).to_contain_text("It was a joke between friends.")
    shot(mod, "appeals", "mod-")
    pending.get_by_role("button", name="Reject").click()
    expect(
        m.get_by_role("list", name="Appeals").locator("li", has_text=f"@{poster_name}")
    ).to_have_count(0)

    peer = Host()
    try:
        pair = signing.KeyPair.generate()
        actor = peer.actor("visitor", pair)
        target = f"{web.url}/users/{poster_name}"
        assert inbox_post(web, pair, actor, target) == 202  # taken before the block
        moderation(m, "Domain blocks")
        m.get_by_label("Domain", exact=True).fill(peer.name)
        m.get_by_label("Severity").select_option("suspend")
        m.get_by_label("Reject media files").check()
        m.get_by_label("Private comment (staff only)").fill("a test peer")
        m.get_by_role("button", name="Block", exact=True).click()
        blocked = m.get_by_role("list", name="Blocked domains").locator("li", has_text=peer.name)
        expect(blocked).to_contain_text("Suspend")
        assert inbox_post(web, pair, actor, target) == 403  # refused at once
        shot(mod, "domains", "mod-")
        # edited in place (PUT /api/v1/admin/domain_blocks/:id)
        blocked.get_by_role("button", name=f"Edit the block of {peer.name}").click()
        edit = m.get_by_role("dialog", name=f"Edit the block of {peer.name}")
        expect(edit.get_by_label("Reject media files")).to_be_checked()
        edit.get_by_label("Severity").select_option("silence")
        edit.get_by_label("Reject media files").uncheck()
        edit.get_by_label("Reject reports").check()
        edit.get_by_label("Obfuscate the domain in the public list").check()
        edit.get_by_label("Public comment").fill("too noisy")
        shot(mod, "domain-edit", "mod-")
        edit.get_by_role("button", name="Save").click()
        expect(blocked).to_contain_text("Limit")
        expect(blocked).to_contain_text("reports rejected")
        expect(blocked).to_contain_text("Public: too noisy")
        expect(blocked).not_to_contain_text("media rejected")
        (stored,) = [
            b
            for b in httpx.get(
                web.url + "/api/v1/admin/domain_blocks",
                headers={"Authorization": "Bearer " + mod.token()},
            ).json()
            if b["domain"] == peer.name
        ]
        assert (stored["severity"], stored["reject_media"], stored["reject_reports"]) == (
            "silence",
            False,
            True,
        )
        assert stored["obfuscate"] is True and stored["private_comment"] == "a test peer"
        blocked.get_by_role("button", name=f"Remove the block of {peer.name}").click()
        m.get_by_role("dialog", name=f"Unblock {peer.name}").get_by_role(
            "button", name="Remove"
        ).click()
        expect(
            m.get_by_role("list", name="Blocked domains").locator("li", has_text=peer.name)
        ).to_have_count(0)
        assert inbox_post(web, pair, actor, target) == 202
    finally:
        peer.close()
        for b in httpx.get(
            web.url + "/api/v1/admin/domain_blocks",
            headers={"Authorization": "Bearer " + mod.token()},
        ).json():
            if b["domain"] == peer.name:
                mod.api("DELETE", f"/api/v1/admin/domain_blocks/{b['id']}")

    # the server's rules, settings and sign-up mode; the audit log
    moderation(m, "Server")
    m.get_by_label("New rule").fill("Be civil")
    m.get_by_role("button", name="Add rule").click()
    expect(m.get_by_role("list", name="Rules")).to_contain_text("Be civil")
    assert "Be civil" in [r["text"] for r in httpx.get(web.url + "/api/v1/instance/rules").json()]
    m.get_by_role("button", name="Remove rule: Be civil").click()
    expect(m.get_by_role("list", name="Rules")).not_to_contain_text("Be civil")
    about = m.get_by_role("form", name="About this server")
    about.get_by_label("Contact e-mail").fill("staff@example.com")
    about.get_by_role("button", name="Save").click()
    expect(m.get_by_role("status").filter(has_text="Server settings saved")).to_be_visible()
    contact = httpx.get(web.url + "/api/v2/instance").json()["contact"]
    assert contact["email"] == "staff@example.com"
    signups = m.get_by_role("form", name="Sign-ups")
    expect(signups.get_by_label("Who can sign up")).to_have_value("open")
    signups.get_by_label("Who can sign up").select_option("approval")
    signups.get_by_label("Ask a reason of those awaiting approval").check()
    shot(mod, "server", "mod-")
    signups.get_by_role("button", name="Save").click()
    expect(m.get_by_role("status").filter(has_text="Sign-up mode saved")).to_be_visible()
    try:
        regs = httpx.get(web.url + "/api/v2/instance").json()["registrations"]
        assert regs["approval_required"] is True and regs["reason_required"] is True
        # a sign-up now waits: approved from Accounts (pending)
        waiting = "mw" + uuid.uuid4().hex[:8]
        app = httpx.post(
            web.url + "/api/v1/apps",
            data={
                "client_name": "t",
                "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
                "scopes": "read write",
            },
        ).json()
        grant = httpx.post(
            web.url + "/oauth/token",
            data={
                "grant_type": "client_credentials",
                "scope": "read write",
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
            },
        ).json()
        made = httpx.post(
            web.url + "/api/v1/accounts",
            headers={"Authorization": "Bearer " + grant["access_token"]},
            data={
                "username": waiting,
                "email": f"{waiting}@example.com",
                "password": PASSWORD,
                "agreement": "true",
                "reason": "I know the moderators",
            },
        )
        assert made.status_code == 200, made.text
        assert password_grant(web, waiting) != 200
        moderation(m, "Accounts")
        m.get_by_label("Username").fill(waiting)
        m.get_by_label("Status").select_option("pending")
        m.get_by_role("button", name="Search").click()
        row = m.get_by_role("list", name="Accounts").locator("li")
        expect(row).to_have_count(1)
        expect(row).to_contain_text("I know the moderators")
        expect(row).to_contain_text("pending")
        row.get_by_role("button", name="Approve").click()
        expect(row).to_contain_text(f"@{waiting} approved.")
        assert password_grant(web, waiting) == 200
    finally:
        admin(server, "registrations", "open", "--message", "", "--reason-optional")
        mod.api("PUT", "/api/v1/redpoll/admin/settings", data={"email": ""})

    # a suspension lifted from the account's page
    moderation(m, "Accounts")
    m.get_by_label("Username").fill(spammer_name)
    m.get_by_role("button", name="Search").click()
    m.get_by_role("list", name="Accounts").get_by_role("link", name=f"@{spammer_name}").click()
    m.get_by_role("button", name="Lift the suspension").click()
    expect(m.get_by_role("group", name=f"Act on @{spammer_name}")).to_be_visible()
    expect(m.locator(".mod-states")).to_have_count(0)
    moderation(m, "Audit log")
    log = m.get_by_role("list", name="Audit log")
    expect(log).to_contain_text("suspend")
    expect(log).to_contain_text(peer.name)
    shot(mod, "audit", "mod-")

    # the same screens fit a phone
    small = people(PHONE)
    small.page.goto("/")
    small.page.evaluate(
        "s => localStorage.setItem('redpoll.session', s)",
        mod.page.evaluate("localStorage.getItem('redpoll.session')"),
    )
    q = small.page
    for section in ("Reports", "Accounts", "Appeals", "Domain blocks", "Server", "Audit log"):
        q.goto("/")
        q.get_by_role("button", name="More", exact=True).click()
        q.get_by_role("link", name="Moderation").click()
        q.get_by_role("navigation", name="Moderation").get_by_role("link", name=section).click()
        expect(q.get_by_role("heading", level=1)).to_have_text(section)
        shot(small, section.lower().replace(" ", "-"))
        wide = q.evaluate("document.documentElement.scrollWidth")
        assert wide <= PHONE["width"], (section, wide)
    q.goto(report_path)
    q.get_by_role("button", name="Suspend").click()
    dialog = q.get_by_role("dialog", name=re.compile("Suspend the account"))
    expect(dialog.get_by_label("E-mail the member")).to_be_checked()
    shot(small, "suspend-dialog", "mod-")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    shot(small, "report", "mod-")
