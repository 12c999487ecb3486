"""The same scenario read under different fan-out thresholds, to compare
what each viewer's home shows."""

from __future__ import annotations

import asyncio

from mastodon import Mastodon

from redpoll.accounts import auth
from redpoll.core import keys, limits
from redpoll.relations import follows

NEVER = limits.MAX_ID  # the threshold at "infinity": every author fanned out


async def home_ids(rp, key) -> list[int]:
    return [int(x) for x in await rp.store.client.lrange(key, 0, -1)]


async def walks(read, top: list) -> dict:
    """Every way of paging a home: down by max_id, since_id, up by min_id."""
    out = {"top": [s.id for s in top]}
    down, page = [], await read(limit=4)
    while page:
        down.append([s.id for s in page])
        page = await read(limit=4, max_id=page[-1].id)
    out["down"] = down
    pages20, page = [], await read(limit=20)  # a page of 20: profiles read a few ids first
    while page:
        pages20.append([s.id for s in page])
        page = await read(limit=20, max_id=page[-1].id)
    out["down20"] = pages20
    every = [i for p in down for i in p]
    if len(every) > 6:
        out["since"] = [s.id for s in await read(limit=4, since_id=every[6])]
        up, page = [], await read(limit=3, min_id=every[-1])
        while page:
            up.append([s.id for s in page])
            page = await read(limit=3, min_id=page[0].id)
        out["up"] = up
    return out


def api_reader(m: Mastodon):
    async def read(**cursors):
        page = await asyncio.to_thread(m.timeline_home, **cursors)
        return [type("S", (), {"id": int(s["id"])}) for s in page]

    return read


async def scenario(rp, srv, threshold: int) -> dict:
    """The same actions whatever the threshold; the pages each viewer reads
    (through a real serve too, unless ``srv`` is None)."""
    s = {}
    for name in ("viewer", "viewer2", "big1", "big2", "big3", "small1", "small2", "stranger"):
        s[name] = (await rp.accounts.sign_up(name)).id
    fans = [(await rp.accounts.sign_up(f"fan{i}")).id for i in range(4)]
    for big in ("big1", "big2", "big3"):
        for fan in fans:  # 5 followers with the viewer: large at threshold 3
            await rp.relations.follow(fan, s[big])
    for target in ("big1", "big2", "big3", "small1", "small2"):
        await rp.relations.follow(s["viewer"], s[target])
    for target in ("big1", "small1"):
        await rp.relations.follow(s["viewer2"], s[target])
    await follows.set_show_reblogs(rp.store, s["viewer"], s["big3"], False)  # reblogs=false
    texts = {}

    async def post(who, text, **extra):
        reply = extra.pop("in_reply_to", None)
        status = await rp.statuses.post(s[who], text, extra or None, reply)
        texts[text] = status.id
        return status.id

    await post("small1", "s1 first")
    await post("big1", "b1 first")  # the walk that makes big1 large
    await post("stranger", "not followed")
    for i in range(4):
        await post("big1", f"b1 {i}")
        await post("small1", f"s1 {i}")
        await post("big2", f"b2 {i}")
    await post("big2", "b2 private", visibility="private")
    await post("big2", "@small2 b2 direct", visibility="direct")
    await post("big1", "b1 unlisted", visibility="unlisted")
    await post("big1", "@stranger b1 reply to a stranger", in_reply_to=texts["not followed"])
    await post("big1", "@small1 b1 reply to small1", in_reply_to=texts["s1 0"])
    await rp.statuses.boost(s["big2"], texts["s1 3"])  # its original just below: left out
    await rp.statuses.boost(s["big2"], texts["not followed"])  # shown
    await rp.statuses.boost(s["small2"], texts["b1 3"])  # original (a big one's) just below
    await rp.statuses.boost(s["big3"], texts["s1 2"])  # viewer hides big3's boosts
    await post("big3", "b3 own")
    await rp.statuses.delete(texts["b1 1"], s["big1"])
    await rp.statuses.delete(texts["s1 1"], s["small1"])
    for i in range(3):
        await post("small2", f"s2 {i}")
        await post("big1", f"b1 late {i}")
    await rp.relations.mute(s["viewer"], s["small2"])
    for fan, text in ((fans[0], "b1 0"), (fans[1], "b1 0"), (fans[0], "s1 0")):
        await rp.statuses.favourite(fan, texts[text])  # counts a page shows
    await rp.drain()

    async def big_homes() -> int:
        home = await home_ids(rp, keys.home(s["viewer"]))
        return sum(home.count(texts[t]) for t in texts if t.startswith("b1"))

    posted = await big_homes()  # before the viewer reads: what posting put there
    pages = {
        "viewer": await walks(
            lambda **c: rp.timelines.home(s["viewer"], **c), await rp.timelines.home(s["viewer"])
        ),
        "viewer2": await walks(
            lambda **c: rp.timelines.home(s["viewer2"], **c), await rp.timelines.home(s["viewer2"])
        ),
    }
    await rp.relations.block(s["viewer"], s["big2"])
    await rp.drain()
    pages["blocked"] = await walks(
        lambda **c: rp.timelines.home(s["viewer"], **c), await rp.timelines.home(s["viewer"])
    )
    pages["big_homes"] = (posted, await big_homes())
    pages["texts"] = texts
    if srv is None:  # the engine only
        return pages
    app, _ = await auth.create_app(rp.store, "hybrid", "urn:ietf:wg:oauth:2.0:oob", "read")
    token, _ = await auth.issue_token(rp.store, app, s["viewer"], ("read",))
    m = Mastodon(access_token=token, api_base_url=srv.base, ratelimit_method="throw")
    read = api_reader(m)
    pages["api"] = await walks(read, await read())
    pages["api_counts"] = {
        int(st["id"]): (st["favourites_count"], st["reblogs_count"])
        for st in await asyncio.to_thread(m.timeline_home, limit=40)
    }
    return pages
