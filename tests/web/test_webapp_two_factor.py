"""Two-factor sign-in end to end in Debian's Chromium against a real
``redpoll serve``: set up in Settings (the key read from the page, the code
computed with pyotp as an authenticator app would), the recovery codes shown
once, signing out and in again with a code on the sign-in page's second
step, and turning it off."""

from __future__ import annotations

import time

import httpx
import pyotp
from playwright.sync_api import expect
from support.browser import DESKTOP, PASSWORD, PHONE, browser, people, shot, web  # noqa: F401


class Phone:
    """The authenticator app: a code of a step it has not given before (the
    server takes each step once), waiting for the clock when it must."""

    def __init__(self, secret: str):
        self.totp = pyotp.TOTP(secret)
        self.last = -1

    def code(self) -> str:
        deadline = time.monotonic() + 70
        while (step := max(self.last + 1, int(time.time() // 30))) > time.time() // 30 + 1:
            assert time.monotonic() < deadline, "the clock did not move on"
            time.sleep(0.5)
        self.last = step
        return self.totp.generate_otp(step)

    def wrong(self) -> str:
        now = int(time.time() // 30)
        near = {self.totp.generate_otp(s) for s in range(now - 3, now + 4)}
        return next(c for c in ("000000", "111111", "222222", "333333") if c not in near)


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


def test_set_up_sign_in_with_a_code_and_turn_it_off(people, web):  # noqa: F811
    dee = people(DESKTOP)
    name = dee.sign_up("tf")
    p = dee.page
    p.get_by_role("link", name="Settings", exact=True).click()
    section = p.locator("section.two-factor")
    expect(section.get_by_role("heading", name="Two-factor authentication")).to_be_visible()
    section.get_by_role("button", name="Set up two-factor authentication").click()
    qr = section.get_by_role("img", name="QR code of your two-factor key")
    expect(qr).to_be_visible()
    assert p.evaluate("document.querySelector('.tfa-qr').naturalWidth") > 0  # it drew
    secret = section.locator(".tfa-secret").inner_text().strip()
    phone = Phone(secret)
    shot(dee, "two-factor-setup")

    # a wrong code: said so, still off
    section.get_by_label("Code from the app").fill(phone.wrong())
    section.get_by_role("button", name="Enable").click()
    expect(section.get_by_role("alert")).to_have_text("The code is not right")
    dee.expected_error(422, "/api/v1/redpoll/two_factor/enable")

    section.get_by_label("Code from the app").fill(phone.code())
    section.get_by_role("button", name="Enable").click()
    codes = section.get_by_role("list", name="Recovery codes").locator("li")
    expect(codes).to_have_count(10)
    shot(dee, "two-factor-recovery-codes")
    section.get_by_role("button", name="I have kept them").click()
    expect(section.get_by_text("On · 10 recovery codes left")).to_be_visible()
    expect(section.locator(".tfa-secret")).to_have_count(0)  # never shown again
    shot(dee, "two-factor-on")
    assert password_grant(web, name) == 400  # the password alone no longer signs in

    # sign out, then in: the password, then a code
    p.get_by_role("button", name="Sign out").first.click()
    p.get_by_role("button", name="Sign in").click()
    p.get_by_label("Username or e-mail").fill(name)
    p.get_by_label("Password").fill(PASSWORD)
    p.get_by_role("button", name="Sign in").click()
    expect(p.get_by_role("heading", level=1)).to_have_text("Sign in to Redpoll")
    expect(p.get_by_label("Code")).to_be_focused()
    expect(p.get_by_label("Password")).to_have_count(0)
    shot(dee, "two-factor-sign-in")
    p.get_by_label("Code").fill(phone.code())
    p.get_by_role("button", name="Verify").click()
    expect(p.get_by_role("textbox", name="Compose")).to_be_visible()

    # off again, with the password
    p.get_by_role("link", name="Settings", exact=True).click()
    section = p.locator("section.two-factor")
    section.get_by_label("A code from your app, or your password").fill(PASSWORD)
    section.get_by_role("button", name="Turn off two-factor authentication").click()
    expect(
        p.get_by_role("status").filter(has_text="Two-factor authentication is off")
    ).to_be_visible()
    expect(section.get_by_role("button", name="Set up two-factor authentication")).to_be_visible()
    assert password_grant(web, name) == 200


def test_the_code_step_fits_a_phone(people, web):  # noqa: F811
    eve = people(PHONE)
    name = eve.sign_up("tp")
    setup = eve.api("POST", "/api/v1/redpoll/two_factor/setup").json()
    phone = Phone(setup["secret"])
    assert eve.api(
        "POST", "/api/v1/redpoll/two_factor/enable", data={"code": phone.code()}
    ).is_success
    p = eve.page
    p.get_by_role("button", name="More", exact=True).click()
    p.get_by_role("button", name="Sign out").click()
    p.get_by_role("button", name="Sign in").click()
    p.get_by_label("Username or e-mail").fill(name)
    p.get_by_label("Password").fill(PASSWORD)
    p.get_by_role("button", name="Sign in").click()
    p.get_by_label("Code").fill(phone.wrong())
    p.get_by_role("button", name="Verify").click()
    expect(p.get_by_role("alert")).to_have_text("Invalid code.")
    eve.expected_error(401, "/oauth/authorize")
    shot(eve, "two-factor-wrong-code")
    p.get_by_label("Code").fill(phone.code())
    p.get_by_role("button", name="Verify").click()
    expect(p.get_by_role("textbox", name="Compose")).to_be_visible()
