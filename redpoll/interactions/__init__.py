"""Favourites and bookmarks: a viewer marking a status for themselves (its
counts and flags are read with the record: redpoll.records.state)."""
