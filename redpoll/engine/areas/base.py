"""What every area of the engine is bound to: one set of dependencies.

An area (redpoll.engine.areas.*) is the engine's face for one part of the
network, as GoToSocial's processors are: the HTTP handlers, the streams and
the tools call ``rp.statuses.post(...)``, ``rp.relations.follow(...)``; each
method is the one domain call the action needs, or the few calls that make
it one action (a follow and its federation side). An area reads and writes
through the features' packages only, never keys of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...bus.queue import JobQueue
from ...core.settings import Settings
from ...media.storage import MediaStorage
from ...storage.store import Store


@dataclass(frozen=True)
class Deps:
    """The dependencies of every area: the store, the job queue, the
    settings and where uploaded files go."""

    store: Store
    queue: JobQueue
    settings: Settings
    media_storage: MediaStorage


class Area:
    """An area bound to its dependencies (:class:`Deps`)."""

    def __init__(self, deps: Deps):
        self.store = deps.store
        self.queue = deps.queue
        self.settings = deps.settings
        self.media_storage = deps.media_storage
