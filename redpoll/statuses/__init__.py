"""The status record: reading one or many (with the memo rule), a profile's newest
ids, hashtag history."""
