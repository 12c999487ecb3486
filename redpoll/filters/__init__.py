"""Content filters: an account's keyword and status filters (Mastodon's
CustomFilter), by context, and the one rule that says which of them a
status meets (``rules.apply``)."""
