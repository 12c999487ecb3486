"""What the engine returns: plain frozen records built from Redis hashes."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping

EXTRA_PREFIX = "x:"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def now_us() -> int:
    return time.time_ns() // 1_000


def _s(raw: Mapping, name: str, default: str = "") -> str:
    value = raw.get(name.encode(), raw.get(name))
    if value is None:
        return default
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True, slots=True)
class User:
    id: int
    login: str
    display_name: str
    bio: str
    created_at: int  # ms since the epoch
    followers: int
    following: int
    posts: int

    @classmethod
    def from_hash(cls, raw: Mapping) -> "User":
        return cls(
            id=int(_s(raw, "id")),
            login=_s(raw, "login"),
            display_name=_s(raw, "name"),
            bio=_s(raw, "bio"),
            created_at=int(_s(raw, "at", "0")),
            followers=int(_s(raw, "followers", "0")),
            following=int(_s(raw, "following", "0")),
            posts=int(_s(raw, "posts", "0")),
        )

    def to_dict(self) -> dict:
        return {"id": self.id, "login": self.login, "display_name": self.display_name,
                "bio": self.bio, "created_at": self.created_at, "followers": self.followers,
                "following": self.following, "posts": self.posts}


@dataclass(frozen=True, slots=True)
class Status:
    id: int
    text: str
    created_at: int  # ms since the epoch
    user_id: int
    login: str
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_hash(cls, raw: Mapping) -> "Status | None":
        """None for a missing or deleted status: readers skip those."""
        if not raw or b"deleted" in raw or "deleted" in raw:
            return None
        extra = {}
        for k, v in raw.items():
            name = k.decode() if isinstance(k, bytes) else k
            if name.startswith(EXTRA_PREFIX):
                extra[name[len(EXTRA_PREFIX):]] = v.decode() if isinstance(v, bytes) else v
        return cls(id=int(_s(raw, "id")), text=_s(raw, "text"), created_at=int(_s(raw, "at")),
                   user_id=int(_s(raw, "uid")), login=_s(raw, "login"), extra=extra)

    def to_hash(self) -> dict[str, str]:
        data = {"id": str(self.id), "text": self.text, "at": str(self.created_at),
                "uid": str(self.user_id), "login": self.login}
        data.update({EXTRA_PREFIX + k: v for k, v in self.extra.items()})
        return data

    def to_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "created_at": self.created_at,
                "user_id": self.user_id, "login": self.login, **self.extra}
