"""Settings > Export your data in Debian's Chromium against a real
``redpoll serve``: each button saves the file Mastodon's settings would
make, with what the member did in it."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import expect
from support.browser import DESKTOP, PHONE, browser, people, web  # noqa: F401

SHOTS = Path(os.environ.get("REDPOLL_SHOTS", "/tmp/redpoll-shots"))


def test_the_exports_save_the_members_files(people, web):  # noqa: F811
    dee, ann = people(DESKTOP), people(PHONE)
    dee_name, ann_name = dee.sign_up("ex"), ann.sign_up("ex")
    ann_id = ann.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    assert dee.api(
        "POST", f"/api/v1/accounts/{ann_id}/follow", data={"reblogs": "false"}
    ).is_success
    assert dee.api("POST", "/api/v1/domain_blocks", data={"domain": "spam.example"}).is_success
    host = web.url.split("://", 1)[1].rstrip("/")
    for person in (dee, ann):
        p = person.page
        p.goto("/settings")
        section = p.locator("section[aria-labelledby=export-head]")
        expect(section.get_by_role("heading", name="Export your data")).to_be_visible()
        SHOTS.mkdir(parents=True, exist_ok=True)
        section.scroll_into_view_if_needed()
        p.screenshot(path=str(SHOTS / f"settings-export-{person.width}.png"))
    p = dee.page
    section = p.locator("section[aria-labelledby=export-head]")
    with p.expect_download() as got:
        section.get_by_role("button", name="Follows").click()
    follows = got.value
    assert follows.suggested_filename == "following_accounts.csv"
    assert Path(follows.path()).read_text().splitlines() == [
        "Account address,Show boosts,Notify on new posts,Languages",
        f"{ann_name}@{host},false,false,",
    ]
    with p.expect_download() as got:
        section.get_by_role("button", name="Blocked domains").click()
    assert got.value.suggested_filename == "blocked_domains.csv"
    assert Path(got.value.path()).read_text() == "spam.example\n"
    # the other member's follows are their own: none
    ann_section = ann.page.locator("section[aria-labelledby=export-head]")
    with ann.page.expect_download() as got:
        ann_section.get_by_role("button", name="Follows").click()
    assert len(Path(got.value.path()).read_text().splitlines()) == 1
    assert dee_name != ann_name


def test_a_file_exported_by_one_member_is_imported_by_another(people, web, tmp_path):  # noqa: F811
    dee, ann, cat = people(DESKTOP), people(PHONE), people(DESKTOP)
    dee.sign_up("imf")
    ann.sign_up("imf")
    cat_name = cat.sign_up("imf")
    cat_id = cat.api("GET", "/api/v1/accounts/verify_credentials").json()["id"]
    assert dee.api(
        "POST", f"/api/v1/accounts/{cat_id}/follow", data={"reblogs": "false"}
    ).is_success
    p = dee.page
    p.goto("/settings")
    with p.expect_download() as got:
        p.locator("section[aria-labelledby=export-head]").get_by_role(
            "button", name="Follows"
        ).click()
    saved = tmp_path / "following_accounts.csv"
    got.value.save_as(saved)
    q = ann.page
    q.goto("/settings")
    section = q.locator("section[aria-labelledby=import-head]")
    expect(section.get_by_role("heading", name="Import data")).to_be_visible()
    section.get_by_label("What the file holds").select_option("follows")
    section.get_by_label("CSV file").set_input_files(str(saved))
    section.get_by_role("button", name="Import").click()
    done = section.locator("li[data-state=finished]")
    expect(done).to_have_count(1, timeout=30_000)
    expect(done).to_contain_text("Follows (merge), done: 1 of 1 read, 1 imported")
    section.scroll_into_view_if_needed()
    q.screenshot(path=str(SHOTS / f"settings-import-{ann.width}.png"))
    rel = ann.api("GET", "/api/v1/accounts/relationships", params={"id[]": cat_id}).json()[0]
    assert rel["following"] and rel["showing_reblogs"] is False, (cat_name, rel)
    # a file that is not one of Mastodon's is refused, saying why
    bad = tmp_path / "bad.csv"
    bad.write_text("Account address,Show boosts\nsomeone,perhaps\n")
    section.get_by_label("CSV file").set_input_files(str(bad))
    section.get_by_role("button", name="Import").click()
    expect(section.get_by_role("alert")).to_contain_text("true or false")
    expect(section.locator("li")).to_have_count(1)
    ann.expected_error(422, "/api/v1/redpoll/imports")
