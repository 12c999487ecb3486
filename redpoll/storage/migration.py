"""What one change of the stored layout declares: a numbered :class:`Migration`
made of bounded steps, each taking the cursor the step before left.

A feature package declares its migrations in its ``migrations.py``
(``MIGRATIONS``); redpoll.engine.migrate collects them in number order, keeps
the database's layout version and each migration's cursor in keys.LAYOUT,
and runs what is due under one lock. What a step must be, so that any run
cut short and run again ends with the whole effect:

* **bounded**: it reads and writes at most about ``batch`` items (users,
  statuses, keys of one SCAN call), so a million users make many short
  steps, never one long command or a list held in memory;
* **idempotent**: a step run twice (its process died before its cursor was
  recorded) leaves what one run leaves; each write is a script over its
  declared KEYS (one slot) or a command safe to repeat;
* **safe beside live traffic**: what it writes agrees with what the
  running code writes meanwhile (the new code keeps the new layout up by
  itself, so a step only mends what was there before);
* **cluster-safe**: every script's keys in one slot; a step that scans goes
  through every master (redpoll.storage.topology's ``scan_step``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .store import Store

#: One step: ``(store, cursor, batch)`` -> (the cursor to go on from, or None
#: when the migration is finished; how many items it changed). The first
#: step gets the cursor "".
Step = Callable[[Store, str, int], Awaitable[tuple[str | None, int]]]


@dataclass(frozen=True)
class Migration:
    #: its place in the layout's history: 1, 2, 3... (one sequence for all
    #: packages; the runner refuses a gap or a number used twice)
    number: int
    #: a short name (``account-search-index``)
    name: str
    #: one line for ``redpoll migrate``: what it changes
    about: str
    step: Step
    #: items per step
    batch: int
    #: a key whose presence says the release before layout versions made
    #: this change already (its once-per-database flag): such a database
    #: counts as having it, and the runner sets the key when the migration
    #: finishes, for processes of that release sharing the database
    done_before: str | None = None
    #: must be run with ``redpoll migrate`` while nothing else runs: ``redpoll
    #: serve`` refuses to start while it is due, instead of running it
    by_hand: bool = False
