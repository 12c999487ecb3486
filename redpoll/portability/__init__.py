"""A member's data to take along: Mastodon's CSV exports of follows, lists,
blocks, mutes, blocked domains and bookmarks (``exports``)."""
