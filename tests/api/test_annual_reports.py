"""Annual reports (Mastodon's Wrapstodon) through Mastodon.py against a real
``redpoll serve`` with the campaign open for this year (one server and the
cluster): the state before and after, the report made by the job (the
archetype, the year's statuses and followers gained, the hashtag used most,
the most boosted public or unlisted post), the list of unread ones and the
read mark, nobody else's, a deleted top status left out of ``statuses``;
and the campaign's window as Mastodon's."""

from __future__ import annotations

import asyncio
import calendar
import time

import httpx
import pytest
from mastodon import MastodonAPIError, MastodonNotFoundError
from support.mastodon import LOOSE, accounts
from support.streams import StreamProc

from redpoll.annual import reports
from redpoll.annual.reports import campaign
from redpoll.core.errors import ConfigError
from redpoll.core.settings import Settings

pytestmark = [pytest.mark.topology, pytest.mark.timeout(180)]

YEAR = time.gmtime().tm_year


@pytest.fixture(scope="module")
def wrapped(server, tmp_path_factory):
    """``redpoll serve`` with this year's campaign open (no job workers:
    the tests drain with ``rp``)."""
    url, cluster, _ = server
    proc = StreamProc(
        url,
        cluster,
        tmp_path_factory.mktemp("annual"),
        REDPOLL_WRAPSTODON=str(YEAR),
        **LOOSE,
    ).start()
    yield proc
    proc.stop()


def call(m, name: str, *args, **kwargs):
    return asyncio.to_thread(getattr(m, name), *args, **kwargs)


def code_of(exc: pytest.ExceptionInfo) -> int:
    return exc.value.args[1]


async def test_a_report_is_made_on_request_and_shown_to_its_member_only(wrapped, rp):
    me, fan, other = await asyncio.to_thread(accounts, wrapped.base, 3)
    my_id = str((await call(me, "me"))["id"])
    await call(fan, "account_follow", my_id)
    theirs = await call(other, "status_post", "hello there")
    one = await call(me, "status_post", "first #Birds")
    await call(me, "status_post", "second #birds")
    top = await call(me, "status_post", "third #cats", visibility="unlisted")
    await call(me, "status_post", "followers only #birds", visibility="private")
    await call(me, "status_post", "a reply", in_reply_to_id=theirs["id"])
    await call(me, "status_reblog", theirs["id"])
    await call(fan, "status_reblog", top["id"])
    await call(other, "status_reblog", top["id"])
    await call(fan, "status_reblog", one["id"])
    await call(fan, "status_favourite", one["id"])
    await rp.drain()

    assert (await call(me, "annual_report_state", YEAR))["state"] == "eligible"
    # no hashtag this year: not eligible; another year: not the campaign's
    assert (await call(other, "annual_report_state", YEAR))["state"] == "ineligible"
    assert (await call(me, "annual_report_state", YEAR - 1))["state"] == "ineligible"
    with pytest.raises(MastodonNotFoundError):
        await call(me, "annual_report", YEAR)

    asked = await asyncio.to_thread(
        httpx.post,
        f"{wrapped.base}/api/v1/annual_reports/{YEAR}/generate",
        headers={"Authorization": f"Bearer {me.access_token}"},
    )
    assert asked.status_code == 202 and asked.json() == {}
    assert (await call(me, "annual_report_state", YEAR))["state"] == "generating"
    await call(me, "annual_report_generate", YEAR)  # queued already: nothing more
    await rp.drain()
    assert (await call(me, "annual_report_state", YEAR))["state"] == "available"

    wrapped_one = await call(me, "annual_report", YEAR)
    (report,) = wrapped_one["annual_reports"]
    assert report["year"] == YEAR and report["schema_version"] == 2
    assert str(report["account_id"]) == my_id and report["share_url"] is None
    data = report["data"]
    assert data["archetype"] == "lurker"  # fewer than Mastodon's 113 a year
    # six statuses of every visibility, the boost too; one follower gained
    assert data["time_series"] == [{"month": 12, "statuses": 6, "followers": 1}]
    # the one hashtag used most, more than once, private statuses counted
    assert [(t["name"].lower(), t["count"]) for t in data["top_hashtags"]] == [("birds", 3)]
    assert data["top_statuses"] == {
        "by_reblogs": str(top["id"]),
        "by_favourites": None,
        "by_replies": None,
    }
    assert [str(s["id"]) for s in wrapped_one["statuses"]] == [str(top["id"])]
    assert [str(a["id"]) for a in wrapped_one["accounts"]] == [my_id]

    # asked again: made already (200), the same report
    again = await asyncio.to_thread(
        httpx.post,
        f"{wrapped.base}/api/v1/annual_reports/{YEAR}/generate",
        headers={"Authorization": f"Bearer {me.access_token}"},
    )
    assert again.status_code == 200

    # the list: the unread ones; read marks it, and it leaves the list
    listed = await call(me, "annual_reports")
    assert [r["year"] for r in listed["annual_reports"]] == [YEAR]
    await call(me, "annual_report_read", YEAR)
    assert (await call(me, "annual_reports"))["annual_reports"] == []
    assert (await call(me, "annual_report", YEAR))["annual_reports"][0]["year"] == YEAR

    # nobody else's: 404, and nothing to mark read
    with pytest.raises(MastodonNotFoundError):
        await call(other, "annual_report", YEAR)
    with pytest.raises(MastodonAPIError) as refused:
        await call(other, "annual_report_read", YEAR)
    assert code_of(refused) == 404
    assert (await call(other, "annual_reports"))["annual_reports"] == []

    # a deleted top status: still named, no longer shown
    await call(me, "status_delete", top["id"])
    await rp.drain()
    after = await call(me, "annual_report", YEAR)
    assert after["annual_reports"][0]["data"]["top_statuses"]["by_reblogs"] == str(top["id"])
    assert after["statuses"] == []

    # what is not a year: no report
    for bad in ("abc", "20261"):
        r = await asyncio.to_thread(
            httpx.get,
            f"{wrapped.base}/api/v1/annual_reports/{bad}",
            headers={"Authorization": f"Bearer {me.access_token}"},
        )
        assert r.status_code == 404, r.text
    # the instance names the campaign's year; a token is needed for the rest
    instance = (await asyncio.to_thread(httpx.get, f"{wrapped.base}/api/v2/instance")).json()
    assert instance["wrapstodon"] == YEAR
    anon = await asyncio.to_thread(httpx.get, f"{wrapped.base}/api/v1/annual_reports")
    assert anon.status_code == 401


