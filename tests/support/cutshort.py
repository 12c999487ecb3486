"""Cutting a coroutine short at each of its awaits, as a cancelled task is."""

from __future__ import annotations

import asyncio
import types


@types.coroutine
def drive(coro, k: int):
    """Run ``coro`` as a task would, throwing CancelledError into it at its
    k-th suspension; True if it finished before that."""
    steps, value, error = 0, None, None
    while True:
        try:
            if steps >= k and error is None:
                error = asyncio.CancelledError()
            if error is not None:
                future, error = coro.throw(error), None
            else:
                future = coro.send(value)
        except StopIteration:
            return True
        except asyncio.CancelledError:
            return False
        steps += 1
        try:
            value = yield future
        except BaseException as exc:  # noqa: BLE001 - handed on, as a task does
            error = exc
