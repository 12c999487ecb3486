"""redpoll.render.rendered: status entities rendered once and reused while the
author record they were made from is unchanged."""

from __future__ import annotations

import httpx
import orjson
from support.mastodon import api, new_app, register, serve_env  # noqa: F401
from support.names import unique  # noqa: F401

from redpoll.core.models import Status, User
from redpoll.records import writes
from redpoll.records.state import StatusState
from redpoll.render import entities
from redpoll.render.rendered import RenderedStatuses

BASE = "http://example.test"


def user(**changes) -> User:
    fields = dict(
        id=7,
        login="ann",
        display_name="Ann",
        bio="",
        created_at=1_700_000_000_000,
        followers=1,
        following=2,
        posts=3,
    )
    return User(**(fields | changes))


def status(sid=41) -> Status:
    return Status(
        id=sid, text="hello <world>", created_at=1_700_000_000_123, user_id=7, login="ann"
    )


def test_same_bytes_as_rendering_the_entity_directly():
    kept = RenderedStatuses()
    body = kept.json(status(), user(), BASE, viewer=True)
    assert orjson.loads(body) == entities.status(
        status(), entities.account(user(), BASE), BASE, viewer=True
    )


def test_reused_while_the_author_is_unchanged_and_remade_when_it_changes():
    kept = RenderedStatuses()
    first = kept.head(status(), user(), BASE)
    assert kept.head(status(), user(), BASE) is first  # equal record: reused
    changed = kept.json(status(), user(followers=2, display_name="Ann B"), BASE, viewer=False)
    entity = orjson.loads(changed)
    assert entity["account"]["followers_count"] == 2
    assert entity["account"]["display_name"] == "Ann B"


def test_viewer_and_host_are_part_of_the_key():
    kept = RenderedStatuses()
    anonymous = orjson.loads(kept.json(status(), user(), BASE, viewer=False))
    viewer = orjson.loads(kept.json(status(), user(), BASE, viewer=True))
    other_host = orjson.loads(kept.json(status(), user(), "http://other.test", viewer=False))
    assert "favourited" not in anonymous and viewer["favourited"] is False
    assert other_host["url"].startswith("http://other.test/")
    assert anonymous["url"].startswith(BASE + "/")


def test_array_with_a_missing_author_uses_what_the_status_knows():
    kept = RenderedStatuses()
    body = kept.array([status(1), status(2)], {}, BASE, viewer=False)
    page = orjson.loads(body)
    assert [s["id"] for s in page] == ["1", "2"]
    assert page[0]["account"]["username"] == "ann" and page[0]["account"]["followers_count"] == 0
    assert kept.array([], {}, BASE, viewer=False) == b"[]"


def test_bounded():
    kept = RenderedStatuses(limit=2)
    for sid in (1, 2, 3):
        kept.json(status(sid), user(), BASE, viewer=False)
    assert len(kept._kept) == 2


def test_another_status_under_the_same_id_is_rendered_anew():
    """A wiped database hands out the same ids again."""
    kept = RenderedStatuses()
    kept.json(status(), user(), BASE, viewer=False)
    other = Status(
        id=41, text="something else", created_at=1_800_000_000_000, user_id=7, login="ann"
    )
    assert (
        orjson.loads(kept.json(other, user(), BASE, viewer=False))["content"]
        == "<p>something else</p>"
    )
    assert b"something else" in kept.array([other], {7: user()}, BASE, viewer=False)


def test_a_kept_rendering_holds_only_its_own_bytes():
    """orjson's output can carry a much larger buffer than its length; what
    is kept 20,000 times over must not."""
    import tracemalloc

    kept = RenderedStatuses()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        bodies = [kept.json(status(sid), user(), BASE, viewer=True) for sid in range(1, 201)]
        per_entry = (tracemalloc.get_traced_memory()[0] - before) / len(bodies)
    finally:
        tracemalloc.stop()
    assert per_entry < 4 * len(bodies[0]), per_entry


def test_counts_and_flags_are_never_kept():
    """What changes after posting is appended per call: the same kept head
    serves a page read before and one read after a favourite."""
    kept = RenderedStatuses()
    before = orjson.loads(kept.json(status(), user(), BASE, viewer=True))
    after = orjson.loads(
        kept.json(
            status(),
            user(),
            BASE,
            viewer=True,
            state=StatusState(favourites=3, reblogs=1, replies=2, favourited=True, bookmarked=True),
        )
    )
    assert before["favourites_count"] == 0 and before["favourited"] is False
    assert (after["favourites_count"], after["reblogs_count"], after["replies_count"]) == (3, 1, 2)
    assert after["favourited"] is True and after["bookmarked"] is True
    page = orjson.loads(
        kept.array(
            [status(1), status(2)],
            {7: user()},
            BASE,
            viewer=False,
            states=[StatusState(favourites=5), StatusState()],
        )
    )
    assert [s["favourites_count"] for s in page] == [5, 0]
    assert "favourited" not in page[0]
    assert len(kept._kept) == 3


