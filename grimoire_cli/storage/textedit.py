"""Pure text edits of a grimoire file: splice entries in place, append new
ones, rewrite one entry's changed fields.

Nothing here reads or writes files or touches the catalog: each function
takes text (or bytes) and where its entries sit, and returns the new text.
Writes use `splice` on bytes with the catalog's layout; the merge driver
uses `rewrite` on text it parsed itself.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from typing import Any, cast

from ..core.errors import BadInput, Damaged
from .chunks import chunk_text, data_hash, text_hash
from .layout import Appended, FileChange, Layout
from .yamlio import emit_entry, emit_fields, is_exact_emission, parse_entries


def splice(
    raw: bytes,
    layout: Layout,
    old: dict[str, Any],
    changes: Mapping[str, Any],
    appended: list[dict[str, Any]],
    where: str,
) -> tuple[bytes, FileChange]:
    """Entries of a file rewritten, removed or replaced by id (as `rewrite`
    does), then entries appended, on the file's bytes, given where its items
    sit: only the lines of the entries that change are decoded and edited; the
    rest is copied as bytes. Returns the new bytes and what changed."""
    ids, spans, offsets = layout
    changed: dict[int, Any] = {}
    removed: list[int] = []
    chunks: dict[int, bytes] = {}
    data = raw
    if changes:
        index_of = {entry_id: i for i, entry_id in enumerate(ids) if entry_id}
        missing = [key for key in changes if key not in index_of]
        if missing:
            raise BadInput(f"{', '.join(missing)} not found in {where}")
        positions = sorted(index_of[key] for key in changes)
        # From the entry before the first change (a removal changes its chunk)
        # to the end of the last changed entry's chunk.
        first, last = max(0, positions[0] - 1), positions[-1]
        _check_layout(raw, spans, offsets, first, last + 1, where)
        # _check_layout found the window's offsets known.
        begin, end = cast(int, offsets[first]), cast(int, offsets[last + 1]) if last + 1 < len(ids) else len(raw)
        base = spans[first][0] - 1
        window = raw[begin:end].decode("utf-8", "surrogatepass")
        text, kept, gone, edited, hashes = _edit_lines(
            window,
            ids[first : last + 1],
            [(a - base, b - base) for a, b in spans[first : last + 1]],
            old,
            changes,
            where,
        )
        new = text.encode("utf-8", "surrogatepass")
        data = raw[:begin] + new + raw[end:]
        lines, size = text.count("\n") - window.count("\n"), len(new) - (end - begin)
        changed = {first + i: item for i, item in edited.items()}
        removed = [first + i for i in gone]
        chunks = {first + k: digest for k, digest in hashes.items()}
        inner = [begin + offset for offset in _line_offsets(text, [a for a, _ in kept])]
        offsets = offsets[:first] + inner + [cast(int, offset) + size for offset in offsets[last + 1 :]]
        spans = (
            spans[:first]
            + [(a + base, b + base) for a, b in kept]
            + [(a + lines, b + lines) for a, b in spans[last + 1 :]]
        )
    new_rows: list[Appended] = []
    if appended:
        if spans:
            _check_layout(data, spans, offsets, len(spans) - 1, len(spans), where)
        data, new_rows, hashes_appended = _append_entries(data, bool(spans), appended)
        if spans:  # the last entry's chunk now ends where the first new one starts
            chunks[len(spans) - 1] = data_hash(data[offsets[-1] : new_rows[0].offset])
        chunks.update((len(spans) + i, digest) for i, digest in enumerate(hashes_appended))
    return data, FileChange(changed, removed, spans, offsets, new_rows, chunks)


def _append_entries(
    data: bytes, has_entries: bool, appended: list[dict[str, Any]]
) -> tuple[bytes, list[Appended], list[bytes]]:
    """`data` with `appended` written at its end: the new bytes, where each
    new entry sits, and each one's chunk hash."""
    if not has_entries and re.search(rb"^\s*\[\s*\]\s*$", data, re.M):
        # An empty flow list `[]` cannot be appended to; drop it.
        data = re.sub(rb"^\s*\[\s*\]\s*$\n?", b"", data, flags=re.M)
    if data and not data.endswith(b"\n"):
        data += b"\n"
    line_count, size = data.count(b"\n"), len(data)
    rows, hashes, pieces = [], [], []
    for item in appended:
        piece = emit_entry(item).encode("utf-8", "surrogatepass")
        count = piece.count(b"\n")
        rows.append(Appended(item, (line_count + 1, line_count + count), size))
        hashes.append(data_hash(piece))
        line_count += count
        size += len(piece)
        pieces.append(piece)
    return data + b"".join(pieces), rows, hashes


