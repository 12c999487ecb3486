"""Search: accounts by prefix, the viewer's statuses by words, hashtags by prefix."""
