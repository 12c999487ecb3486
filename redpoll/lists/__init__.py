"""Lists: named sets of accounts with their own timelines."""
