"""Quote posts on one server, as Mastodon 4.5 has them (redpoll.quotes.quotes)."""
