"""A grimoire file as chunks of text, one per top-level item, so that a file
edited in a few places is parsed in those places only.

A chunk runs from an item's `-` line at column 0 to the line before the next
one (comments and blank lines after an item belong to its chunk). Each chunk
is known by a hash of its text; the catalog keeps that hash beside the row
it parsed to, so re-reading a changed file (a hand edit, a `git pull` that
brought three entries) parses only the chunks it has not seen.

Splitting is textual, so it is used only where it cannot differ from the
parser: a plain block sequence, where every line at column 0 is an item's
`-`, a comment or blank, and every new chunk parses on its own to exactly one
item. Anything else (flow style, directives, odd line breaks, a chunk that
does not parse alone, a first parse) is parsed whole, and the hashes are
taken from the parser's item positions: the same chunks, found the slow way.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from ..core.errors import Damaged
from .emitted import COMMENT, decode
from .yamlio import is_item_line, last_line, parse_entries

# Line breaks YAML knows besides \n: their lines would not be ours.
OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")
# What could be an anchor or an alias: they tie chunks together (a repeated
# anchor, an alias of another chunk's anchor), so a new chunk holding one is
# left to the whole file's parse. Quoted text can match too: only slower.
_AMPERSAND_OR_STAR = re.compile(r"[&*]\S")


def anchor_or_alias(text: str) -> bool:
    """Whether `text` may hold an anchor or an alias: `&x` or `*x` at a line's
    start or after a space, `[`, `{` or `,`. (One regular expression with that
    alternation scans a 5 MB text in a tenth of a second; `&` and `*` are rare.)"""
    for found in _AMPERSAND_OR_STAR.finditer(text):
        at = found.start()
        if at == 0 or text[at - 1].isspace() or text[at - 1] in "[{,":
            return True
    return False


class _Known:
    """Stands for an item whose chunk the catalog already holds a row for."""

    def __repr__(self) -> str:
        return "KNOWN"


KNOWN: Any = _Known()


class Placed(NamedTuple):
    """One item of a file as read: its data (or KNOWN), its 1-based inclusive
    line span, the hash of its chunk and the byte offset where the chunk starts."""

    item: Any
    span: tuple[int, int]
    digest: bytes
    offset: int


def chunk_text(lines: list[str], start: int, stop: int) -> str:
    """The text of lines[start:stop] as the file holds it: each line with its
    line break (the file's last line has one only if the file ends with one)."""
    if start >= stop:
        return ""
    return "\n".join(lines[start:stop]) + ("\n" if stop < len(lines) else "")


def text_hash(text: str) -> bytes:
    return data_hash(text.encode("utf-8", "surrogatepass"))


def data_hash(data: bytes) -> bytes:
    """128 bits of SHA-256 (OpenSSL's uses the CPU's SHA instructions; BLAKE2 is slower here)."""
    import hashlib  # only when a file changed or was written

    return hashlib.sha256(data).digest()[:16]


def content_hash(data: bytes) -> str:
    """A whole file's hash as text (the chunk hash of all of it)."""
    return data_hash(data).hex()


def item_starts(lines: list[str]) -> list[int] | None:
    """0-based indexes of the lines that open a top-level item, or None when
    something other than items, comments and blank lines sits at column 0."""
    starts: list[int] = []
    for number, line in enumerate(lines):
        if not line or line[0] == "#":
            continue
        if line[0] == " ":
            if not starts and line.strip() and not line.lstrip().startswith("#"):
                return None  # content before the first item
            continue
        if not is_item_line(line):
            return None
        starts.append(number)
    return starts


class Chunk:
    """One top-level item's text: lines [start, stop) of the file (0-based),
    beginning `offset` bytes into the file and `size` bytes long."""

    __slots__ = ("digest", "offset", "size", "span", "start", "stop", "text")

    def __init__(self, lines: list[str], start: int, stop: int, offset: int):
        self.start = start
        self.stop = stop
        self.text = chunk_text(lines, start, stop)
        encoded = self.text.encode("utf-8", "surrogatepass")
        self.digest = data_hash(encoded)
        self.size = len(encoded)
        self.offset = offset
        self.span = (start + 1, last_line(lines, start, stop) + 1)  # 1-based, inclusive


def make_chunks(lines: list[str], starts: list[int], base: int = 0) -> list[Chunk]:
    """Chunks from each start to the next, with their byte offsets (`base`:
    where `lines` begin in their file, when they are a slice of it)."""
    bounds = starts + [len(lines)]
    offset = base + (len(chunk_text(lines, 0, starts[0]).encode("utf-8", "surrogatepass")) if starts else 0)
    out = []
    for index, start in enumerate(starts):
        chunk = Chunk(lines, start, bounds[index + 1], offset)
        offset += chunk.size
        out.append(chunk)
    return out


def split(text: str) -> tuple[list[str], list[Chunk] | None]:
    """The file's lines and its chunks, or None when splitting could differ
    from the parser (see the module's docstring)."""
    lines = text.split("\n")
    if OTHER_BREAKS.search(text):
        return lines, None
    starts = item_starts(lines)
    if not starts or not preamble_ok(lines, starts[0]):
        return lines, None
    return lines, make_chunks(lines, starts)


def preamble_ok(lines: list[str], first: int) -> bool:
    """Whether the lines before the first item are what YAML reads as nothing:
    empty, spaces, or comments it accepts (no chunk holds them, so no chunk's
    reading checks them)."""
    return all(not line.strip(" ") or COMMENT.match(line) for line in lines[:first])


def parse_one(chunk: Chunk, where: str) -> tuple[bool, Any]:
    """(True, item) when the chunk parses on its own to exactly one item;
    (False, None) when only the whole file's parse can say what it is."""
    if anchor_or_alias(chunk.text):
        return False, None
    try:
        items, _ = parse_entries(chunk.text, where)
    except Damaged:
        return False, None  # the whole file's parse names the problem and its line
    if len(items) != 1:
        return False, None
    return True, items[0]


def worth_chunking(chunks: int, unknown: int) -> bool:
    """Whether parsing `unknown` of a file's `chunks` one by one beats one
    parse of the whole file. A chunk parsed alone costs over twice its share
    of a whole parse (a loader each), so chunking pays while at most a third
    of the chunks are new."""
    return unknown * 3 <= chunks


def parse_whole(text: str, where: str) -> tuple[list[str], list[tuple[Any, Chunk]]]:
    """Every item with its chunk, from one parse of the whole file (Damaged
    when it does not parse): the chunks the parser sees."""
    items, spans = parse_entries(text, where)
    lines = text.split("\n")
    # Where the parser's items start; a layout where they do not move down the
    # file (flow style) gets chunks that say so (empty, or out of order), and
    # writes refuse it.
    starts = [max(start - 1, 0) for start, _ in spans]
    chunks = (
        make_chunks(lines, starts)
        if all(a <= b for a, b in itertools.pairwise(starts))
        else [Chunk(lines, start, start, 0) for start in starts]
    )
    for chunk, span in zip(chunks, spans):
        chunk.span = span  # the parser's, for what splitting would not take
    return lines, list(zip(items, chunks))


def parse_reusing(text: str, where: str, reuse: Callable[[Chunk], bool] | None) -> tuple[list[str], list[Placed]]:
    """The file's lines and every item of a grimoire file, placed. Spans are
    1-based and inclusive, as `yamlio.parse_entries` gives.

    `reuse` is asked once per chunk, in order, whether the caller holds (or
    does not need) what parsing that chunk would give (None: every chunk is
    parsed); such an item comes back as KNOWN instead of parsed. A chunk in
    the emitter's own layout is read without the YAML parser (`emitted`).
    """
    lines, found = split(text)
    if found is not None:
        held = [reuse(chunk) for chunk in found] if reuse is not None else [False] * len(found)
        items = [None if known else decode(chunk.text) for chunk, known in zip(found, held)]
        if worth_chunking(len(found), sum(1 for known, item in zip(held, items) if not known and item is None)):
            out = []
            for chunk, known, item in zip(found, held, items):
                if known:
                    out.append(Placed(KNOWN, chunk.span, chunk.digest, chunk.offset))
                    continue
                if item is None:
                    ok, item = parse_one(chunk, where)
                    if not ok:
                        break
                out.append(Placed(item, chunk.span, chunk.digest, chunk.offset))
            else:
                return lines, out
    lines, parsed = parse_whole(text, where)
    return lines, [Placed(item, chunk.span, chunk.digest, chunk.offset) for item, chunk in parsed]


def parse_chunked(text: str, where: str, known: dict[bytes, int]) -> list[Placed]:
    """`parse_reusing` for the catalog: `known` counts the chunk hashes it
    holds rows for, and each row stands for one item (each hash comes back
    as KNOWN as many times as counted)."""
    left = dict(known)

    def reuse(chunk: Chunk) -> bool:
        if left.get(chunk.digest, 0) > 0:
            left[chunk.digest] -= 1
            return True
        return False

    return parse_reusing(text, where, reuse if known else None)[1]
