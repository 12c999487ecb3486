"""Notifications: one bounded list per user, grouped as Mastodon's v2 groups them,
each found again by the action that made it."""
