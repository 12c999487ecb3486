"""Signing in and one's own account, end to end in Debian's Chromium against
a real ``redpoll serve`` (the fixtures and checks of test_webapp.py): the
sign-in page in the app's look (another app's name and scopes in words,
Authorize; a wrong password keeps the username; a sign-up link), and
Settings' profile fields, password change, apps and devices with Revoke,
account deletion behind a confirmation, and the Report dialog."""

from __future__ import annotations

import json
import re

import httpx
from playwright.sync_api import expect
from support.browser import DESKTOP, PASSWORD, PHONE, browser, people, shot, status_in, web  # noqa: F401

OOB = "urn:ietf:wg:oauth:2.0:oob"


def password_token(web, name: str, password: str = PASSWORD, client: str = "Phone app") -> str:
    app = httpx.post(
        web.url + "/api/v1/apps",
        data={"client_name": client, "redirect_uris": OOB, "scopes": "read write"},
    ).json()
    resp = httpx.post(
        web.url + "/oauth/token",
        data={
            "grant_type": "password",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "username": name,
            "password": password,
            "scope": "read write",
        },
    )
    assert resp.status_code == 200, resp.text
    return resp.json()["access_token"]


def works(web, token: str) -> int:
    return httpx.get(
        web.url + "/api/v1/accounts/verify_credentials",
        headers={"Authorization": "Bearer " + token},
    ).status_code


def test_another_app_is_named_with_its_scopes_in_words_and_authorized(people, web):  # noqa: F811
    for viewport in (DESKTOP, PHONE):
        owner = people(viewport)
        name = owner.sign_up("oa")
        app = httpx.post(
            web.url + "/api/v1/apps",
            data={
                "client_name": "Tusky for tests",
                "redirect_uris": OOB,
                "scopes": "read write follow push",
                "website": "https://tusky.example",
            },
        ).json()
        visitor = people(viewport)
        p = visitor.page
        p.goto(
            "/oauth/authorize?"
            + httpx.QueryParams(
                {
                    "response_type": "code",
                    "client_id": app["client_id"],
                    "redirect_uri": OOB,
                    "scope": "read write follow push",
                }
            ).__str__()
        )
        expect(p.get_by_role("heading", level=1)).to_have_text("Authorize Tusky for tests")
        scopes = p.locator("ul.scopes li")
        expect(scopes).to_have_text(
            [
                "Read your posts and notifications",
                "Post and change things for you",
                "Follow and unfollow",
                "Send you push notifications",
            ]
        )
        expect(p.get_by_role("button", name="Deny")).to_be_visible()
        # the app's look: its colours and font from style.css
        assert (
            p.evaluate("getComputedStyle(document.querySelector('button.primary')).backgroundColor")
            == "rgb(179, 18, 43)"
        )
        shot(visitor, "authorize-app")
        p.get_by_label("Username or e-mail").fill(name)
        p.get_by_label("Password").fill(PASSWORD)
        p.get_by_role("button", name="Authorize").click()
        code = p.locator("#code")
        expect(code).to_be_visible()
        token = httpx.post(
            web.url + "/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code.inner_text(),
                "redirect_uri": OOB,
                "client_id": app["client_id"],
                "client_secret": app["client_secret"],
            },
        ).json()
        assert token["scope"] == "read write follow push"
        assert works(web, token["access_token"]) == 200


def test_sign_in_keeps_the_username_after_a_wrong_password_and_links_to_sign_up(people, web):  # noqa: F811
    ann = people(PHONE)
    name = ann.sign_up("si")
    p = ann.page
    p.get_by_role("button", name="More", exact=True).click()
    p.get_by_role("button", name="Sign out").click()
    p.get_by_role("button", name="Sign in").click()
    expect(p.get_by_role("heading", level=1)).to_have_text("Sign in to Redpoll")
    expect(p.get_by_text("permissions")).to_have_count(0)
    p.get_by_label("Username or e-mail").fill(name)
    p.get_by_label("Password").fill("not the password")
    p.get_by_role("button", name="Sign in").click()
    expect(p.get_by_role("alert")).to_have_text("Invalid username or password.")
    ann.expected_error(401, "/oauth/authorize")
    expect(p.get_by_label("Username or e-mail")).to_have_value(name)
    expect(p.get_by_label("Password")).to_have_value("")
    expect(p.get_by_label("Password")).to_be_focused()
    shot(ann, "sign-in-error")
    p.emulate_media(color_scheme="dark")  # the app's dark colours, from its style sheet
    assert p.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(17, 19, 24)"
    shot(ann, "sign-in-error-dark")
    p.get_by_role("link", name="Create an account").click()
    expect(p.get_by_role("heading", name="Create an account")).to_be_visible()
    expect(p.get_by_role("button", name="Sign up")).to_be_visible()


