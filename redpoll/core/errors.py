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
MediaStorageError     the media storage failed a write     503
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


class UnexpectedMentions(ValidationError):
    """A status that would mention accounts its poster did not list in
    ``allowed_mentions`` (Mastodon's UnexpectedMentionsError): nothing is
    posted; ``accounts`` are their ids."""

    def __init__(self, accounts: list[int]):
        super().__init__("allowed_mentions", "Post would be sent to unexpected accounts")
        self.accounts = accounts


class NotFollowed(ValidationError):
    """An account added to a list its owner neither follows nor has asked
    to follow (redpoll.lists)."""

    def __init__(self, message: str):
        RedpollError.__init__(self, message)
        self.field = "account_ids"


class NotFound(RedpollError):
    status = 404
    code = "not_found"


class UserNotFound(NotFound):
    pass


class StatusNotFound(NotFound):
    pass


class ListNotFound(NotFound):
    pass


class FilterNotFound(NotFound):
    pass


class Forbidden(RedpollError):
    status = 403
    code = "forbidden"


class Conflict(RedpollError):
    status = 409
    code = "conflict"


class LoginTaken(Conflict):
    pass


class AlreadyVoted(Conflict):
    """An account votes a second time in a poll (redpoll.polls)."""


class PollEnded(Conflict):
    """A vote in a poll that has ended (redpoll.polls)."""


class Busy(RedpollError):
    status = 503
    code = "busy"


class QueueFull(Busy):
    pass


class MediaStorageError(RedpollError):
    """The media storage (a directory, an S3 bucket) failed to store or
    delete a file: the server's trouble, not the caller's (the message
    says what failed; the log says more). What was begun is undone, not
    left half-written: an upload is given up at once (a tombstone saying
    why, its files' deletion queued: redpoll.media.uploads), a profile
    image leaves the profile as it was (redpoll.media.profile_images)."""

    status = 503
    code = "storage"


class SignUpAbandoned(Busy):
    """The sign-up stalled so long that a worker gave it up (its journal,
    jobs.SignUpJob); nothing of it stays: try again."""


class LimitReached(Forbidden):
    """A bounded set is full (list members, lists per user)."""


class ScriptError(RedpollError):
    """A script answered an error reply that SCRIPT_ERRORS does not know:
    a bug, never an answer to the caller's input."""


#: The error replies of the Lua scripts (redpoll/*/lua/*.lua) (their first word) and the
#: exception each one is; Store.run raises these in place of redis's
#: ResponseError, so callers catch a class, never match a message. A caller
#: that knows more (which user, which list) catches it and says so.
SCRIPT_ERRORS: dict[str, type[RedpollError]] = {
    "NOTFOUND": StatusNotFound,  # delete_mark*: no such status
    "FORBIDDEN": Forbidden,  # delete_mark*, status_edit*: the status is another user's
    "NOUSER": UserNotFound,  # record_post: no such author
    "NOOWNER": NotFound,  # read_page*: the timeline's owner is unknown
    "NOLIST": ListNotFound,  # list_put, list_drop
    "MISSING": NotFound,  # edge_set: the owner, list or user is unknown
    "FULL": LimitReached,  # edge_set, list_put, status_edit*: the history is full
    "NOTFOLLOWED": NotFollowed,  # edge_set: a list member the owner does not follow
    "CHANGED": Conflict,  # status_edit*: the record changed since it was read
    "EXISTS": Conflict,  # create_user: the record is there already
    "ABANDONED": SignUpAbandoned,  # create_user: a worker gave the sign-up up
    "VOTED": AlreadyVoted,  # poll_vote: the account voted already
    "ENDED": PollEnded,  # poll_vote: the poll has ended
}


def from_script(name: str, reply: Exception) -> Exception:
    """The exception for a script's error reply (SCRIPT_ERRORS); other errors
    (the server's own: NOSCRIPT, LOADING, connection...) unchanged."""
    message = str(reply)
    words = message.split(" ", 2)
    # the server prefixes a one-word error reply with its generic code 'ERR'
    code = words[1] if words[0] == "ERR" and len(words) > 1 else words[0]
    cls = SCRIPT_ERRORS.get(code)
    if cls is None:
        return reply
    return cls(f"{name}: {message}")


class ConfigError(RedpollError):
    """A setting has a bad value; raised at start-up, never at request time."""
