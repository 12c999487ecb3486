"""The Mastodon client API (REST, JSON) over the engine: ``redpoll serve``.

Modules: ``app`` (assembles the handler modules' routes, lifespan), ``http``
(params, errors, auth and rate limits per endpoint, the route declarations),
``contract`` (the OpenAPI pieces handlers describe themselves with, and the
document built from their declarations), one module per resource
(``oauth``, ``accounts``, ``statuses``, ``lists``, ``instance``...) whose
handlers each declare their route and contract, and ``serve`` (the process
supervisor). The Mastodon JSON shapes come from ``redpoll.render``, shared
with the streams. The HTTP load generator is ``redpoll.tools.bench_http``.
"""
