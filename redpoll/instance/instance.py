"""The server's rules and extended description, as Mastodon's Rule and
ExtendedDescription entities show them. Rules are one hash
(keys.INSTANCE_RULES: a counter and each rule's JSON), added by one script
(rule_add.lua), removed by one HDEL; the description is one hash
(keys.INSTANCE_DESCRIPTION: content and when it was set), set by one HSET.
The server settings (title, short description, contact e-mail) are one
hash (keys.INSTANCE_SETTINGS), set by one HSET/HDEL in a MULTI.
Each write is a single atomic command, script or transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..core import keys, limits, validate
from ..core.errors import LimitReached, NotFound, ValidationError
from ..core.models import now_ms
from ..storage.store import Store


@dataclass(frozen=True)
class Rule:
    id: int
    text: str
    hint: str


async def rules(store: Store) -> list[Rule]:
    """The rules in the order they were added."""
    raw = await store.hgetall(keys.INSTANCE_RULES)
    out = []
    for field, value in raw.items():
        name = field.decode()
        if name.startswith("r:"):
            data = json.loads(value)
            out.append(Rule(int(name[2:]), data["text"], data.get("hint", "")))
    return sorted(out, key=lambda r: r.id)


async def add_rule(store: Store, text: str, hint: str = "") -> Rule:
    text = validate.text(text, "text", limits.INSTANCE_RULE_MAX_CHARS, allow_empty=True).strip()
    hint = validate.text(hint, "hint", limits.INSTANCE_RULE_MAX_CHARS, allow_empty=True).strip()
    if not text:
        raise ValidationError("text", "must not be empty")
    try:
        rid = await store.run(
            "rule_add",
            [keys.INSTANCE_RULES],
            [json.dumps({"text": text, "hint": hint}), limits.INSTANCE_RULES_MAX],
        )
    except LimitReached:
        raise ValidationError("text", f"at most {limits.INSTANCE_RULES_MAX} rules") from None
    return Rule(int(rid), text, hint)


async def remove_rule(store: Store, rid) -> None:
    rid = validate.an_id(rid, "rule_id")
    if not await store.hdel(keys.INSTANCE_RULES, f"r:{rid}"):
        raise NotFound(f"no rule {rid}")


async def description(store: Store) -> tuple[str, int | None]:
    """The extended description (HTML as the operator wrote it, escaped
    when rendered) and when it was set (ms; None: never)."""
    content, at = await store.hmget(keys.INSTANCE_DESCRIPTION, ["content", "at"])
    return (content.decode() if content else ""), (int(at) if at else None)


async def describe(store: Store, content: str) -> None:
    content = validate.text(
        content, "content", limits.INSTANCE_DESCRIPTION_MAX_CHARS, allow_empty=True
    )
    await store.hset(keys.INSTANCE_DESCRIPTION, mapping={"content": content, "at": now_ms()})


#: the server settings kept here and their bounds; an empty value: the default
SETTINGS = {
    "title": limits.INSTANCE_TITLE_MAX_CHARS,
    "short_description": limits.INSTANCE_SHORT_DESCRIPTION_MAX_CHARS,
    "email": limits.EMAIL_MAX_CHARS,
    # who may read the server's domain blocks (GET /api/v1/instance/domain_blocks)
    # and their public comments, as Mastodon's settings of these names
    "show_domain_blocks": 8,
    "show_domain_blocks_rationale": 8,
}
#: the values of the two settings above; "" (not set): Mastodon's default, disabled
SHOW_TO = ("disabled", "users", "all")
# (the registration mode (open / approval / closed) is another setting of
# this package: it is not kept in this hash)


async def settings(store: Store) -> dict[str, str]:
    """The server settings set (title, short_description, email), "" for one not set."""
    values = await store.hmget(keys.INSTANCE_SETTINGS, list(SETTINGS))
    return {name: (v.decode() if v else "") for name, v in zip(SETTINGS, values)}


async def set_settings(store: Store, **changes: str) -> dict[str, str]:
    """Set the settings given ("" clears one: its default again), all or
    none (one MULTI); a contact address must look like one."""
    clean = {}
    for name, value in changes.items():
        if name not in SETTINGS:
            raise ValidationError(name, "is not a server setting")
        value = validate.text(value or "", name, SETTINGS[name], allow_empty=True).strip()
        if name == "email" and value and ("@" not in value or " " in value):
            raise ValidationError("email", "must be an e-mail address")
        if name.startswith("show_") and value and value not in SHOW_TO:
            raise ValidationError(name, "must be one of " + ", ".join(SHOW_TO))
        clean[name] = value
    if clean:
        pipe = store.pipeline(transaction=True)  # one key
        for name, value in clean.items():
            if value:
                pipe.hset(keys.INSTANCE_SETTINGS, name, value)
            else:
                pipe.hdel(keys.INSTANCE_SETTINGS, name)
        await pipe.execute()
    return await settings(store)
