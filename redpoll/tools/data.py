"""The database's care: ``redpoll migrate`` (redpoll.engine.migrate),
``redpoll backup`` and ``redpoll restore`` (redpoll.engine.backup), ``redpoll
check`` (redpoll.engine.check)."""

from __future__ import annotations

import click

from ..core.errors import ConfigError
from ..engine import backup as backups
from ..engine import check as integrity
from ..engine import migrate as migrations
from ..engine.engine import Redpoll


@click.command()
@click.option("--status", is_flag=True, help="Say what is due; change nothing.")
@click.pass_context
def migrate(ctx: click.Context, status: bool) -> None:
    """Bring the database's layout up to date, and say what was done.

    Runs every migration due, those that `redpoll serve` leaves to be run by
    hand included, in order, under the migration lock (another process
    migrating meanwhile is waited for). A run cut short (Ctrl-C, a lost
    connection) goes on from its last step the next time."""
    console = ctx.find_root().obj

    async def go() -> list[str]:
        async with await Redpoll.open(console.settings(), migrate=False) as rp:
            now = await migrations.layout(rp.store)
            migrations.refuse_newer(now.version, migrations.MIGRATIONS)
            latest = migrations.MIGRATIONS[-1].number
            lines = [
                f"database layout: version {now.version}"
                + ("" if now.recorded else " (none recorded: a new database, or an older one)")
            ]
            due = migrations.due(now.version)
            if status:
                lines += [
                    f"due: migration {m.number} ({m.name}: {m.about})"
                    + (", by hand" if m.by_hand else "")
                    + (
                        f", going on from {now.cursors[m.number]}"
                        if m.number in now.cursors
                        else ""
                    )
                    for m in due
                ] or [f"up to date (version {latest})"]
                return lines
            report = await migrations.run(rp.store, by_hand=True)
            if report.waited:
                lines.append("another process was migrating the database; waited for it")
            lines += [made.line() for made in report.made]
            lines.append(
                f"database layout: version {report.after}, up to date"
                if report.after == latest
                else f"database layout: version {report.after} of {latest}"
            )
            return lines

    for line in console.run(go()):
        click.echo(line)


@click.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.pass_context
def backup(ctx: click.Context, directory: str) -> None:
    """Write a backup of the database and its media files into DIRECTORY.

    The embedded server's data (REDPOLL_DATA_DIR) only: a snapshot it
    writes while it serves (every post acknowledged before the backup
    began is in it, and the key pairs that sign federation), the media
    files, and a manifest, written last. DIRECTORY must be new or empty.
    With REDIS_URL it refuses: back your server up with its own tools
    (docs/operating.md)."""
    console = ctx.find_root().obj
    try:
        summary = backups.backup(console.settings(), directory)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    for line in summary.lines("backed up"):
        click.echo(line)


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.pass_context
def restore(ctx: click.Context, directory: str) -> None:
    """Bring the backup in DIRECTORY back into an empty data directory.

    The data directory is REDPOLL_DATA_DIR (or the default); one that is
    not empty is refused. The backup's files are checked against its
    manifest first; then `redpoll serve` starts on the restored data."""
    console = ctx.find_root().obj
    try:
        summary = backups.restore(console.settings(), directory)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    for line in summary.lines("restored"):
        click.echo(line)
    click.echo("start it: redpoll serve")


@click.command()
@click.option("--repair", is_flag=True, help="Mend what can be mended (idempotent).")
@click.pass_context
def check(ctx: click.Context, repair: bool) -> None:
    """Walk the database in bounded steps and report broken invariants.

    Counts against their sets, timelines naming statuses that are gone,
    follows without their other side, list members not followed, uploads
    attached to statuses that are gone, media files no record names
    (redpoll/engine/check.py). Exits 1 when something is found and not
    repaired."""
    console = ctx.find_root().obj

    async def go():
        async with await Redpoll.open(console.settings()) as rp:
            return await integrity.check(rp.store, rp.queue, rp.media_storage, repair=repair)

    report = console.run(go())
    for finding in report.findings:
        click.echo(finding.line())
    walked = ", ".join(f"{n} {what}" for what, n in report.walked.items())
    left = [f for f in report.findings if not f.repaired]
    click.echo(
        f"checked {walked} in {report.steps} steps: "
        + (
            f"{len(report.findings)} broken, {len(report.findings) - len(left)} repaired"
            if report.findings
            else "nothing broken"
        )
    )
    if left:
        ctx.exit(1)
