"""A stand-alone app serving only the stream routes (``python -m redpoll.stream``).

The Mastodon-compatible API app mounts the same :class:`StreamService`; this
one exists so the stream can run (and be tested, and benchmarked) on its own.
"""

from __future__ import annotations

import contextlib

from starlette.applications import Starlette

from ..core.settings import Settings
from ..engine.engine import Redpoll
from ..gateway.auth import Verifier
from .service import StreamService


def create_app(settings: Settings | None = None, verify: Verifier | None = None) -> Starlette:
    settings = settings or Settings.from_env()
    service = StreamService(settings, verify=verify)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        engine = await Redpoll.open(settings)  # works out the Redis URL
        await service.start_for(engine)
        try:
            yield
        finally:
            await service.stop()
            await engine.close()

    app = Starlette(routes=service.routes(), lifespan=lifespan)
    app.state.stream = service
    return app
