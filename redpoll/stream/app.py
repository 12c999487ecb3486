"""A stand-alone app serving only the stream routes (``python -m redpoll.stream``).

The Mastodon-compatible API app mounts the same :class:`StreamService`; this
one exists so the stream can run (and be tested, and benchmarked) on its own.
"""
from __future__ import annotations

import asyncio
import contextlib

from starlette.applications import Starlette

from ..engine import Redpoll
from ..server import EmbeddedServer
from ..settings import Settings
from .http import Verifier
from .service import StreamService


async def resolve_url(settings: Settings) -> str:
    if settings.redis_url:
        return settings.redis_url
    url = await asyncio.to_thread(EmbeddedServer.running_in, settings.data_dir)
    if url is None:
        raise RuntimeError("no REDIS_URL and no embedded server running on REDPOLL_DATA_DIR")
    return url


def create_app(settings: Settings | None = None, verify: Verifier | None = None) -> Starlette:
    settings = settings or Settings.from_env()
    service = StreamService(settings, verify=verify)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        url = await resolve_url(settings)
        engine = await Redpoll.open(settings.with_(redis_url=url))
        service.attach(engine)
        await service.start(url)
        try:
            yield
        finally:
            await service.stop()
            await engine.close()

    app = Starlette(routes=service.routes(), lifespan=lifespan)
    app.state.stream = service
    return app
