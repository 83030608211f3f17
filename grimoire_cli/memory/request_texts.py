"""What the guard scans of a request: every free text as its caller gave
it, before `request.build` checks or normalises a field (a tag is slugged:
`ghp_…` would be stored as `ghp-…`, unseen), by the field it is stored in so
a refusal names it; then what `build` made that was not given (a derived
summary, a session id from the environment), so nothing stored goes unscanned.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import Refused

# Options that hold no free text: ids (each must name an entry), numbers,
# a flag, and a timestamp (parsed; stored in the schema's form).
_NOT_TEXT = frozenset(
    {"id", "supersedes", "related", "superseded_by", "confidence", "importance", "dedupe", "timestamp"}
)
# Where an option is stored, when not under its own name: a refusal names the field as the entry has it.
_STORED_AS = {
    "session_id": "source.session_id",
    "agent": "source.agent",
    "phase": "source.phase",
    "file_path": "source.file_path",
    "lines": "source.line_range",
}
# Options whose mapping holds fields of their own, each named by itself (a kind's `context`, `steps`).
_SPREAD = {"fields": "", "source_extra": "source.", "archive": ""}
# What `build` strips of `<private>` sections (never stored, so never scanned).
_PRIVATE_STRIPPED = ("summary", "metadata", "fields")
# Scanned first: a kind's fields, then the content made of them; last: the summary, often made of the rest.
_FIRST_LAST = ("fields", "content", "summary")

Texts = dict[str, list[str]]


def given_texts(request: Any, content: str) -> Texts:
    """Every free text of a `request.Request` as its caller gave it, by the
    field it is stored in: the one place the guard's scan of a request is
    collected. It goes over every option (the request's `__slots__`; only
    `_NOT_TEXT` is left out), so a new one is scanned too; a mapping's keys
    are texts as its values are. What callers make of other fields comes
    after them (the content of an episode, the summary of a fact), so a
    refusal names the field the secret was given in."""
    texts: Texts = {}
    for name in (
        "fields",
        "content",
        *(option for option in request.__slots__ if option not in _FIRST_LAST),
        "summary",
    ):
        value = content if name == "content" else getattr(request, name)
        if name in _NOT_TEXT or value is None:
            continue
        if name in _PRIVATE_STRIPPED:
            value = without_private(value)
        if name in _SPREAD and isinstance(value, dict):
            for field, inner in value.items():
                _collect(texts, f"{_SPREAD[name]}{field}", inner)
        else:
            _collect(texts, _STORED_AS.get(name, name), value)
    return texts


def line_texts(item: dict[str, Any]) -> Texts:
    """Every free text of an import line as given, by field (ids left out),
    for an import line refused before it becomes a request."""
    texts: Texts = {}
    for name, value in item.items():
        if name not in ("id", "supersedes", "superseded_by", "related", "related_memories"):
            _collect(texts, name, value)
    return texts


def _collect(texts: Texts, name: str, value: Any) -> None:
    """The texts of `value` at any depth into `texts`: a list's under its own
    name, a mapping's keys under its name, each of its values under `name.key`."""
    if isinstance(value, str):
        texts.setdefault(name, []).append(value)
    elif isinstance(value, dict):
        for key, inner in value.items():
            _collect(texts, name, key)
            _collect(texts, f"{name}.{key}", inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            _collect(texts, name, inner)


def not_given(data: dict[str, Any], given: Texts) -> Texts:
    """The texts of a built entry that were not given as they are (a derived
    summary, a session id from the environment, a default): scanned after
    `build`, so nothing stored goes unscanned."""
    scanned = {text for texts in given.values() for text in texts}
    stored: Texts = {}
    _collect(
        stored,
        "",
        {name: value for name, value in data.items() if name not in ("id", "supersedes", "related_memories")},
    )
    # Collected from the root, a top-level field's name starts with '.', and the
    # field names themselves are the texts collected under no name.
    return {name[1:]: [text for text in texts if text not in scanned] for name, texts in stored.items() if name}


def refuse_secrets(texts: Texts) -> None:
    """Refuse the request when any of `texts` holds a secret or personal data, naming the field, never the secret."""
    from ..guard.scan import redact, scan_fields  # its rules are compiled when first used

    findings = scan_fields(texts)
    if findings:
        # A field under a mapping is named by its keys, and a key may be the secret.
        where = redact("; ".join(f"{finding} in {name}" for name, finding in findings[:3]))[0]
        raise Refused(
            f"refusing to store a secret or personal data: {where}",
            "remove it; say where the secret lives instead (e.g. 'the deploy key in the CI secret store')",
        )


def without_private(value: Any) -> Any:
    """A mapping's texts, at any depth, as content is kept: `<private>` sections gone."""
    from ..guard.scan import strip_private

    if isinstance(value, str):
        return strip_private(value)
    if isinstance(value, dict):
        return {without_private(k) if isinstance(k, str) else k: without_private(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_private(item) for item in value]
    return value
