"""Remote HTML kept as Mastodon keeps it (redpoll.federation.text.sanitize,
nh3): the allowed elements, attributes, classes and link schemes, every
link opened apart with rel="nofollow noopener noreferrer"; a remote status
shown with that HTML as its ``content`` (its plain text kept beside it for
search, filters and mentions), an Update bringing new HTML, and HTML past
its bound shown from the text. Notes arrive signed from a peer on loopback
(both topologies)."""

from __future__ import annotations

import json
import time

import pytest
from support.federation import HERE, fed  # noqa: F401
from support.peers import Host

from redpoll.core import limits
from redpoll.federation import documents, inbox, remote, signing
from redpoll.federation import keys as fed_keys
from redpoll.federation.jobs import InboxJob
from redpoll.federation.text import sanitize
from redpoll.render import entities

pytestmark = pytest.mark.topology

REL = 'target="_blank" rel="nofollow noopener noreferrer"'


def test_the_allowed_elements_stay_and_everything_else_goes_with_its_attributes():
    markup = (
        "<p>one<br>two <strong>b</strong> <em>i</em> <del>d</del> <code>c</code></p>"
        '<blockquote><p>q</p></blockquote><ul><li>x</li></ul><ol start="3"><li>y</li></ol>'
        "<pre>pre</pre><h2>head</h2><script>alert(1)</script><style>p{}</style>"
        '<img src="x" onerror="y()"><iframe src="https://e.example"></iframe>'
        '<p style="color:red" onclick="z()">styled</p>'
    )
    assert sanitize(markup) == (
        "<p>one<br>two <strong>b</strong> <em>i</em> <del>d</del> <code>c</code></p>"
        '<blockquote><p>q</p></blockquote><ul><li>x</li></ul><ol start="3"><li>y</li></ol>'
        "<pre>pre</pre><p>head</p><p>styled</p>"
    )


def test_links_keep_allowed_schemes_and_classes_and_open_apart():
    markup = (
        '<p><span class="h-card"><a href="https://peer.example/@a" class="u-url mention evil">'
        '@<span>a</span></a></span> <a href="https://peer.example/tags/birds" '
        'class="mention hashtag" rel="tag">#<span>birds</span></a> '
        '<a href="https://peer.example/long"><span class="invisible">https://</span>'
        '<span class="ellipsis">peer.example/lo</span><span class="invisible">ng</span></a> '
        '<a href="javascript:alert(1)">js</a> <a href="data:text/html,x">data</a> '
        '<a href="/relative">rel</a> <a href="gemini://g.example/">gem</a></p>'
    )
    assert sanitize(markup) == (
        f'<p><span class="h-card"><a href="https://peer.example/@a" class="u-url mention" {REL}>'
        f'@<span>a</span></a></span> <a href="https://peer.example/tags/birds" '
        f'class="mention hashtag" {REL}>#<span>birds</span></a> '
        f'<a href="https://peer.example/long" {REL}><span class="invisible">https://</span>'
        '<span class="ellipsis">peer.example/lo</span><span class="invisible">ng</span></a> '
        f"<a {REL}>js</a> <a {REL}>data</a> <a {REL}>rel</a> "
        f'<a href="gemini://g.example/" {REL}>gem</a></p>'
    )


def test_html_past_its_bound_is_not_kept():
    big = "<p>" + "x" * limits.FED_NOTE_HTML_MAX_BYTES + "</p>"
    assert sanitize(big) == ""
    assert sanitize("") == ""


@pytest.fixture
def host():
    one = Host()
    yield one
    one.close()


async def _send(fed, who, activity: dict) -> None:
    await inbox.process(
        fed.store, fed.queue, fed.settings, InboxJob(uid=who.id, activity=json.dumps(activity))
    )


def _note(who, note_id: str, content: str) -> dict:
    return {
        "id": note_id,
        "type": "Note",
        "attributedTo": who.uri,
        "content": content,
        "to": [documents.PUBLIC],
        "cc": [],
    }


async def test_a_remote_status_is_shown_with_its_sanitized_html_and_an_update_brings_new(fed, host):
    pair = signing.KeyPair.generate()
    who = await remote.fetch_actor(fed.store, HERE, host.actor("writer", pair), loopback=True)
    note_id = f"{who.uri}/statuses/{time.time_ns()}"
    first = (
        '<p>Look <a href="https://peer.example/x" onclick="steal()">here</a></p>'
        "<script>steal()</script><blockquote><p>quoted</p></blockquote>"
    )
    await _send(fed, who, {"id": f"{note_id}/c", "type": "Create", "actor": who.uri,
                           "object": _note(who, note_id, first)})  # fmt: skip
    sid = int(await fed.store.get(fed_keys.note(note_id)))
    status = await fed.statuses.get_status(sid)
    kept = f'<p>Look <a href="https://peer.example/x" {REL}>here</a></p><blockquote><p>quoted</p></blockquote>'
    assert status.html == kept
    assert status.text == "Look here\n\nquoted"  # what search and filters read
    entity = entities.status(
        status, entities.account(await fed.accounts.get_user(who.id), HERE), HERE
    )
    assert entity["content"] == kept
    # an Update: the new HTML, sanitized; one with HTML past the bound: shown from its text
    edited = "<p>Now <em>edited</em><img src=x onerror=y()></p>"
    await _send(fed, who, {"id": f"{note_id}/u1", "type": "Update", "actor": who.uri,
                           "object": _note(who, note_id, edited)})  # fmt: skip
    assert (await fed.statuses.get_status(sid)).html == "<p>Now <em>edited</em></p>"
    huge = "<p>" + "y" * limits.FED_NOTE_HTML_MAX_BYTES + "</p>"
    await _send(fed, who, {"id": f"{note_id}/u2", "type": "Update", "actor": who.uri,
                           "object": _note(who, note_id, huge)})  # fmt: skip
    plain = await fed.statuses.get_status(sid)
    assert plain.html == "" and plain.text.startswith("yyy")
    entity = entities.status(
        plain, entities.account(await fed.accounts.get_user(who.id), HERE), HERE
    )
    assert entity["content"].startswith("<p>yyy")


async def test_a_local_status_has_no_html_of_its_own(fed):
    me = await fed.accounts.sign_up("local_writer")
    status = await fed.statuses.post(me.id, "<b>not markup</b> here")
    kept = await fed.statuses.get_status(status.id)
    assert kept.html == ""
    entity = entities.status(kept, entities.account(me, HERE), HERE)
    assert entity["content"] == "<p>&lt;b&gt;not markup&lt;/b&gt; here</p>"
