"""The fixed limit probe of ``redpoll bench --http``: a bare ASGI app that
answers every request with the same bytes (a real home page of 20, captured
by the bench), on one process of a chosen HTTP stack. What no Python app on
that stack can beat: parse a request, write 26 KB back.

    python -m redpoll.tools.probe_app --port P --body FILE [--stack uvicorn-httptools]

prints ``listening`` on stdout once it accepts connections.
"""

from __future__ import annotations

import argparse
import sys

#: stack name -> how it is started (one process each)
STACKS = ("uvicorn-httptools", "uvicorn-h11", "granian")


def make_app(body: bytes):
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    start = {"type": "http.response.start", "status": 200, "headers": headers}
    message = {"type": "http.response.body", "body": body}

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                event = await receive()
                if event["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif event["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await send(start)
        await send(message)

    return app


def app_from_env():
    """granian imports the app by name: the body's path comes from the environment."""
    import os

    with open(os.environ["REDPOLL_PROBE_BODY"], "rb") as f:
        return make_app(f.read())


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--body", required=True)
    p.add_argument("--stack", choices=STACKS, default="uvicorn-httptools")
    a = p.parse_args()
    if a.stack == "granian":
        import os

        from granian import Granian
        from granian.constants import Interfaces

        os.environ["REDPOLL_PROBE_BODY"] = a.body
        print("listening", flush=True)
        Granian(
            "redpoll.tools.probe_app:app_from_env",
            factory=True,
            address="127.0.0.1",
            port=a.port,
            interface=Interfaces.ASGI,
            workers=1,
            log_enabled=False,
        ).serve()
        return
    import uvicorn

    with open(a.body, "rb") as f:
        app = make_app(f.read())
    http = "httptools" if a.stack == "uvicorn-httptools" else "h11"
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=a.port,
        http=http,
        loop="uvloop",
        access_log=False,
        log_level="warning",
        server_header=False,
        date_header=False,
    )
    server = uvicorn.Server(config)
    sys.stdout.write("listening\n")
    sys.stdout.flush()
    server.run()


if __name__ == "__main__":
    main()
