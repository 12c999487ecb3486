"""Blocks and mutes through the Mastodon API, beyond the leak
matrix: a home page stays full when muted entries are skipped; the muted
accounts listed with when each mute ends (Mastodon's MutedAccount); both modes."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import pytest
from support.mastodon import accounts  # noqa: F401

pytestmark = pytest.mark.timeout(180)


async def test_a_home_page_stays_full_past_muted_entries(srv, rp):
    me, loud, quiet = await asyncio.to_thread(accounts, srv.base, 3)
    for other in (loud, quiet):
        me.account_follow(other.me()["id"])
    old = [loud.status_post(f"loud {i}")["id"] for i in range(6)]
    for i in range(3):
        quiet.status_post(f"quiet {i}")  # the newest: on top of the home
    rel = me.account_mute(quiet.me()["id"], notifications=False)
    assert rel["muting"] and not rel["muting_notifications"]
    first = me.timeline_home(limit=4)
    assert [s["id"] for s in first] == old[::-1][:4]  # full, though 3 of 4 read were muted
    rest = me.fetch_next(first)
    assert [s["id"] for s in rest] == old[::-1][4:]
    # the muted account's profile still shows everything
    assert len(me.account_statuses(quiet.me()["id"])) == 3
    me.account_unmute(quiet.me()["id"])
    assert len(me.timeline_home(limit=40)) == 9


async def test_muted_accounts_say_when_each_mute_ends(srv):
    me, timed, forever = await asyncio.to_thread(accounts, srv.base, 3)
    me.account_mute(forever.me()["id"])
    before = time.time()
    me.account_mute(timed.me()["id"], duration=3600)
    found = {a["id"]: a for a in me.mutes()}
    assert found[forever.me()["id"]]["mute_expires_at"] is None
    ends = found[timed.me()["id"]]["mute_expires_at"]
    ends = ends.timestamp() if isinstance(ends, datetime) else ends
    assert before + 3590 < ends < time.time() + 3610
    assert list(found) == [timed.me()["id"], forever.me()["id"]]  # newest mute first
