"""E-mail in Debian's Chromium against a real ``redpoll serve`` sending
through a real SMTP server (aiosmtpd): a forgotten password from the
sign-in page's link to signing in with the new one, and changing one's
address in Settings, effective once the new address's link is followed."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from playwright.sync_api import expect
from support.browser import DESKTOP, PASSWORD, PHONE, Person, browser, fresh_serve, shot  # noqa: F401
from support.smtp import free_port, link_in, smtp, text_of  # noqa: F401


@pytest.fixture(scope="module")
def web(server, smtp):  # noqa: F811
    port = free_port()
    env = {**smtp.env(), "REDPOLL_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    with fresh_serve(server, env, args=["--port", str(port)]) as srv:
        yield srv


@pytest.fixture
def person(browser, web):  # noqa: F811
    made: list[Person] = []

    def make(viewport=DESKTOP) -> Person:
        made.append(Person(browser, web, viewport))
        return made[-1]

    yield make
    for p in made:
        p.context.close()
    problems = [x for p in made for x in p.problems]
    assert not problems, "\n".join(problems)


def confirmed_account(web, smtp) -> tuple[str, str]:  # noqa: F811
    """(username, address) of a new account whose address is confirmed."""
    name = f"w{uuid.uuid4().hex[:8]}"
    address = f"{name}@example.com"
    app = httpx.post(
        web.url + "/api/v1/apps",
        data={
            "client_name": "t",
            "redirect_uris": "urn:ietf:wg:oauth:2.0:oob",
            "scopes": "read write",
        },
    ).json()
    token = httpx.post(
        web.url + "/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_id": app["client_id"],
            "client_secret": app["client_secret"],
            "scope": "read write",
        },
    ).json()["access_token"]
    r = httpx.post(
        web.url + "/api/v1/accounts",
        headers={"Authorization": f"Bearer {token}"},
        data={"username": name, "email": address, "password": PASSWORD, "agreement": "true"},
    )
    assert r.status_code == 200, r.text
    assert httpx.get(link_in(smtp.wait_for(address))).status_code == 200
    return name, address


def sign_in(page, name: str, password: str) -> None:
    page.get_by_label("Username or e-mail").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_forgotten_password_from_the_sign_in_page_to_signing_in(person, web, smtp):  # noqa: F811
    name, address = confirmed_account(web, smtp)
    ann = person(PHONE)
    p = ann.page
    p.goto("/")
    p.get_by_role("button", name="Sign in").first.click()
    expect(p.get_by_role("heading", level=1)).to_have_text("Sign in to Redpoll")
    p.get_by_role("link", name="Forgot your password?").click()
    expect(p.get_by_role("heading", level=1)).to_have_text("Forgot your password?")
    p.get_by_label("E-mail").fill(address)
    p.get_by_role("button", name="Send the link").click()
    expect(p.get_by_role("status")).to_contain_text("a link to choose a new password is on its way")
    shot(ann, "forgot-password-sent")
    link = link_in(smtp.wait_for(address, 2))
    p.goto(link)
    expect(p.get_by_role("heading", level=1)).to_have_text("Choose a new password")
    p.get_by_label("New password", exact=True).fill("a brand new secret")
    p.get_by_label("New password again").fill("not the same one")
    p.get_by_role("button", name="Set the new password").click()
    expect(p.get_by_role("alert")).to_have_text("The two passwords differ.")
    ann.expected_error(422, "/auth/password/edit")
    p.get_by_label("New password", exact=True).fill("a brand new secret")
    p.get_by_label("New password again").fill("a brand new secret")
    shot(ann, "reset-password")
    p.get_by_role("button", name="Set the new password").click()
    expect(p.get_by_role("heading", level=1)).to_have_text("Password changed")
    p.get_by_role("link", name="Sign in").click()
    p.get_by_role("button", name="Sign in").first.click()
    sign_in(p, name, "a brand new secret")
    expect(p.get_by_role("textbox", name="Compose")).to_be_visible()
    # the link worked once
    p.goto(link)
    expect(p.get_by_role("alert")).to_contain_text("This link does not work")
    ann.expected_error(400, "/auth/password/edit")


def test_changing_the_address_in_settings(person, web, smtp):  # noqa: F811
    name, address = confirmed_account(web, smtp)
    bo = person(DESKTOP)
    p = bo.page
    p.goto("/")
    p.get_by_role("button", name="Sign in").first.click()
    sign_in(p, name, PASSWORD)
    expect(p.get_by_role("textbox", name="Compose")).to_be_visible()
    p.get_by_role("link", name="Settings", exact=True).click()
    section = p.locator("form[aria-labelledby=email-head]")
    expect(section).to_contain_text(f"Your address: {address}.")
    new = f"new-{name}@example.com"
    section.get_by_label("New e-mail address").fill(new)
    section.get_by_label("Password, to confirm it is you").fill("not the password")
    section.get_by_role("button", name="Change e-mail").click()
    expect(section.get_by_role("alert")).to_have_text("The current password is not right.")
    bo.expected_error(422, "/api/v1/redpoll/email")
    assert smtp.to(new) == []
    section.get_by_label("Password, to confirm it is you").fill(PASSWORD)
    section.get_by_role("button", name="Change e-mail").click()
    expect(p.get_by_role("status").filter(has_text=f"Check {new}")).to_be_visible()
    expect(section).to_contain_text(f"{new} waits for its link to be followed")
    section.scroll_into_view_if_needed()
    shot(bo, "email-change")
    told = smtp.wait_for(address, 2)
    assert new in text_of(told)
    p.goto(link_in(smtp.wait_for(new)))
    expect(p.get_by_role("heading", level=1)).to_have_text("E-mail address confirmed")
    p.get_by_role("link", name="Go to Redpoll").click()
    p.get_by_role("link", name="Settings", exact=True).click()
    expect(p.locator("form[aria-labelledby=email-head]")).to_contain_text(f"Your address: {new}.")


def test_signing_up_asks_to_confirm_the_address_first(person, web, smtp):  # noqa: F811
    cy = person(PHONE)
    p = cy.page
    name = f"w{uuid.uuid4().hex[:8]}"
    address = f"{name}@example.com"
    p.goto("/signup")
    p.get_by_label("Username").fill(name)
    p.get_by_label("E-mail").fill(address)
    p.get_by_label("Password").fill(PASSWORD)
    p.get_by_role("checkbox", name=re.compile("I agree")).check()
    p.get_by_role("button", name="Sign up").click()
    expect(p.locator(".pending")).to_contain_text("follow the link just mailed")
    expect(p.get_by_role("button", name="Sign up")).to_have_count(0)  # the account is made
    cy.expected_error(403, "/api/v1/accounts/verify_credentials")
    shot(cy, "sign-up-confirm")
    p.goto(link_in(smtp.wait_for(address)))
    expect(p.get_by_role("heading", level=1)).to_have_text("E-mail address confirmed")
    p.goto("/")
    p.get_by_role("button", name="Sign in").first.click()
    sign_in(p, name, PASSWORD)
    expect(p.get_by_role("textbox", name="Compose")).to_be_visible()
