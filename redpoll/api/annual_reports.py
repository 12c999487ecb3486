"""Annual reports (Mastodon's "Wrapstodon"): /api/v1/annual_reports, one
year's, its state, asking for it to be made, marking it read. The rules are
redpoll/annual/reports.py's."""

from __future__ import annotations

from starlette.responses import Response

from ..annual.reports import Report, year_of
from ..render import entities
from .context import Ctx
from .contract import ACCOUNT_REF, INT, NULLABLE_STR, STATUS_REF, STR, Doc, array, obj, ref
from .responses import JSON, NOT_FOUND, ApiError
from .routing import endpoint
from .statuses import status_entities

TAG = "Annual reports"
YEAR = {"name": "year", "in": "path", "required": True, "schema": STR}
NAME_COUNT = obj({"name": STR, "count": INT})
ANNUAL_REPORT = obj(
    {
        "year": INT,
        "schema_version": INT,
        "share_url": NULLABLE_STR,
        "account_id": STR,
        "data": obj(
            {
                "archetype": {"enum": ["lurker", "booster", "pollster", "replier", "oracle"]},
                "time_series": array(obj({"month": INT, "statuses": INT, "followers": INT})),
                "top_hashtags": array(NAME_COUNT),
                "top_statuses": obj(
                    {
                        "by_reblogs": NULLABLE_STR,
                        "by_favourites": NULLABLE_STR,
                        "by_replies": NULLABLE_STR,
                    }
                ),
            }
        ),
    }
)
WRAPPED = obj(
    {
        "annual_reports": array(ANNUAL_REPORT),
        "accounts": array(ACCOUNT_REF),
        "statuses": array(STATUS_REF),
    }
)
STATE = obj({"state": {"enum": ["available", "generating", "eligible", "ineligible"]}})


def _year(ctx: Ctx) -> int | None:
    return year_of(ctx.request.path_params["year"])


async def _wrapped(ctx: Ctx, found: list[Report]) -> Response:
    """Mastodon's WrappedAnnualReports: the reports with the accounts they
    name (schema 2: the member) and the statuses, as the member may see them
    now (a deleted one left out)."""
    named = sorted(
        {int(sid) for r in found for sid in r.data["top_statuses"].values() if sid is not None}
    )
    shown = await ctx.rp.timelines.statuses_page(ctx.uid, named) if named else None
    user = await ctx.rp.accounts.get_user(ctx.uid)
    return JSON(
        {
            "annual_reports": [
                {
                    "year": r.year,
                    "data": r.data,
                    "schema_version": r.schema_version,
                    "share_url": None,
                    "account_id": str(r.uid),
                }
                for r in found
            ],
            "accounts": [entities.account(user, ctx.base)] if found else [],
            "statuses": status_entities(ctx, shown) if shown else [],
        }
    )


@endpoint(
    "GET",
    "/api/v1/annual_reports",
    auth="required",
    scope="read:accounts",
    doc=Doc("Your annual reports not yet marked read", TAG, WRAPPED),
)
async def list_reports(ctx: Ctx) -> Response:
    return await _wrapped(ctx, await ctx.rp.annual.reports(ctx.uid, unread_only=True))


@endpoint(
    "GET",
    "/api/v1/annual_reports/{year}",
    auth="required",
    scope="read:accounts",
    doc=Doc("Your annual report of a year (404: none made)", TAG, WRAPPED, params=[YEAR]),
)
async def get_report(ctx: Ctx) -> Response:
    year = _year(ctx)
    found = await ctx.rp.annual.reports(ctx.uid, year) if year is not None else []
    if not found:
        raise ApiError(404, NOT_FOUND)
    return await _wrapped(ctx, found)


@endpoint(
    "GET",
    "/api/v1/annual_reports/{year}/state",
    auth="required",
    scope="read:accounts",
    doc=Doc(
        "Whether your annual report of a year is made, being made, or may be",
        TAG,
        STATE,
        params=[YEAR],
    ),
)
async def report_state(ctx: Ctx) -> Response:
    return JSON({"state": await ctx.rp.annual.state(ctx.uid, _year(ctx))})


@endpoint(
    "POST",
    "/api/v1/annual_reports/{year}/generate",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Ask for your annual report of the campaign's year to be made "
        "(202: being made; 200: made already, or not to be made)",
        TAG,
        ref("Empty"),
        params=[YEAR],
        ok_status="202",
        also=("200",),
    ),
)
async def generate_report(ctx: Ctx) -> Response:
    making = await ctx.rp.annual.generate(ctx.uid, _year(ctx))
    return JSON({}, status_code=202 if making else 200)


@endpoint(
    "POST",
    "/api/v1/annual_reports/{year}/read",
    auth="required",
    scope="write:accounts",
    doc=Doc(
        "Mark your annual report of a year read (404: none made)", TAG, ref("Empty"), params=[YEAR]
    ),
)
async def read_report(ctx: Ctx) -> Response:
    if not await ctx.rp.annual.read(ctx.uid, _year(ctx)):
        raise ApiError(404, NOT_FOUND)
    return JSON({})
