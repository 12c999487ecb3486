"""The ``redpoll`` command line."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys

import click

from ..core.errors import ConfigError, RedpollError
from ..core.settings import Settings
from ..core.version import __version__
from ..engine.engine import Redpoll
from . import Console
from . import bench as tools_bench
from . import data as tools_data
from . import seed as tools_seed
from .admin import admin


def load_settings(**overrides) -> Settings:
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    return settings.with_(**{k: v for k, v in overrides.items() if v is not None})


def run(coro):
    try:
        return asyncio.run(coro)
    except (RedpollError, ConfigError) as exc:
        raise click.ClickException(str(exc)) from None


async def wait_for_signal() -> None:
    """Block until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


@click.group()
@click.version_option(__version__)
@click.pass_context
def main(ctx: click.Context) -> None:
    """Redpoll: a Mastodon-compatible social network on Redis or Valkey.

    `redpoll serve` runs it: the Mastodon client API, its streams and web
    pages on HTTP, with the background jobs. The other commands run the jobs
    apart, moderate, seed, measure and report on the same database.

    Configuration comes from the environment (see README): REDIS_URL,
    REDPOLL_CLUSTER, REDPOLL_DATA_DIR, REDPOLL_FSYNC and friends. Without
    REDIS_URL an embedded Valkey server keeps its data in REDPOLL_DATA_DIR,
    by default $XDG_DATA_HOME/redpoll (~/.local/share/redpoll). Every command
    logs which database it uses on stderr.
    """
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
    )
    ctx.obj = Console(settings=load_settings, run=run)


@main.command()
@click.option(
    "--concurrency",
    type=click.IntRange(1, 256),
    default=None,
    help="Jobs run at once per queue shard (default: REDPOLL_WORKER_CONCURRENCY or 4).",
)
def worker(concurrency: int | None) -> None:
    """Run the background jobs alone, until SIGINT/SIGTERM.

    Delivery to homes and lists, cleanup after deletes, refills,
    notifications, media processing, federation deliveries: what `redpoll
    serve` runs inside its HTTP workers unless --no-jobs."""

    async def go():
        async with await Redpoll.open(load_settings(worker_concurrency=concurrency)) as rp:
            stop = asyncio.Event()
            task = asyncio.create_task(rp.worker().run(stop))
            click.echo("worker running; Ctrl-C stops it after the jobs in hand", err=True)
            signalled = asyncio.create_task(wait_for_signal())
            # a run that ends by itself (a failure) ends the process with it,
            # rather than leaving it alive with no reader
            await asyncio.wait({task, signalled}, return_when=asyncio.FIRST_COMPLETED)
            signalled.cancel()
            stop.set()
            await task

    run(go())


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def stats(as_json: bool) -> None:
    """Print the database's users, statuses, queue depth and memory."""

    async def go():
        async with await Redpoll.open(load_settings()) as rp:
            return await rp.stats()

    figures = run(go())
    if as_json:
        click.echo(json.dumps(figures))
    else:
        for name, value in figures.items():
            click.echo(f"{name:>18}: {value:,}")


@main.command()
def demo() -> None:
    """Seed a small network, run the workers, print a home timeline.

    Without REDIS_URL or REDPOLL_DATA_DIR the demo keeps its own embedded
    server's data in redpoll-demo beside the default data directory, apart
    from the data `redpoll serve` uses; it can run any number of times."""
    from .demo import run_demo

    settings = load_settings()
    if settings.redis_url is None and settings.data_dir_origin == "default":
        settings = settings.with_(data_dir=settings.data_dir + "-demo")
    run(run_demo(settings))


main.add_command(tools_seed.seed)
main.add_command(tools_data.migrate)
main.add_command(tools_data.backup)
main.add_command(tools_data.restore)
main.add_command(tools_data.check)
main.add_command(tools_bench.bench)


@main.command()
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on (0.0.0.0 for every interface).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="TCP port; 0 picks a free one (the chosen URL is printed on stdout).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 256),
    default=None,
    help="HTTP worker processes sharing the port (default: one per core).",
)
@click.option(
    "--jobs/--no-jobs",
    default=True,
    show_default=True,
    help="Run the background job worker (fan-out, cleanup, refill) inside each "
    "HTTP worker; with --no-jobs run `redpoll worker` yourself.",
)
@click.option(
    "--access-log/--no-access-log",
    default=None,
    help="One JSON log line per request (default: REDPOLL_ACCESS_LOG or on).",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
    help="Level of the JSON log lines on stderr.",
)
def serve(
    host: str, port: int, workers: int, jobs: bool, access_log: bool | None, log_level: str
) -> None:
    """Run redpoll: the Mastodon API, its streams and web pages on HTTP.

    Starts the embedded server unless REDIS_URL is set, the HTTP workers and
    the background jobs, then prints "Redpoll listening on URL". Logs are JSON
    lines on stderr. SIGINT/SIGTERM stop it cleanly: open requests and the
    jobs in hand finish, queued jobs stay in Redis. Rate limits and the rest
    come from the environment (REDPOLL_RATE_TOKEN, REDPOLL_RATE_IP,
    REDPOLL_RATE_SIGNUP, REDPOLL_RATE_LOGIN as COUNT/SECONDS or off; see
    settings.py). Point Mastodon.py at the printed URL.
    """
    from ..api.serve import default_workers
    from ..api.serve import serve as run_serve

    settings = load_settings()
    workers = workers or default_workers()
    try:
        run_serve(
            settings,
            host=host,
            port=port,
            workers=workers,
            jobs=jobs,
            access_log=settings.access_log if access_log is None else access_log,
            log_level=log_level.upper(),
        )
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


main.add_command(admin)


if __name__ == "__main__":
    main()
