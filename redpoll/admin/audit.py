"""The audit log: who did which moderation action to what, and when, one
entry of a capped Stream (keys.AUDIT_LOG) per action, as Mastodon's
``Admin::ActionLog``. An action appends its entry after its own write has
succeeded (another slot: not in one step with it), so a call cut short
between the two leaves the action done and unlogged; every action is
idempotent, and running it again logs it."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import limits
from ..storage.store import Store
from . import keys


@dataclass(frozen=True, slots=True)
class Entry:
    id: str  # the stream entry id: ``<ms>-<n>``
    actor: int  # an account id; 0: the operator (redpoll admin)
    action: str
    type: str  # Account, Report, DomainBlock
    target: str
    name: str
    text: str

    @property
    def at(self) -> int:
        return int(self.id.split("-", 1)[0])


async def record(
    store: Store,
    actor: int | None,
    action: str,
    type_: str,
    target,
    name: str = "",
    text: str = "",
) -> None:
    """Append one entry (XADD with its cap: a single command)."""
    await store.batch(
        [
            (
                "XADD",
                keys.AUDIT_LOG,
                "MAXLEN",
                "~",
                limits.AUDIT_LOG_MAX,
                "*",
                "actor",
                actor or 0,
                "action",
                action,
                "type",
                type_,
                "target",
                str(target),
                "name",
                name,
                "text",
                text,
            )
        ]
    )


async def entries(store: Store, limit: int = 100, before: str | None = None) -> list[Entry]:
    """The newest entries first, older than ``before`` (an entry id) if given."""
    end = f"({before}" if before else "+"
    (rows,) = await store.batch([("XREVRANGE", keys.AUDIT_LOG, end, "-", "COUNT", limit)])
    out = []
    for entry_id, fields in rows or []:
        if isinstance(fields, list):  # RESP2
            fields = dict(zip(fields[0::2], fields[1::2]))
        f = {k.decode(): v.decode() for k, v in fields.items()}
        out.append(
            Entry(
                entry_id.decode(),
                int(f.get("actor", 0)),
                f.get("action", ""),
                f.get("type", ""),
                f.get("target", ""),
                f.get("name", ""),
                f.get("text", ""),
            )
        )
    return out
