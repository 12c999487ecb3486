"""Tools around the product, not part of it: ``seed`` (a synthetic network),
``demo`` (the engine end to end in a few seconds), ``bench`` (redpoll against
a naive client) and its load generators ``bench_http`` (REST) and
``stream_bench`` (streams).

The server never imports this package. The load generators need the
``tools`` extra (``pip install -e '.[tools]'``: httpx).

The command line (``redpoll.tools.cli``) hands each tool command a :class:`Console`
as click's context object, so tools never import the command line (no
cli -> tool -> cli circle).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from ..core.settings import Settings


@dataclass(frozen=True)
class Console:
    """What the command line gives a tool: settings read from the
    environment, and a runner that turns engine errors into one-line messages."""

    settings: Callable[[], Settings]
    run: Callable[[Coroutine[Any, Any, Any]], Any]
