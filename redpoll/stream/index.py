"""An in-process index from filter predicates to subscribers.

Checking every client's filter against every event costs clients x events;
this index instead looks up the event's keys (id mod 100, author id, author
login and mentions, hashtags, words) and only tests the few candidates it
finds, so an event costs about what it matches. Boxes are few and only
events with a location look at them. :meth:`Filter.matches` is the reference
the index is tested against.
"""

from __future__ import annotations

from collections import defaultdict

from .filters import Event, Filter


class FilterIndex:
    def __init__(self) -> None:
        self._by_residue: list[set] = [set() for _ in range(100)]
        self._by_uid: dict[int, set] = defaultdict(set)
        self._by_login: dict[str, set] = defaultdict(set)
        self._by_tag: dict[str, set] = defaultdict(set)
        #: first word of each phrase -> subscribers (verified with track_matches)
        self._by_word: dict[str, set] = defaultdict(set)
        self._geo: set = set()
        self._by_owner: dict[int, set] = defaultdict(set)
        #: direct streams by their user
        self._by_direct: dict[int, set] = defaultdict(set)
        self._filters: dict = {}
        #: subscribers whose filter hides some accounts (blocks, mutes)
        self._hiding: set = set()
        #: Mastodon public and hashtag streams: no boosts
        self._no_boosts: set = set()
        #: streams of one origin, with media only, or of notifications only
        #: (Filter.narrowed)
        self._narrowed: set = set()
        #: streams by the signed-in user they belong to (relation events)
        self._by_viewer: dict[int, set] = defaultdict(set)

    def __len__(self) -> int:
        return len(self._filters)

    def __contains__(self, sub) -> bool:
        return sub in self._filters

    def subscribers(self):
        return self._filters.keys()

    def viewing(self, uid: int):
        """The subscribers whose streams ``uid`` opened."""
        return self._by_viewer.get(uid, ())

    def _keys(self, f: Filter):
        if f.sample:
            for r in f.sample:
                yield self._by_residue[r], None
        for uid in f.user_ids | f.authors:
            yield self._by_uid, uid
        for login in f.logins:
            yield self._by_login, login
        for tag in f.tags:
            yield self._by_tag, tag
        for word in {p[0] for p in f.phrases if p}:
            yield self._by_word, word
        if f.owner is not None:
            yield self._by_owner, f.owner
        if f.direct and f.viewer is not None:
            yield self._by_direct, f.viewer
        if f.viewer is not None:
            yield self._by_viewer, f.viewer

    def add(self, sub, f: Filter) -> None:
        if sub in self._filters:
            self.remove(sub)
        self._filters[sub] = f
        for table, key in self._keys(f):
            (table if key is None else table[key]).add(sub)
        if f.boxes:
            self._geo.add(sub)
        if f.hidden or f.domains:
            self._hiding.add(sub)
        if not f.boosts:
            self._no_boosts.add(sub)
        if f.narrowed:
            self._narrowed.add(sub)

    def remove(self, sub) -> None:
        f = self._filters.pop(sub, None)
        if f is None:
            return
        for table, key in self._keys(f):
            if key is None:
                table.discard(sub)
            else:
                bucket = table.get(key)
                if bucket is not None:
                    bucket.discard(sub)
                    if not bucket:
                        del table[key]
        self._geo.discard(sub)
        self._hiding.discard(sub)
        self._no_boosts.discard(sub)
        self._narrowed.discard(sub)

    def match(self, ev: Event) -> set:
        """Every subscriber whose filter matches ``ev``."""
        found = self._match(ev)
        if ev.boost and self._no_boosts and found:  # Filter.boosts
            found -= self._no_boosts
        if self._narrowed and ev.owner is None and found:  # origin, media: Filter.keeps
            found = {
                sub for sub in found if sub not in self._narrowed or self._filters[sub].keeps(ev)
            }
        if self._hiding and ev.owner is None:  # blocks and mutes: Filter.hides
            found = {
                sub for sub in found if sub not in self._hiding or not self._filters[sub].hides(ev)
            }
        return found

    def _match(self, ev: Event) -> set:
        if ev.owner is not None:  # a notification: its owner's user streams only
            return {
                sub for sub in self._by_owner.get(ev.owner, ()) if self._filters[sub].notifications
            }
        if not ev.listed:
            # unlisted, private, direct: only user/list streams of the author's
            # followers or of the mentioned, each asked the one visibility
            # decision (Filter.matches -> redpoll.relations.visibility.can_see)
            found = set(self._by_uid.get(ev.uid, ()))
            found |= self._by_direct.get(ev.uid, set())
            for uid in ev.mentioned:
                found |= self._by_owner.get(uid, set())
                found |= self._by_direct.get(uid, set())
            return {sub for sub in found if self._filters[sub].matches(ev)}
        found = set(self._by_residue[ev.sid % 100])
        bucket = self._by_uid.get(ev.uid)
        if bucket:
            found |= bucket
        if self._by_login:
            bucket = self._by_login.get(ev.login)
            if bucket:
                found |= bucket
            for name in ev.mentions:
                bucket = self._by_login.get(name)
                if bucket:
                    found |= bucket
        if self._by_tag:
            for tag in ev.tags:
                bucket = self._by_tag.get(tag)
                if bucket:
                    found |= bucket
        if self._by_word:
            tokens = ev.tokens
            for word in tokens:
                bucket = self._by_word.get(word)
                if bucket:
                    for sub in bucket:
                        if sub not in found and self._filters[sub].track_matches(tokens):
                            found.add(sub)
        if self._geo and ev.point is not None:
            for sub in self._geo:
                if sub not in found and self._filters[sub].in_boxes(ev.point):
                    found.add(sub)
        return found
