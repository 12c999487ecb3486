"""Trends: what public statuses used most of late (hashtags, links) and the statuses most interacted with; see history, links, ranking and statuses."""
