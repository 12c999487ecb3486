"""The feed: which status belongs in a home or a list (home_rule), fan-out
on write (delivery), hybrid fan-out and catch-up for large accounts and
idle users (hybrid), refills and rebuilds (refill), and reading timelines
by id cursors (timelines)."""
