"""The conversation around a status: replies and threads, mentions, hashtags and
their timelines, direct messages."""
