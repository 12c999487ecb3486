"""The Mastodon client API (REST, JSON) over the engine: ``redpoll serve``.

Modules: ``app`` (routes, lifespan), ``http`` (params, errors, auth and rate
limits per endpoint), ``entities`` (Mastodon JSON shapes), one module per
resource (``oauth``, ``accounts``, ``statuses``, ``lists``, ``instance``),
``openapi`` (the served document), ``serve`` (the process supervisor) and
``bench_http`` (the HTTP load generator).
"""
