"""Direct messages: conversations through Mastodon.py 2.3.3
against a real ``redpoll serve``, both modes; who sees a direct status is
the leak matrix's, this is the conversation list."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from mastodon import MastodonNotFoundError
from support.mastodon import accounts  # noqa: F401

from redpoll.conversations import direct_messages
from redpoll.core import keys, limits

pytestmark = pytest.mark.timeout(240)


async def test_conversations_list_read_and_delete(srv, rp):
    ann, ben, cat = await asyncio.to_thread(accounts, srv.base, 3)
    me = {k: await asyncio.to_thread(m.me) for k, m in (("ann", ann), ("ben", ben), ("cat", cat))}
    first = ann.status_post(f"@{me['ben']['username']} psst", visibility="direct")
    reply = ben.status_post(
        f"@{me['ann']['username']} hi back", visibility="direct", in_reply_to_id=first["id"]
    )
    other = ann.status_post(f"@{me['cat']['username']} another thread", visibility="direct")
    ann.status_post("a public one is no conversation")

    convs = ann.conversations()
    assert [c["last_status"]["id"] for c in convs] == [other["id"], reply["id"]]
    thread = convs[1]
    assert thread["id"] == str(first["id"]) and thread["unread"] is True  # ben's reply
    assert [a["id"] for a in thread["accounts"]] == [me["ben"]["id"]]
    assert convs[0]["unread"] is False  # ann wrote the last one
    assert [a["id"] for a in convs[0]["accounts"]] == [me["cat"]["id"]]
    # ben sees the same thread, read by his own reply; cat only hers
    assert [(c["id"], c["unread"]) for c in ben.conversations()] == [(str(first["id"]), False)]
    assert [(c["id"], c["unread"]) for c in cat.conversations()] == [(str(other["id"]), True)]
    # paging by last status id
    assert [c["last_status"]["id"] for c in ann.conversations(limit=1)] == [other["id"]]
    assert [c["last_status"]["id"] for c in ann.conversations(max_id=other["id"])] == [reply["id"]]
    # read, then delete (only from ann's list)
    assert ann.conversations_read(thread["id"])["unread"] is False
    assert [c["unread"] for c in ann.conversations()] == [False, False]
    auth = {"Authorization": f"Bearer {ann.access_token}"}
    # unread again (Mastodon's /unread), then read; another's is not found
    again = httpx.post(f"{srv.base}/api/v1/conversations/{thread['id']}/unread", headers=auth)
    assert again.status_code == 200 and again.json()["unread"] is True
    assert [c["unread"] for c in ann.conversations()] == [False, True]
    assert ann.conversations_read(thread["id"])["unread"] is False
    cat_auth = {"Authorization": f"Bearer {cat.access_token}"}
    theirs = httpx.post(f"{srv.base}/api/v1/conversations/{thread['id']}/unread", headers=cat_auth)
    assert theirs.status_code == 404
    gone = httpx.delete(f"{srv.base}/api/v1/conversations/{thread['id']}", headers=auth)
    assert gone.status_code == 200, gone.text
    assert [c["id"] for c in ann.conversations()] == [str(other["id"])]
    assert [c["id"] for c in ben.conversations()] == [str(first["id"])]
    with pytest.raises(MastodonNotFoundError):
        cat.conversations_read(thread["id"])  # not hers
    missing = httpx.delete(f"{srv.base}/api/v1/conversations/{thread['id']}", headers=auth)
    assert missing.status_code == 404
    # a new message brings the conversation back, unread
    ben.status_post(
        f"@{me['ann']['username']} still there?", visibility="direct", in_reply_to_id=reply["id"]
    )
    top = ann.conversations()[0]
    assert (top["id"], top["unread"]) == (str(first["id"]), True)


async def test_touch_is_idempotent_and_order_proof(rp):
    a, b = await rp.accounts.sign_up("dmx1"), await rp.accounts.sign_up("dmx2")
    new = await rp.statuses.post(a.id, f"@{b.login} newer", {"visibility": "direct"})
    old = await rp.statuses.post(a.id, f"@{b.login} older", {"visibility": "direct"})
    assert old.id > new.id  # (posted second: the larger id)
    await direct_messages.after_post(rp.store, old, [b.id])  # a replay
    convs = await direct_messages.page(rp.store, b.id)
    assert {(c.id, c.last_status) for c in convs} == {(new.id, new.id), (old.id, old.id)}
    # a late replay of an older status of a conversation leaves its newer last status
    reply = await rp.statuses.post(
        b.id, f"@{a.login} answer", {"visibility": "direct"}, in_reply_to=new.id
    )
    await direct_messages.after_post(rp.store, new, [b.id])
    (conv,) = [c for c in await direct_messages.page(rp.store, a.id) if c.id == new.id]
    assert conv.last_status == reply.id and conv.unread
    assert await rp.store.client.zcard(keys.dm_conversations(a.id)) <= limits.DM_CONVERSATIONS_MAX


async def test_bad_cursors_are_a_422(srv, rp):
    (ann,) = await asyncio.to_thread(accounts, srv.base, 1)
    r = httpx.get(
        srv.base + "/api/v1/conversations?max_id=%F3%B2%B7%A4&min_id=4",
        headers={"Authorization": f"Bearer {ann.access_token}"},
    )
    assert r.status_code == 422 and "max_id" in r.json()["error"], r.text
