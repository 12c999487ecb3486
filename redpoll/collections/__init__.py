"""Collections (Mastodon 4.6's featured collections of accounts)."""