def _check_layout(
    data: bytes, spans: list[tuple[int, int]], offsets: list[int | None], first: int, stop: int, where: str
) -> None:
    """Entries first..stop-1 must each start with `- ` at column 0, in order:
    the only layout whose entries can be edited by their lines."""
    for i in range(first, stop):
        offset, previous = offsets[i], offsets[i - 1]
        ordered = i == first or (
            previous is not None and offset is not None and offset > previous and spans[i][0] > spans[i - 1][1]
        )
        if (
            offset is None
            or not ordered
            or spans[i][0] > spans[i][1]
            or not (data.startswith(b"- ", offset) or data[offset : offset + 2] in (b"-", b"-\n"))
        ):
            raise Damaged(
                where,
                spans[i][0],
                "entries are not written one per `- ` line at column 0 (flow style or an indented list), "
                "so mem cannot change them in place",
                "rewrite the file in block style, each entry starting with '- id:'",
                "layout",
            )


def _line_offsets(text: str, wanted: list[int]) -> list[int]:
    """Byte offsets in `text` of the starts of its 1-based lines `wanted` (ascending)."""
    out: list[int] = []
    offset = 0
    targets = iter(wanted)
    target = next(targets, None)
    for number, line in enumerate(text.split("\n"), 1):
        while target == number:
            out.append(offset)
            target = next(targets, None)
        if target is None:
            break
        offset += len(line.encode("utf-8", "surrogatepass")) + 1
    return out


class Raw(list[Any]):
    """Replacement lines for an entry's block, used as they are (merge conflicts)."""


def rewrite(
    text: str,
    ids: list[str | None],
    spans: list[tuple[int, int]],
    old: dict[str, Any],
    changes: Mapping[str, Any],
    appended: list[dict[str, Any]],
    where: str = "<text>",
) -> str:
    """A file's text with entries rewritten (new data), removed (None) or replaced
    by `Raw` lines, by id, touching only their lines; then entries appended
    (the merge driver's edit, on text it parsed; writes use `splice`).

    `ids` and `spans` describe the file's items in order, `old` maps each
    changed id to its current data.
    """
    kept = spans
    if changes:
        text, kept, _, _, _ = _edit_lines(text, ids, spans, old, changes, where)
    if appended:
        data, _, _ = _append_entries(text.encode("utf-8", "surrogatepass"), bool(kept), appended)
        text = data.decode("utf-8", "surrogatepass")
    return text


def _edit_lines(
    text: str,
    ids: list[str | None],
    spans: list[tuple[int, int]],
    old: dict[str, Any],
    changes: Mapping[str, Any],
    where: str,
) -> tuple[str, list[tuple[int, int]], list[int], dict[int, Any], dict[int, bytes]]:
    """Entries of `text` rewritten, removed or replaced by id, in place: (text,
    spans kept, positions removed, new data by position, chunk hashes of the
    kept entries whose text changed). One pass from the bottom up, so a
    change's lines are the file's own and every line is copied once (an
    archive of thousands of entries spliced each in place was quadratic)."""
    lines = text.split("\n")
    index_of = {entry_id: i for i, entry_id in enumerate(ids) if entry_id}
    missing = [key for key in changes if key not in index_of]
    if missing:
        raise BadInput(f"{', '.join(missing)} not found in {where}")
    removed: list[int] = []
    changed: dict[int, Any] = {}
    deltas: dict[int, int] = {}  # position -> lines added (negative: taken away)
    tail: list[str] = []  # the final text below `cursor`, last line first
    cursor = len(lines)  # lines[cursor:] are final (as `tail`)
    for entry_id in sorted(changes, key=lambda k: index_of[k], reverse=True):
        i = index_of[entry_id]
        start, stop = spans[i]
        tail.extend(reversed(lines[stop:cursor]))
        old_block = lines[start - 1 : stop]
        new_data = changes[entry_id]
        replacement = replacement_lines(old_block, old, entry_id, new_data)
        delta = len(replacement) - len(old_block)
        if new_data is None:
            removed.append(i)
            # Also drop the blank line that separated it, if any (not the text's last line).
            if len(tail) > 1 and tail[-1] == "":
                tail.pop()
                delta -= 1
        else:
            tail.extend(reversed(replacement))
            if not isinstance(new_data, Raw):
                changed[i] = in_file_order(replacement, new_data)
        deltas[i] = delta
        cursor = start - 1
    tail.extend(reversed(lines[:cursor]))
    tail.reverse()
    lines = tail
    gone = set(removed)
    kept = []
    shift = 0  # lines added above the entry at hand
    for i, (start, stop) in enumerate(spans):
        if i not in gone:
            kept.append((start + shift, stop + shift + deltas.get(i, 0)))
        shift += deltas.get(i, 0)
    survivors = [i for i in range(len(spans)) if i not in gone]  # old positions, in order
    # The chunks (chunks.py) whose text this edit changed: the rewritten
    # entries and the one before each removed entry (it takes over what
    # trailed it).
    touched = {bisect_left(survivors, index_of[k]) for k in changes if index_of[k] not in gone}
    touched.update(bisect_left(survivors, i) - 1 for i in gone)
    touched.discard(-1)
    chunk_hashes = {k: _kept_chunk(lines, kept, k) for k in touched}
    return "\n".join(lines), kept, removed, changed, chunk_hashes


