"""Polls: read one, vote in one (redpoll.polls). A poll's id is its
status's; whoever may not see the status gets 404, as for no poll."""

from __future__ import annotations

from starlette.responses import Response

from ..polls.polls import Poll
from ..reading import pages
from ..render import entities
from .context import Ctx
from .contract import POLL_REF, Doc, path_param, request_body
from .responses import JSON
from .routing import endpoint


def poll_response(ctx: Ctx, shown: pages.Shown) -> Response:
    status = shown.statuses[0]
    poll = Poll.of(status)
    assert poll is not None  # (a poll's page shows its status)
    return JSON(
        entities.poll(status.id, poll, shown.states[status.id].poll, ctx.viewer is not None)
    )


@endpoint(
    "GET",
    "/api/v1/polls/{id}",
    auth="optional",
    scope="read:statuses",
    doc=Doc(
        "A poll, with its votes (and your own, signed in); its status must be one you may see",
        "Polls",
        POLL_REF,
        params=[path_param()],
    ),
)
async def get_poll(ctx: Ctx) -> Response:
    return poll_response(ctx, await ctx.rp.statuses.poll(ctx.viewer, ctx.path_id()))


@endpoint(
    "POST",
    "/api/v1/polls/{id}/votes",
    auth="required",
    scope="write:statuses",
    doc=Doc(
        "Vote in a poll: the indexes of your choices (several only in a "
        "multiple-choice poll). Once per account; not in your own poll nor in "
        "one that has ended (422)",
        "Polls",
        POLL_REF,
        params=[path_param()],
        body=request_body(
            {
                "choices": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 0},
                    "minItems": 1,
                }
            },
            ("choices",),
        ),
    ),
)
async def vote(ctx: Ctx) -> Response:
    return poll_response(
        ctx, await ctx.rp.statuses.vote(ctx.uid, ctx.path_id(), ctx.params.raw("choices"))
    )
