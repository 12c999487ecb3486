"""Redpoll: a Twitter-style social network back end on Redis.

The names below are imported when first asked for (``from redpoll import
Redpoll``), so that a process that needs only a corner of the package (the
load generator, the limit probe, ``redpoll --help``) does not load the
engine and everything it imports."""

from __future__ import annotations

import importlib

from .core.version import __version__

#: name -> the module that defines it
_EXPORTS = {
    "Redpoll": ".engine.engine",
    "Settings": ".core.settings",
    "Status": ".core.models",
    "User": ".core.models",
    **{
        name: ".core.errors"
        for name in (
            "Busy",
            "ConfigError",
            "Conflict",
            "Forbidden",
            "ListNotFound",
            "LoginTaken",
            "NotFound",
            "QueueFull",
            "RedpollError",
            "StatusNotFound",
            "UserNotFound",
            "ValidationError",
        )
    },
}

__all__ = [
    "Redpoll",
    "Settings",
    "Status",
    "User",
    "RedpollError",
    "ValidationError",
    "NotFound",
    "UserNotFound",
    "StatusNotFound",
    "ListNotFound",
    "Forbidden",
    "Conflict",
    "LoginTaken",
    "Busy",
    "QueueFull",
    "ConfigError",
    "__version__",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'redpoll' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # asked once
    return value
