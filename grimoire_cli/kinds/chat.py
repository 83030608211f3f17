"""Chat history (Protea's persisted conversation): each message an entry of
a category of kind `chat`, with its `role` and `turn`, kept in a local
category (volatile state: git-ignored, never committed) with a short ttl
(10 minutes by default), so it survives a restart but not a pause.

A message's turn is one past the last active message's (1 when the chat
has lapsed), numbered under the grimoire lock. Each write prunes the
category's expired messages from its file: history past its ttl is gone,
not archived. The same words said twice are two messages, never a
duplicate.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import BadInput
from ..storage.catalog.queries import Filter, Order

if TYPE_CHECKING:
    from ..core.model import Entry
    from ..storage.store import Store

ROLE_RE = re.compile(r"^[a-z][a-z0-9_-]{0,39}\Z")


def check_role(role: str) -> str:
    if not isinstance(role, str) or not ROLE_RE.match(role):
        raise BadInput(f"bad role {role!r}", "a role is a lowercase word, like user, assistant or system")
    return role


def next_turn(store: Store, category: str, moment: datetime) -> int:
    """One past the highest turn among the category's active messages."""
    chosen = Filter(at=moment.timestamp(), categories=[category])
    last = store.reads.listed(chosen, Order.NEWEST, 1)
    turns = [turn for e in last.values() if isinstance(turn := e.data.get("turn"), int)]
    return (max(turns) if turns else 0) + 1


def expired(store: Store, category: str, moment: datetime) -> list[str]:
    """Ids of the category's expired messages (pruned by the next write)."""
    chosen = Filter(at=moment.timestamp(), categories=[category], states=("expired",))
    return store.ids(chosen)


def recent(store: Store, categories: list[str], moment: datetime, count: int) -> list[Entry]:
    """The last `count` active messages, oldest first (as a prompt quotes them); `count` checked by the caller (bounds.whole)."""
    chosen = Filter(at=moment.timestamp(), categories=categories)
    return list(reversed(store.reads.listed(chosen, Order.NEWEST, count).values()))


def fields_for(role: str) -> dict[str, Any]:
    """A new message's fields; its turn is numbered when it is written."""
    return {"role": check_role(role)}
