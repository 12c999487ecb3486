"""Quotes leak nothing: a public status quoting a followers-only one (its
author may quote their own) shows the quoted status only to those who may
see it, decided by the one visibility decision when it is shown, on every
read path (by id, several by id, the public, tag and home timelines, the
profile, a thread, a boost of it, a notification, the quotes list), through
Mastodon.py 2.3.3 against a real ``redpoll serve``, in both topologies.
Others get the quote's state ``unauthorized`` and no quoted status; a
follower who stops following is shown nothing of it from then on."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest
from support.mastodon import accounts

pytestmark = [pytest.mark.topology, pytest.mark.timeout(240)]

#: the quote as shown to who may not see the quoted status: a Quote, or
#: inside a quote of it, a ShallowQuote
HIDDEN = (
    {"state": "unauthorized", "quoted_status": None},
    {"state": "unauthorized", "quoted_status_id": None},
)


def shows(quote: dict, sid: str) -> bool:
    """Whether ``quote`` (a Quote or a ShallowQuote) shows the status ``sid``."""
    shown = quote.get("quoted_status") or {"id": quote.get("quoted_status_id")}
    return quote["state"] == "accepted" and shown["id"] == sid


def run(fn, *args, **kwargs):
    return asyncio.to_thread(fn, *args, **kwargs)


def get(srv, path: str, token: str | None = None, **params):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=srv.base, timeout=30, headers=headers) as c:
        answer = c.get(path, params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()


def find(tree, sid: str) -> list[dict]:
    """Every status entity with id ``sid`` anywhere in ``tree``."""
    out = []
    if isinstance(tree, dict):
        if tree.get("id") == sid and "content" in tree:
            out.append(tree)
        for value in tree.values():
            out += find(value, sid)
    elif isinstance(tree, list):
        for value in tree:
            out += find(value, sid)
    return out


async def test_a_quote_of_a_followers_only_status_shows_it_only_to_who_may_see_it(srv):
    alice, fol, stranger = await run(accounts, srv.base, 3)
    for m in (alice, fol, stranger):
        m.version_check_mode = "none"
    alice_me, stranger_me = await run(alice.me), await run(stranger.me)
    await run(fol.account_follow, alice_me["id"])
    secret = "secret" + uuid.uuid4().hex[:8]
    tag = "q" + uuid.uuid4().hex[:8]
    private = await run(alice.status_post, f"{secret} for followers", visibility="private")
    quote = await run(
        alice.status_post,
        f"@{stranger_me['username']} look #{tag}",
        quoted_status_id=private["id"],
    )
    assert quote["quote"]["quoted_status"]["id"] == private["id"]  # to alice herself
    boost = await run(stranger.status_reblog, quote["id"])
    # a quote of the quote: inside it, the quote's own quote (a ShallowQuote)
    # names the followers-only status only to who may see it
    outer = await run(stranger.status_post, "quote of a quote", quoted_status_id=quote["id"])
    token = {"fol": fol.access_token, "stranger": stranger.access_token, "anon": None}

    def paths(who: str) -> list:
        """Every read path that shows the quote, as ``who`` reads it."""
        t = token[who]
        out = [
            get(srv, f"/api/v1/statuses/{quote['id']}", t),
            get(srv, "/api/v1/statuses", t, **{"id[]": [quote["id"]]}),
            get(srv, "/api/v1/timelines/public", t),
            get(srv, f"/api/v1/timelines/tag/{tag}", t),
            get(srv, f"/api/v1/accounts/{alice_me['id']}/statuses", t),
            get(srv, f"/api/v1/statuses/{boost['id']}", t),
            get(srv, f"/api/v1/accounts/{stranger_me['id']}/statuses", t),
        ]
        if t is not None:
            out.append(get(srv, "/api/v1/timelines/home", t))
        if who == "stranger":  # mentioned: the notification names the quote
            out.append(get(srv, "/api/v1/notifications", t))
            out.append(get(srv, "/api/v2/notifications", t))
        return out

    def shallow(who: str) -> dict:
        shown = get(srv, f"/api/v1/statuses/{outer['id']}", token[who])
        assert shown["quote"]["quoted_status"]["id"] == quote["id"]
        return shown["quote"]["quoted_status"]["quote"]

    for who in ("stranger", "anon"):
        assert shallow(who) == {"state": "unauthorized", "quoted_status_id": None}
        for answer in paths(who):
            assert secret not in json.dumps(answer), (who, answer)
            shown = find(answer, quote["id"])
            assert shown, (who, answer)
            assert all(s["quote"] in HIDDEN for s in shown), (who, shown)
    assert shallow("fol") == {"state": "accepted", "quoted_status_id": private["id"]}
    for answer in paths("fol"):
        shown = find(answer, quote["id"])
        assert shown and all(shows(s["quote"], private["id"]) for s in shown)
    listed = await run(alice.status_quotes, private["id"])  # the author's own list
    assert [s["id"] for s in listed] == [quote["id"]]

    # decided when shown: once fol stops following, nothing of it
    await run(fol.account_unfollow, alice_me["id"])
    assert shallow("fol") == {"state": "unauthorized", "quoted_status_id": None}
    for answer in paths("fol"):
        assert secret not in json.dumps(answer)
        assert all(s["quote"] in HIDDEN for s in find(answer, quote["id"]))