def test_profile_fields_are_saved_and_shown_on_the_profile(people, web):  # noqa: F811
    bo = people(DESKTOP)
    name = bo.sign_up("pf")
    p = bo.page
    p.get_by_role("link", name="Settings", exact=True).click()
    p.get_by_label("Field 1 label").fill("Website")
    p.get_by_label("Field 1 content").fill("https://bo.example/")
    p.get_by_label("Field 2 label").fill("Pronouns")
    p.get_by_label("Field 2 content").fill("they/them")
    p.get_by_role("button", name="Save").click()
    expect(p.get_by_role("status").filter(has_text="Settings saved")).to_be_visible()
    fields = bo.api("GET", "/api/v1/accounts/verify_credentials").json()["source"]["fields"]
    assert [(f["name"], f["value"]) for f in fields] == [
        ("Website", "https://bo.example/"),
        ("Pronouns", "they/them"),
    ]
    p.goto(f"/@{name}")
    table = p.get_by_role("definition").locator("xpath=..")
    expect(table.locator("dt")).to_have_text(["Website", "Pronouns"])
    expect(table.locator("dd")).to_have_text(["https://bo.example/", "they/them"])
    expect(table.get_by_role("link", name="https://bo.example/")).to_have_attribute(
        "href", "https://bo.example/"
    )
    shot(bo, "profile-fields")
    # a field emptied is gone
    p.get_by_role("link", name="Edit profile").click()
    p.get_by_label("Field 1 label").fill("")
    p.get_by_label("Field 1 content").fill("")
    p.get_by_role("button", name="Save").click()
    expect(p.get_by_role("status").filter(has_text="Settings saved")).to_be_visible()
    fields = bo.api("GET", "/api/v1/accounts/verify_credentials").json()["source"]["fields"]
    assert [(f["name"], f["value"]) for f in fields] == [("Pronouns", "they/them")]


def test_change_password_then_sign_in_with_the_new_one(people, web):  # noqa: F811
    cy = people(DESKTOP)
    name = cy.sign_up("pw")
    other = password_token(web, name)
    p = cy.page
    p.get_by_role("link", name="Settings", exact=True).click()
    p.get_by_label("Current password").fill("not the password")
    p.get_by_label("New password", exact=True).fill("a brand new secret")
    p.get_by_label("New password again").fill("a brand new secret")
    p.get_by_role("button", name="Change password").click()
    expect(p.get_by_role("alert").filter(has_text="current password is not right")).to_be_visible()
    cy.expected_error(422, "/api/v1/redpoll/password")
    p.get_by_label("Current password").fill(PASSWORD)
    p.get_by_role("button", name="Change password").click()
    expect(p.get_by_role("status").filter(has_text="Password changed")).to_be_visible()
    assert works(web, other) == 401  # the other devices are signed out
    assert works(web, cy.token()) == 200  # not this one
    p.get_by_role("button", name="Sign out").first.click()
    p.get_by_role("button", name="Sign in").click()
    p.get_by_label("Username or e-mail").fill(name)
    p.get_by_label("Password").fill("a brand new secret")
    p.get_by_role("button", name="Sign in").click()
    expect(p.get_by_role("textbox", name="Compose")).to_be_visible()


