"""Redpoll: a Twitter-style social network back end on Redis."""
from .engine import Redpoll
from .errors import (Busy, ConfigError, Conflict, Forbidden, ListNotFound, LoginTaken, NotFound,
                     QueueFull, RedpollError, StatusNotFound, UserNotFound, ValidationError)
from .models import Status, User
from .settings import Settings

__all__ = ["Redpoll", "Settings", "Status", "User", "RedpollError", "ValidationError", "NotFound",
           "UserNotFound", "StatusNotFound", "ListNotFound", "Forbidden", "Conflict",
           "LoginTaken", "Busy", "QueueFull", "ConfigError"]
__version__ = "0.1.0"
