"""The Mastodon client API (REST, JSON) over the engine: ``redpoll serve``.

Modules: ``app`` (routes, lifespan), ``http`` (params, errors, auth and rate
limits per endpoint), one module per resource (``oauth``, ``accounts``,
``statuses``, ``lists``, ``instance``), ``openapi`` (the served document) and
``serve`` (the process supervisor). The Mastodon JSON shapes come from
``redpoll.render``, shared with the streams. The HTTP load generator is
``redpoll.tools.bench_http``.
"""
