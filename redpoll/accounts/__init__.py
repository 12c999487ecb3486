"""Accounts: sign-up, users, log-in, OAuth applications and tokens, the account
search index, read markers and rate limits."""
