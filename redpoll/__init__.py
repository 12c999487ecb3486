"""Redpoll: a Twitter-style social network back end on Redis."""
from .engine.engine import Redpoll
from .core.errors import (Busy, ConfigError, Conflict, Forbidden, ListNotFound, LoginTaken,
                          NotFound, QueueFull, RedpollError, StatusNotFound, UserNotFound,
                          ValidationError)
from .core.models import Status, User
from .core.settings import Settings
from .core.version import __version__

__all__ = ["Redpoll", "Settings", "Status", "User", "RedpollError", "ValidationError", "NotFound",
           "UserNotFound", "StatusNotFound", "ListNotFound", "Forbidden", "Conflict",
           "LoginTaken", "Busy", "QueueFull", "ConfigError", "__version__"]
