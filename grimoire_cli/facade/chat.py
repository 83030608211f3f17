"""`g.chat`: the messages of a conversation (Protea's chat history;
docs/tiers-and-consolidation.md), each kept for its category's ttl. The work
is done by `kinds/chat.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.bounds import whole
from .host import Namespace

if TYPE_CHECKING:
    from ..core.model import Entry


class Chat(Namespace):
    """The chat history of the grimoire it serves."""

    def add(self, role: str, text: str, *, category: str | None = None) -> Entry:
        """Keep one message of the conversation (its turn numbered, expired ones pruned)."""
        from ..kinds.chat import fields_for
        from ..memory.request import Request

        spec = self.config.of_kind("chat", category)
        return self.grimoire.add_many([Request(text, category=spec.name, fields=fields_for(role))])[0]

    def recent(self, count: int = 5, *, category: str | None = None) -> list[Entry]:
        """The last `count` messages still within their ttl, oldest first."""
        from ..kinds.chat import recent

        whole(count, "-n")
        names = (
            [self.config.of_kind("chat", category).name] if category is not None else self.config.names_of_kind("chat")
        )
        if not names:
            self.config.of_kind("chat")  # the error naming the preset
        return recent(self.store, names, self.grimoire.now(), count)