def test_the_campaign_is_mastodons_window_unless_set():
    def at(month: int, day: int) -> float:
        return calendar.timegm((2026, month, day, 12, 0, 0))

    assert campaign("on", at(12, 9)) is None
    assert campaign("on", at(12, 10)) == 2026
    assert campaign("on", at(12, 31)) == 2026
    assert campaign("on", at(11, 20)) is None
    assert campaign("off", at(12, 20)) is None
    assert campaign("2025", at(3, 1)) == 2025


def test_the_campaign_setting_is_checked_at_start():
    assert Settings.from_env({}).wrapstodon == "on"
    assert Settings.from_env({"REDPOLL_WRAPSTODON": "2025"}).wrapstodon == "2025"
    assert Settings.from_env({"REDPOLL_WRAPSTODON": "OFF"}).wrapstodon == "off"
    for bad in ("yes", "26", "20x6"):
        with pytest.raises(ConfigError) as refused:
            Settings.from_env({"REDPOLL_WRAPSTODON": bad})
        assert "REDPOLL_WRAPSTODON" in str(refused.value)


async def test_making_a_report_again_writes_the_same_one(rp):
    name = "annual" + str(time.time_ns())[-8:]
    uid = (await rp.auth.register(name, f"{name}@example.com", "correct horse battery")).id
    await rp.statuses.post(uid, "one #Owls")
    await rp.statuses.post(uid, "two #owls")
    await reports.generate(rp.store, uid, YEAR)
    first = await reports.report(rp.store, uid, YEAR)
    await reports.generate(rp.store, uid, YEAR)  # a replayed job
    again = await reports.report(rp.store, uid, YEAR)
    assert first is not None and again == first
    assert [(t["name"].lower(), t["count"]) for t in first.data["top_hashtags"]] == [("owls", 2)]
    assert first.data["time_series"][0]["statuses"] == 2
    # another year: none of these statuses
    await reports.generate(rp.store, uid, YEAR - 1)
    old = await reports.report(rp.store, uid, YEAR - 1)
    assert old is not None and old.data["time_series"][0]["statuses"] == 0
    assert old.data["top_statuses"]["by_reblogs"] is None
