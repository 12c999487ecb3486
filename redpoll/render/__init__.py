"""Mastodon entities rendered from engine records, shared by the REST API
(redpoll.api) and the streams (redpoll.stream): the entity builders
(:mod:`.entities`) and the status renderings kept per process
(:mod:`.rendered`)."""
