"""Pins: an account's own statuses shown first on its profile (Mastodon's
featured statuses), at most limits.PINS_MAX of them."""
