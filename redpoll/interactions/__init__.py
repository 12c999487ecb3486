"""Favourites and bookmarks, and what changes on a status after it is written: its
counts and the viewer's own flags."""
