"""The one error hierarchy of redpoll.

Every failure the library reports on purpose is a :class:`RedpollError`.
Callers (the HTTP layer, the CLI) map the subclasses to their own answers:

====================  ==================================  =====
class                 meaning                             HTTP
====================  ==================================  =====
ValidationError       the input is malformed or too big   422
NotFound              a user, status or list is unknown    404
Forbidden             the caller may not do this           403
Conflict              the name is taken / state clash      409
Busy                  contention or a full queue; retry    503
====================  ==================================  =====

An operation that raises one of these has written nothing (validation runs
before the first write; the writes themselves are atomic scripts).
"""


class RedpollError(Exception):
    """Root of every error redpoll raises on purpose."""

    status = 500
    code = "error"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class ValidationError(RedpollError):
    status = 422
    code = "invalid"

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


class NotFound(RedpollError):
    status = 404
    code = "not_found"


class UserNotFound(NotFound):
    pass


class StatusNotFound(NotFound):
    pass


class ListNotFound(NotFound):
    pass


class Forbidden(RedpollError):
    status = 403
    code = "forbidden"


class Conflict(RedpollError):
    status = 409
    code = "conflict"


class LoginTaken(Conflict):
    pass


class Busy(RedpollError):
    status = 503
    code = "busy"


class QueueFull(Busy):
    pass


class ConfigError(RedpollError):
    """A setting has a bad value; raised at start-up, never at request time."""