def test_an_equal_record_read_anew_takes_the_kept_ones_place():
    """Two requests that decoded the same record each have their own object:
    the kept rendering is served to both (equal records) and then held with
    the newer objects, so array()'s identity check passes for them."""
    kept = RenderedStatuses()
    first = kept.head(status(), user(), BASE)
    again, author = status(), user()
    assert kept.head(again, author, BASE) is first
    held = kept._kept.get((41, BASE))
    assert held[0] is again and held[1] is author and held[2] is first


# --- the single-status endpoints through a real ``redpoll serve`` -----------------------


async def test_single_status_endpoints_never_serve_a_stale_kept_rendering(api, rp):
    """GET /api/v1/statuses/:id and /api/v1/statuses?id[]= render from the
    kept renderings the timelines use (one caching rule): after a
    favourite, a change of the author's profile, an edit of the status and a
    delete, each answer is what the records are now."""
    app = new_app(api)
    ann, bob = register(api, app, unique("ann")), register(api, app, unique("bob"))
    toot = ann.status_post("kept words")
    with httpx.Client(base_url=api.url, timeout=30) as http:

        def one(who) -> httpx.Response:
            return http.get(
                f"/api/v1/statuses/{toot.id}",
                headers={"Authorization": f"Bearer {who.access_token}"},
            )

        def many(who) -> list:
            r = http.get(
                "/api/v1/statuses",
                params={"id[]": [str(toot.id)]},
                headers={"Authorization": f"Bearer {who.access_token}"},
            )
            assert r.status_code == 200, r.text
            return r.json()

        first = one(bob)
        assert first.status_code == 200, first.text
        # the same bytes the public timeline serves for it (one renderer)
        public = http.get("/api/v1/timelines/public", params={"limit": 40})
        [shown] = [e for e in orjson.loads(public.content) if e["id"] == str(toot.id)]
        anonymous = http.get(f"/api/v1/statuses/{toot.id}")
        assert orjson.loads(anonymous.content) == shown
        assert first.json()["favourites_count"] == 0 and first.json()["favourited"] is False

        bob.status_favourite(toot.id)
        for entity in (one(bob).json(), *many(bob)):
            assert entity["favourites_count"] == 1 and entity["favourited"] is True
        assert one(ann).json()["favourited"] is False

        ann.account_update_credentials(display_name="Ann Renamed")
        for entity in (one(bob).json(), *many(bob)):
            assert entity["account"]["display_name"] == "Ann Renamed"

        await writes.of(rp.store).update_status(int(toot.id), {"text": "second thoughts"})
        for entity in (one(bob).json(), *many(bob), one(ann).json()):
            assert entity["content"] == "<p>second thoughts</p>"

        ann.status_delete(toot.id)
        assert one(bob).status_code == 404 and one(ann).status_code == 404
        assert many(bob) == []


def test_an_account_is_kept_rendered_while_its_record_is_unchanged():
    kept = RenderedStatuses()
    first = kept.account(user(), BASE)
    assert orjson.loads(first) == entities.account(user(), BASE)
    assert kept.account(user(), BASE) is first  # an equal record: the same bytes
    # a changed record (a new follower, a profile edit) is rendered anew
    changed = orjson.loads(kept.account(user(followers=5, display_name="Ann C"), BASE))
    assert changed["followers_count"] == 5 and changed["display_name"] == "Ann C"
    assert orjson.loads(kept.account(user(), "http://other.test"))["url"].startswith(
        "http://other.test/"
    )


def test_a_notification_from_kept_renderings_is_the_entity_rendered_directly():
    from redpoll.notifications.notifications import Notification

    kept = RenderedStatuses()
    note = Notification(
        id=9,
        type="favourite",
        actor=7,
        status=41,
        created_at=1_700_000_000_500,
        key="k",
        group_key="favourite-41-1",
    )
    body = entities.notification_json(
        note, kept.account(user(), BASE), kept.json(status(), user(), BASE, viewer=True)
    )
    direct = entities.notification(
        note,
        entities.account(user(), BASE),
        entities.status(status(), entities.account(user(), BASE), BASE, viewer=True),
    )
    assert orjson.loads(body) == direct
    follow = Notification(id=10, type="follow", actor=7, status=None, created_at=1, key="f")
    assert orjson.loads(
        entities.notification_json(follow, kept.account(user(), BASE), None)
    ) == entities.notification(follow, entities.account(user(), BASE), None)
