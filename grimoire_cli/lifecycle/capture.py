"""`mem capture --commit REV` (Loa's `auto_capture`): the trailers
`Decision:`, `Learning:` and `Error:` of a commit message become memories of
the categories `decision`, `learning` and `error`, sourced to the commit
(`session_id: commit:<sha>`, the author as agent, the sha in metadata).

The post-commit hook `mem hooks install` sets up runs it after each commit
whose message holds such a line. Each trailer is on only while its flag is
(`auto_capture: {decisions, learnings, errors}`); without the block nothing
is captured. Trailers are read by git itself (`git interpret-trailers
--parse --unfold`): only the trailer block at the message's end counts, as
git defines it. Nothing is captured while git is in the middle of an
operation (a rebase or cherry-pick replays commits captured before). A commit mem made (its subject starts `mem:` or `mem
<command>:`) is never captured, nor is a trailer refused by the guard (a
secret: a warning, and the commit stands); a trailer captured before is an
exact duplicate, skipped. `<private>` text is removed as in every write.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ..core.errors import BadInput
from ..memory.request import Request
from ..storage.store import Store

TRAILERS = {"decision": ("decisions", "decision"), "learning": ("learnings", "learning"), "error": ("errors", "error")}
_BY_MEM = re.compile(r"^mem(?: [a-z-]+)?: ")
CONFIDENCE = 0.9  # a statement its author committed: as sure as a decision needs (higher when the category asks more)


class Captured:
    """What one capture wrote, and what it skipped and why (trailer -> reason)."""

    __slots__ = ("commit", "dry_run", "skipped", "written")

    def __init__(self, commit: str, dry_run: bool):
        self.commit, self.dry_run = commit, dry_run
        self.written: list[Any] = []
        self.skipped: list[tuple[str, str]] = []

    def to_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "written": [e.to_dict() for e in self.written],
            "dry_run": self.dry_run,
            "skipped": [{"trailer": t, "reason": r} for t, r in self.skipped],
        }


def trailers(message: str, root: Any) -> list[tuple[str, str]]:
    """(key, value) of the message's trailers, as git parses them."""
    from ..git import gitops

    # --no-divider: a `---` line in a body is markdown, not the start of a patch (as git's own %(trailers) reads it).
    parsed = gitops.run(["interpret-trailers", "--parse", "--unfold", "--no-divider"], root, input=message).stdout
    out = []
    for line in parsed.splitlines():
        key, sep, value = line.partition(":")
        if sep and value.strip():
            out.append((key.strip(), value.strip()))
    return out


def capture(store: Store, rev: str, moment: datetime, *, dry_run: bool = False) -> Captured:
    from ..git import gitops
    from ..memory.adding import add_many

    root = gitops.work_tree(store.config.root)
    if root is None:
        raise BadInput(
            "not a git repository: there is no commit to capture from", "run mem capture inside the repository"
        )
    sha = gitops.commit_of(root, rev)
    if sha is None:
        raise BadInput(f"no commit {rev!r}", "name a commit, e.g. --commit HEAD")
    result = Captured(sha, dry_run)
    # A rebase or cherry-pick replays commits whose memories were captured when they were first made
    # (and writing them mid-operation would stop the next pick that touches the file).
    why = gitops.busy(root)
    if why is not None:
        result.skipped.append(("*", f"not now: {why}"))
        return result
    # In UTF-8 whatever i18n.commitEncoding says: a message is text to remember.
    head = gitops.run(
        ["-c", "i18n.logOutputEncoding=UTF-8", "show", "-s", "--encoding=UTF-8", "--format=%an%x00%B", sha], root
    ).stdout
    author, _, message = head.partition("\x00")
    subject = message.splitlines()[0] if message.strip() else ""
    if _BY_MEM.match(subject):
        result.skipped.append(("*", "a commit mem made"))
        return result
    flags = store.config.settings.auto_capture
    requests: list[Request] = []
    labels: list[str] = []
    for number, (key, value) in enumerate(trailers(message, root), 1):
        known = TRAILERS.get(key.lower())
        if known is None:
            continue
        flag, category = known
        label = f"{key} (trailer {number})"  # never its value: a refused one may hold a secret
        if flag not in flags:
            result.skipped.append((label, f"auto_capture.{flag} is off"))
        elif category not in store.config.categories:
            result.skipped.append((label, f"no {category} category"))
        else:
            floor = store.config.category(category).confidence_required
            requests.append(
                Request(
                    value,
                    category=category,
                    confidence=max(CONFIDENCE, floor),
                    agent=author.strip() or None,
                    session_id=f"commit:{sha}",
                    phase="commit",
                    metadata={"commit": sha},
                )
            )
            labels.append(label)
    if not requests:
        return result
    added = add_many(store, requests, moment, skip_invalid=True, dry_run=dry_run)
    result.written = list(added)
    for rejected in added.rejected:
        reason = "captured before" if rejected.duplicate_of else rejected.message
        result.skipped.append((labels[rejected.index], reason))
    return result
