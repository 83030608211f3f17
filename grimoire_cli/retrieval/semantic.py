"""Semantic search, the `semantic` extra (`pip install 'grimoire-cli[semantic]'`):
static embeddings (model2vec) of each entry's summary and content, kept in
the catalog, and the query's nearest entries fused with the lexical
ranking by reciprocal rank.

    fused = (1 / (K + lexical rank) + w / (K + semantic rank)) * (K + 1) / (1 + w)

with K = 60 and w = retrieval.semantic_weight; a ranking that did not find
an entry adds nothing, and 1 is first in both. The semantic ranking is the
`CANDIDATES` chosen entries nearest the query by cosine (those above 0):
the filters of the query choose them as they choose the lexical matches.

On when `retrieval.semantic` is true or a query asks (`mem query
--semantic`). The model is `retrieval.semantic_model`: a folder, or a
Hugging Face name model2vec fetches on first use into its cache (later runs
read the cache, offline). Without the extra, or when the model cannot be
loaded, the query says why in one line (`Ranking.notes`) and ranks
lexically. Nothing here is imported, and nothing embedded, while it is off.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..storage.catalog.queries import Ranked

if TYPE_CHECKING:
    from ..storage.catalog.queries import Filter
    from ..storage.store import Store

CANDIDATES = 50  # of each ranking, as the fusion was measured (../shared/benchmarks/locomo)
RRF_K = 60
_LOADED: dict[str, Model | str] = {}  # per process, by model identity: a model, or why there is none


class Model:
    """A loaded static model; `identity` names it in the catalog (a folder's
    includes its weights' mtime, so a model saved again is embedded again)."""

    __slots__ = ("identity", "static")

    def __init__(self, identity: str, static: Any):
        self.identity, self.static = identity, static

    def vectors(self, texts: list[str]) -> Any:
        """Unit-length float32 rows, one per text (zero for a text of no known token)."""
        import numpy as np

        matrix = np.asarray(self.static.encode(texts, show_progress_bar=False), dtype=np.float32).reshape(
            len(texts), -1
        )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)

    def blobs(self, texts: list[str]) -> list[bytes]:
        return [row.tobytes() for row in self.vectors(texts)]


def model_of(store: Store) -> Model | str:
    """The configured model, loaded once per process; or, when it cannot be, the one-line reason."""
    setting = str(store.config.retrieval["semantic_model"])
    source = _source(store.config.root, setting)
    identity = _identity(source)
    if identity not in _LOADED:
        _LOADED[identity] = _load(source, identity)
    return _LOADED[identity]


def _source(root: Path, setting: str) -> Path | str:
    """A folder (one that exists, or a setting that starts like a path), else a Hugging Face name."""
    path = Path(setting).expanduser()
    path = path if path.is_absolute() else root / path
    return path if path.exists() or setting.startswith((".", "/", "~")) else setting


def _identity(source: Path | str) -> str:
    if isinstance(source, str):
        return f"hub:{source}"
    weights = source / "model.safetensors"
    try:
        stamp = (weights if weights.exists() else source).stat().st_mtime_ns
    except OSError:
        stamp = 0
    return f"{source}@{stamp}"


def _load(source: Path | str, identity: str) -> Model | str:
    fallback = "; lexical results only"
    try:
        from model2vec import StaticModel
        from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs; one attribute set
    except ImportError:
        return "semantic search needs the semantic extra: pip install 'grimoire-cli[semantic]'" + fallback
    # No progress-bar monitor thread (model2vec's bars are off anyway): a process with a thread never forks the
    # parallel parser (storage/parallel.py), so a query after loading the model would parse a cold catalog alone.
    tqdm.monitor_interval = 0
    if isinstance(source, Path) and not source.is_dir():
        return f"semantic model folder {source} not found (retrieval.semantic_model)" + fallback
    try:
        # force_download=False: a model in the cache is read from it, offline.
        static = StaticModel.from_pretrained(source, force_download=False)
    except Exception as exc:  # model2vec and huggingface_hub raise many kinds; each means no model
        reason = _first_line(exc)
        if isinstance(source, Path):
            return f"semantic model {source} could not be loaded ({reason})" + fallback
        return (
            f"semantic model {source!r} is not cached and could not be fetched ({reason}){fallback}: "
            "connect once, or set retrieval.semantic_model to a model folder"
        )
    return Model(identity, static)


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


class Near:
    """One entry the semantic ranking found: its row, id and cosine to the query."""

    __slots__ = ("cosine", "id", "rowid")

    def __init__(self, rowid: int, id: str, cosine: float):
        self.rowid, self.id, self.cosine = rowid, id, cosine


def nearest(store: Store, model: Model, text: str, chosen: Filter, *, include_archive: bool) -> list[Near]:
    """The chosen entries nearest `text`, best first (at most `CANDIDATES`, cosine above 0);
    entries not embedded yet are embedded now (`Reads.vectors`)."""
    import numpy as np

    rows = store.reads.vectors(chosen, model.identity, model.blobs, include_archive=include_archive)
    query = model.vectors([text])[0]
    rows = [row for row in rows if len(row[2]) == query.nbytes]  # a vector of other dimensions cannot be compared
    if not rows or not query.any():
        return []
    matrix = np.frombuffer(b"".join(blob for _, _, blob in rows), dtype=np.float32).reshape(len(rows), -1)
    cosines = matrix @ query
    best = np.argsort(-cosines, kind="stable")[:CANDIDATES]  # rows come in rowid order: ties stay put
    return [Near(rows[i][0], rows[i][1], float(cosines[i])) for i in best if cosines[i] > 0]


class Fused(Ranked):
    """A ranked row of the hybrid ranking: its lexical parts (zero when only the
    semantic ranking found it) and `fusion`, the ranks and cosine it was fused from."""

    __slots__ = ("fusion",)

    def __init__(self, base: Ranked, fusion: dict[str, float]):
        super().__init__(
            base.rowid, base.id, base.bm25, base.relevance, base.recency, base.prior, base.neighbours, base.score
        )
        self.coverage = base.coverage
        self.fusion = fusion


def fused(
    lexical: list[Ranked], lexical_total: int, near: list[Near], weight: float, limit: int | None
) -> tuple[list[Fused], int]:
    """The two rankings fused by reciprocal rank, best first (at most `limit`),
    and how many entries either found (the lexical matches past those ranked
    here counted as if the semantic ranking found none of them)."""
    rows: dict[int, Fused] = {}
    for rank, row in enumerate(lexical, 1):
        rows[row.rowid] = Fused(row, {"lexical_rank": rank})
    for rank, hit in enumerate(near, 1):
        if hit.rowid not in rows:
            rows[hit.rowid] = Fused(Ranked(hit.rowid, hit.id, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), {})
        rows[hit.rowid].fusion.update(semantic_rank=rank, cosine=hit.cosine)
    scale = (RRF_K + 1) / (1 + weight)
    for row in rows.values():
        lexical_rank, semantic_rank = row.fusion.get("lexical_rank"), row.fusion.get("semantic_rank")
        row.score = scale * (
            (1 / (RRF_K + lexical_rank) if lexical_rank else 0.0)
            + (weight / (RRF_K + semantic_rank) if semantic_rank else 0.0)
        )
    ordered = sorted(
        rows.values(), key=lambda row: (-row.score, row.fusion.get("lexical_rank", len(rows) + 1), row.id, row.rowid)
    )
    only_near = sum(1 for row in ordered if "lexical_rank" not in row.fusion)
    return ordered if limit is None else ordered[:limit], lexical_total + only_near