def replacement_lines(block: list[str], old: dict[str, Any], entry_id: str, new: Any) -> list[str]:
    """The lines the block of entry `entry_id` becomes: none (removed: `new`
    is None), `Raw` lines as they are, or the block with the fields that
    changed from `old[entry_id]` rewritten."""
    if new is None:
        return []
    if isinstance(new, Raw):
        return list(new)
    return edit_block(block, old[entry_id], new)


def in_file_order(lines: list[str], data: dict[str, Any]) -> dict[str, Any]:
    """`data` with its keys in the order its block `lines` holds them: the
    catalog keeps an entry as its file reads (I1), and a block emitted afresh
    (a renamed id) or edited in place may order them otherwise than `data`."""
    first = re.match(r"^-( +)", lines[0]) if lines else None
    if first is None:
        return data
    indent = 1 + len(first.group(1))
    order = []
    for number, line in enumerate(lines):
        match = _FIELD_RE.match(" " * indent + line[indent:] if number == 0 else line)
        if match and len(match.group(1)) == indent:
            order.append(match.group(2))
    if order == list(data) or sorted(order) != sorted(data):
        return data
    return {key: data[key] for key in order}


def _kept_chunk(lines: list[str], kept: list[tuple[int, int]], k: int) -> bytes:
    """Hash of the chunk of the k-th remaining entry in `lines`."""
    start = kept[k][0] - 1
    stop = kept[k + 1][0] - 1 if k + 1 < len(kept) else len(lines)
    return text_hash(chunk_text(lines, start, stop))


_FIELD_RE = re.compile(r"^( *)([A-Za-z_][A-Za-z0-9_-]*):(?: |$)")


def edit_block(block: list[str], old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The lines of one entry with only its changed top-level fields rewritten.

    Comments and formatting of untouched fields stay byte-identical. When the
    entry is not in the usual block layout, it is emitted afresh instead.
    """
    first = re.match(r"^-( +)", block[0]) if block else None
    if first is None:
        return emit_entry(new).rstrip("\n").split("\n")
    indent = 1 + len(first.group(1))
    starts: dict[str, int] = {}
    order: list[int] = []
    for number, line in enumerate(block):
        probe = " " * indent + line[indent:] if number == 0 else line
        match = _FIELD_RE.match(probe)
        if match and len(match.group(1)) == indent:
            starts[match.group(2)] = number
            order.append(number)

    def extent(key: str) -> tuple[int, int]:
        begin = starts[key]
        later = [n for n in order if n > begin]
        end = (later[0] if later else len(block)) - 1
        while end > begin and (not block[end].strip() or block[end].lstrip().startswith("#")):
            end -= 1
        return begin, end

    # In a fixed order (the old block's keys, then new ones as `new` holds
    # them), so the same edit always writes the same lines.
    changed = [k for k in [*old, *(k for k in new if k not in old)] if old.get(k, _MISSING) != new.get(k, _MISSING)]
    if any(starts.get(k) == 0 for k in changed):
        return emit_entry(new).rstrip("\n").split("\n")
    result = list(block)
    edits = []
    added: list[str] = []
    for key in changed:
        if key in starts:
            begin, end = extent(key)
            edits.append((begin, end, emit_fields({key: new[key]}, indent) if key in new else []))
        else:
            added.extend(emit_fields({key: new[key]}, indent))
    if added:
        tail = max(extent(k)[1] for k in starts) if starts else len(block) - 1
        edits.append((tail + 1, tail, added))
    for begin, end, fresh in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        result[begin : end + 1] = fresh
    if is_exact_emission(result, new):
        # The block is the emitter's own text for `new`: verified by
        # construction, without importing the YAML parser.
        return result
    parsed, _ = parse_entries("\n".join(result) + "\n", "<edit>")
    if parsed != [new]:
        return emit_entry(new).rstrip("\n").split("\n")
    return result


_MISSING = object()
