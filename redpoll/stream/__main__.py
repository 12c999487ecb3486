"""``python -m redpoll.stream [--host H] [--port P]``: serve the stream routes alone."""

from __future__ import annotations

import argparse

import uvicorn

from .app import create_app
from .handoff import StreamHttpProtocol, StreamWebSocketProtocol


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m redpoll.stream")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args()
    uvicorn.run(
        create_app(),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        http=StreamHttpProtocol,
        ws=StreamWebSocketProtocol,
        ws_per_message_deflate=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )


if __name__ == "__main__":
    main()