def test_revoke_another_session_and_it_stops_working(people, web):  # noqa: F811
    di = people(PHONE)
    name = di.sign_up("rv")
    phone = password_token(web, name, client="Di's old phone")
    assert works(web, phone) == 200
    p = di.page
    p.get_by_role("button", name="More", exact=True).click()
    p.get_by_role("link", name="Settings").click()
    sessions = p.get_by_role("list", name="Signed-in apps and devices")
    expect(sessions.get_by_role("listitem")).to_have_count(2)
    expect(sessions.get_by_role("listitem").first).to_contain_text("Di's old phone")
    expect(sessions.get_by_role("listitem").last).to_contain_text("this browser")
    sessions.get_by_role("listitem").last.scroll_into_view_if_needed()
    shot(di, "sessions")
    sessions.get_by_role("button", name=re.compile("^Revoke Di's old phone")).click()
    expect(p.get_by_role("status").filter(has_text="Di's old phone signed out")).to_be_visible()
    expect(sessions.get_by_role("listitem")).to_have_count(1)
    assert works(web, phone) == 401
    assert works(web, di.token()) == 200


def test_delete_account_asks_for_the_password_first(people, web):  # noqa: F811
    ed = people(DESKTOP)
    name = ed.sign_up("da")
    token = ed.token()
    assert ed.api("POST", "/api/v1/statuses", data={"status": "soon gone"}).status_code == 200
    p = ed.page
    p.get_by_role("link", name="Settings", exact=True).click()
    p.get_by_role("button", name="Delete account…").click()
    dialog = p.get_by_role("dialog", name="Delete your account?")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Your password").fill("wrong wrong wrong")
    dialog.get_by_role("button", name="Delete for good").click()
    expect(dialog.get_by_role("alert")).to_have_text("The password is not right.")
    ed.expected_error(422, "/api/v1/redpoll/delete_account")
    shot(ed, "delete-account")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert works(web, token) == 200  # nothing happened

    p.get_by_role("button", name="Delete account…").click()
    dialog.get_by_label("Your password").fill(PASSWORD)
    dialog.get_by_role("button", name="Delete for good").click()
    expect(p.get_by_role("status").filter(has_text="Your account was deleted")).to_be_visible()
    expect(p.get_by_role("button", name="Sign in")).to_be_visible()
    assert works(web, token) == 401
    assert httpx.get(web.url + "/api/v1/accounts/lookup", params={"acct": name}).status_code == 404


def test_report_a_status_with_it_preselected_and_a_profile(people, web):  # noqa: F811
    fay, gus = people(DESKTOP), people(PHONE)
    gus_name = gus.sign_up("rg")
    fay.sign_up("rf")
    posted = gus.api("POST", "/api/v1/statuses", data={"status": "buy cheap watches now"}).json()
    p = fay.page
    p.goto(f"/@{gus_name}")
    post = status_in(p, "buy cheap watches")
    post.get_by_role("button", name="More actions").click()
    post.get_by_role("button", name="Report").click()
    dialog = p.get_by_role("dialog", name=f"Report @{gus_name}")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_label("Include this post")).to_be_checked()
    expect(dialog.locator("blockquote")).to_have_text("buy cheap watches now")
    dialog.get_by_label("Reason").select_option("spam")
    dialog.get_by_label("Comment").fill("Spam in every post")
    shot(fay, "report")
    dialog.get_by_role("button", name="Send report").click()
    expect(p.get_by_role("status").filter(has_text="sent to the moderators")).to_be_visible()
    expect(dialog).to_have_count(0)
    sent = [
        json.loads(body)
        for method, url, body in fay.requests
        if method == "POST" and url.endswith("/api/v1/reports")
    ]
    assert sent == [
        {
            "account_id": posted["account"]["id"],
            "category": "spam",
            "comment": "Spam in every post",
            "status_ids": [posted["id"]],
        }
    ]
    # one's own posts have Delete, not Report
    assert gus.api("GET", "/api/v1/accounts/verify_credentials").status_code == 200
    g = gus.page
    g.goto(f"/@{gus_name}")
    expect(status_in(g, "buy cheap watches").get_by_role("button", name="Report")).to_have_count(0)

    # from the profile: the account alone
    p.locator(".relation").get_by_role("button", name="Report").click()
    dialog = p.get_by_role("dialog", name=f"Report @{gus_name}")
    expect(dialog.get_by_label("Include this post")).to_have_count(0)
    dialog.get_by_role("button", name="Send report").click()
    expect(dialog).to_have_count(0)
    sent = [
        json.loads(body)
        for method, url, body in fay.requests
        if method == "POST" and url.endswith("/api/v1/reports")
    ]
    assert sent[-1] == {"account_id": posted["account"]["id"], "category": "other", "comment": ""}
