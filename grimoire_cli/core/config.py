"""Configuration: find `.loa.config.yaml`, apply defaults, check types and paths.

One function decides where state lives (`load_config`); everything else gets
a `Config` and never looks at the environment for paths again.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from .config_cache import cached_config, keep_config
from .errors import BadInput, Damaged
from .model import CATEGORY_RE, DAYS_TTL_RE, check_ttl
from .settings import SCOPE_RE, Settings, build_settings
from .settings import expect as _expect

CONFIG_NAME = ".loa.config.yaml"

DEFAULT_CATEGORIES: dict[str, dict[str, Any]] = {
    "fact": {"storage_file": "facts.yaml", "ttl": "permanent", "confidence_required": 0.8},
    "decision": {"storage_file": "decisions.yaml", "ttl": "permanent", "confidence_required": 0.9},
    "learning": {"storage_file": "learnings.yaml", "ttl": "90d", "confidence_required": 0.7},
    "error": {"storage_file": "errors.yaml", "ttl": "30d", "confidence_required": 0.6},
    "preference": {"storage_file": "preferences.yaml", "ttl": "permanent", "confidence_required": 0.5},
}
DEFAULT_RETRIEVAL: dict[str, Any] = {
    "max_per_query": 10,
    "min_confidence": 0.6,
    "recency_weight": 0.2,
    "integrate_with_oracle": True,
    # The `semantic` extra (retrieval/semantic.py): off unless asked for. The
    # weight is the one that kept every LoCoMo dev category up (benchmarks/README.md).
    "semantic": False,
    "semantic_model": "minishlab/potion-base-8M",
    "semantic_weight": 0.1,
    # The share of the query's terms an entry holds (search.covered); 0 turns it off.
    "coverage_weight": 0.15,
}
DEFAULT_LIFECYCLE: dict[str, Any] = {
    "auto_archive": True,
    "archive_dir": "grimoires/loa/memory/archive",
    "check_on_session_start": True,
    "warn_before_archive_days": 7,
}
DEFAULT_STORAGE_DIR = "grimoires/loa/memory"
# What a category holds beside a note's fields (docs/agent-personas.md), and the
# preset that brings a category of each kind.
KINDS = {
    "note": None,
    "episode": "sabre",
    "procedure": "sabre",
    "task": "sabre",
    "summary": "samaritan",
    "chat": "protea",
    "insight": "pms",
}
LOCAL_DIR = "local"  # under the storage dir: categories with tracked: false

DEFAULT_CONFIG_TEXT = """\
# grimoire configuration (mem). Every key is optional; these are the defaults.
memory_schema:
  enabled: true
  storage_dir: grimoires/loa/memory
  categories:
    fact:       {storage_file: facts.yaml,       ttl: permanent, confidence_required: 0.8}
    decision:   {storage_file: decisions.yaml,   ttl: permanent, confidence_required: 0.9}
    learning:   {storage_file: learnings.yaml,   ttl: 90d,       confidence_required: 0.7}
    error:      {storage_file: errors.yaml,      ttl: 30d,       confidence_required: 0.6}
    preference: {storage_file: preferences.yaml, ttl: permanent, confidence_required: 0.5}
  auto_capture: {decisions: true, errors: true, learnings: true}
  retrieval: {max_per_query: 10, min_confidence: 0.6, recency_weight: 0.2, integrate_with_oracle: true}
  lifecycle:
    auto_archive: true
    archive_dir: grimoires/loa/memory/archive
    check_on_session_start: true
    warn_before_archive_days: 7
"""


class Category(NamedTuple):
    """One configured category. `tracked: false` keeps its files under
    `<storage_dir>/local/`, git-ignored: volatile state, never committed."""

    name: str
    storage_file: str
    ttl: str
    confidence_required: float
    kind: str = "note"
    tracked: bool = True

    @property
    def loa(self) -> bool:
        """One of Loa's five categories: its entries must stay valid against
        Loa's own schema, so its ttls are days or permanent."""
        return self.name in DEFAULT_CATEGORIES and self.kind == "note"

    def takes_ttl(self, ttl: str) -> bool:
        """Whether an entry of this category may have this (well-formed) ttl."""
        return not self.loa or bool(DAYS_TTL_RE.match(ttl))


class Config:
    """Resolved configuration; every path is absolute and inside `root`."""

    __slots__ = (
        "archive_dir",
        "base_categories",
        "categories",
        "enabled",
        "lifecycle",
        "path",
        "retrieval",
        "root",
        "scope_categories",
        "settings",
        "storage_dir",
    )

    def __init__(
        self,
        root: Path,
        path: Path | None,
        storage_dir: Path,
        archive_dir: Path,
        categories: dict[str, Category],
        retrieval: dict[str, Any] | None = None,
        lifecycle: dict[str, Any] | None = None,
        enabled: bool = True,
        base_categories: dict[str, Category] | None = None,
        scope_categories: dict[str, dict[str, Category]] | None = None,
        settings: Settings | None = None,
    ):
        self.root = root
        self.path = path
        self.storage_dir = storage_dir
        self.archive_dir = archive_dir
        self.categories = categories
        # The categories every scope has, and those only some scopes add (memory_schema.scopes).
        self.base_categories = categories if base_categories is None else base_categories
        self.scope_categories = scope_categories or {}
        self.retrieval = dict(DEFAULT_RETRIEVAL) if retrieval is None else retrieval
        self.lifecycle = dict(DEFAULT_LIFECYCLE) if lifecycle is None else lifecycle
        self.enabled = enabled
        # Tiers, decay, context recipes, consolidate, compaction (settings.py).
        self.settings = Settings() if settings is None else settings

    def __repr__(self) -> str:
        return f"Config(root={self.root!r}, path={self.path!r}, storage_dir={self.storage_dir!r})"

    def confidence_filter(self, given: float | None) -> tuple[float, dict[str, float]]:
        """The confidence a read asks for: `given` (the user's --min-confidence)
        everywhere; by default retrieval.min_confidence, except that a category
        whose own floor is lower is filtered at its floor, so an entry `mem add`
        accepted is never hidden by the global default (a preference's floor
        is 0.5, the default 0.6)."""
        if given is not None:
            return given, {}
        threshold = float(self.retrieval["min_confidence"])
        return threshold, {
            c.name: c.confidence_required for c in self.categories.values() if c.confidence_required < threshold
        }

    def category(self, name: str) -> Category:
        try:
            return self.categories[name]
        except KeyError:
            raise BadInput(
                f"unknown category {name!r}",
                f"use one of: {', '.join(self.categories)} (or add it under memory_schema.categories)",
            ) from None

    def category_for_file(self, filename: str) -> Category | None:
        for category in self.categories.values():
            if category.storage_file == filename:
                return category
        return None

    def of_kind(self, kind: str, name: str | None = None) -> Category:
        """The category a kind's command writes to: `name` (checked to be of
        that kind), else the first configured one of the kind. None of that
        kind is bad input, with the preset that adds one."""
        if name is not None:
            category = self.category(name)
            if category.kind != kind:
                raise BadInput(
                    f"category {name!r} is of kind {category.kind}, not {kind}",
                    f"name a {kind} category ({', '.join(self.names_of_kind(kind)) or 'none configured'})",
                )
            return category
        for category in self.categories.values():
            if category.kind == kind:
                return category
        preset = KINDS.get(kind)
        raise BadInput(
            f"no category of kind {kind} in this grimoire",
            f"run `mem init --preset {preset}` to add one"
            if preset
            else f"add one under memory_schema.categories with kind: {kind}",
        )

    def names_of_kind(self, kind: str) -> list[str]:
        return [c.name for c in self.categories.values() if c.kind == kind]

    @property
    def local_dir(self) -> Path:
        """Where categories with `tracked: false` keep their files (git-ignored)."""
        return self.storage_dir / LOCAL_DIR

    def folder(self, category: Category, archived: bool = False) -> Path:
        """The folder holding a category's file (or its archive file)."""
        if not category.tracked:
            return self.local_dir / "archive" if archived else self.local_dir
        return self.archive_dir if archived else self.storage_dir

    def folders(self) -> list[Path]:
        """Every folder a grimoire file of this config can sit in."""
        found = [self.storage_dir, self.archive_dir]
        if any(not c.tracked for c in self.categories.values()):
            found += [self.local_dir, self.local_dir / "archive"]
        return found

    # -- scopes (docs/commands.md): a scope is a grimoire dir `<scopes>/<name>/memory`

    @property
    def scopes_dir(self) -> Path | None:
        """The folder holding one folder per scope (`grimoires/`), or None
        when the storage dir is not laid out as `<scopes>/<scope>/memory`."""
        return self.storage_dir.parent.parent if self.storage_dir.name == "memory" else None

    @property
    def scope(self) -> str | None:
        """This grimoire's scope (the default layout's is `loa`)."""
        return self.storage_dir.parent.name if self.scopes_dir is not None else None

    def for_scope(self, name: str) -> Config:
        """The same settings over another scope's grimoire (its archive where
        this one's is, relative to the storage dir)."""
        check_scope(name)
        if self.scopes_dir is None:
            raise BadInput(
                f"scopes need a storage_dir laid out as <folder>/<scope>/memory, not {self.relative(self.storage_dir)}",
                "set memory_schema.storage_dir to e.g. grimoires/loa/memory",
            )
        storage = self.scopes_dir / name / "memory"
        try:
            archive = storage / self.archive_dir.relative_to(self.storage_dir)
        except ValueError:
            archive = storage / "archive"
        categories = {**self.base_categories, **self.scope_categories.get(name, {})}
        return Config(
            self.root,
            self.path,
            storage,
            archive,
            categories,
            self.retrieval,
            self.lifecycle,
            self.enabled,
            self.base_categories,
            self.scope_categories,
            self.settings,
        )

    def scopes(self) -> list[str]:
        """The scopes that exist, sorted (a folder with a `memory` folder in it)."""
        folder = self.scopes_dir
        if folder is None or not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if (p / "memory").is_dir() and SCOPE_RE.match(p.name))

    def relative(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def is_inside(root: Path, path: Path) -> bool:
    """Whether a resolved `path` is `root` or inside it (the one check that
    paths from input, config and symlinks never leave the repository)."""
    return path == root or root in path.parents


def find_root(start: Path) -> Path:
    """The git work-tree root above `start`, else `start` itself."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def find_config(start: Path) -> Path | None:
    """Walk up from `start` to the work-tree root looking for the config."""
    for folder in (start, *start.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
        if (folder / ".git").exists():
            return None
    return None


def check_scope(name: str) -> str:
    """A scope name: a lowercase slug, so it can never leave the scopes folder."""
    if not isinstance(name, str) or not SCOPE_RE.match(name):
        raise BadInput(
            f"bad scope {name!r}",
            "a scope is a lowercase slug like data-analyst (letters, digits, '-', '_'; no '/' or '..')",
        )
    return name


def load_config(
    path: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    scope: str | None = None,
    must_exist: bool = True,
) -> Config:
    """Resolve the config for a working directory (`config`, the file asked
    for, wins), over `scope` when one is named (callers pass the runtime's
    MEM_CONFIG and MEM_SCOPE when nothing else was given); an unknown scope
    is refused unless `must_exist` is off (`mem init` creates it), and so
    is a directory with neither a config nor the storage folder: a write
    there would start a grimoire nobody asked for."""
    found = _load(path, config)
    if must_exist and found.path is None and not found.storage_dir.is_dir():
        raise BadInput(
            f"no grimoire here: no {CONFIG_NAME} and no {found.relative(found.storage_dir)}/ in {found.root}",
            "run `mem init` to start one (or pass --config)",
        )
    if scope is None or scope == found.scope:
        return found
    scoped = found.for_scope(scope)
    if must_exist and not scoped.storage_dir.is_dir():
        known = ", ".join(found.scopes()) or "none yet"
        raise BadInput(f"unknown scope {scope!r} (scopes: {known})", f"create it with `mem --scope {scope} init`")
    return scoped


def _load(path: str | os.PathLike[str] | None, config: str | os.PathLike[str] | None) -> Config:
    start = Path(path or ".").resolve()
    explicit = config
    config_path: Path | None
    if explicit:
        config_path = Path(explicit).resolve()
        if not config_path.is_file():
            raise BadInput(f"config file not found: {explicit}", "check --config or MEM_CONFIG")
        root = find_root(config_path.parent)
    else:
        config_path = find_config(start)
        root = config_path.parent if config_path else find_root(start)
    raw: Any = {}
    if config_path is not None:
        raw = _read(config_path)
    return build_config(raw, root, config_path)


def _read(config_path: Path) -> Any:
    root = find_root(config_path.parent)
    cached = cached_config(config_path, root)
    if cached is not None:
        return cached
    from ..storage.yamlio import parse_document  # a leaf module: no cycle

    try:
        text = config_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Damaged(str(config_path), 1, f"cannot read config: {exc}", "fix or remove the file", "config") from None
    try:
        data, _ = parse_document(text, str(config_path))
    except Damaged:
        marker = next((n for n, line in enumerate(text.splitlines(), 1) if line.startswith("<<<<<<< ")), None)
        if marker is None:
            raise
        raise Damaged(
            str(config_path),
            marker,
            "a merge stopped on a conflict in the config",
            "keep one side between the <<<<<<< and >>>>>>> markers, remove the markers, then `git add` the config",
            "merge-conflict",
        ) from None
    keep_config(config_path, root, data or {})
    config: dict[str, Any] = data or {}
    return config


def _inside(root: Path, relative: Any, where: str, name: str) -> Path:
    _expect(relative, str, where, name)
    target: Path = (root / relative).resolve()
    if not is_inside(root, target):
        raise Damaged(
            where,
            None,
            f"{name} {relative!r} points outside the repository",
            "use a path inside the repository",
            "config",
        )
    return target


def build_config(raw: Any, root: Path, config_path: Path | None) -> Config:
    where = str(config_path or CONFIG_NAME)
    root = root.resolve()
    _expect(raw, dict, where, "the config")
    schema = raw.get("memory_schema") or {}
    _expect(schema, dict, where, "memory_schema")
    enabled = _expect(schema.get("enabled", True), bool, where, "memory_schema.enabled")
    storage_dir = _inside(root, schema.get("storage_dir", DEFAULT_STORAGE_DIR), where, "memory_schema.storage_dir")

    raw_categories = schema.get("categories")
    if raw_categories is None:
        raw_categories = DEFAULT_CATEGORIES
    categories = _categories(raw_categories, where, "memory_schema.categories")
    if not categories:
        raise Damaged(where, None, "memory_schema.categories is empty", "configure at least one category", "config")
    scope_categories: dict[str, dict[str, Category]] = {}
    raw_scopes = _expect(schema.get("scopes") or {}, dict, where, "memory_schema.scopes")
    for scope_name, spec in raw_scopes.items():
        label = f"memory_schema.scopes.{scope_name}"
        if not isinstance(scope_name, str) or not SCOPE_RE.match(scope_name):
            raise Damaged(where, None, f"{label}: a scope name is a lowercase slug", "fix the config", "config")
        spec = _expect(spec or {}, dict, where, label)
        extra = _categories(
            _expect(spec.get("categories") or {}, dict, where, f"{label}.categories"), where, f"{label}.categories"
        )
        _distinct_files({**categories, **extra}, where, f"{label}.categories")
        scope_categories[scope_name] = extra

    retrieval = dict(DEFAULT_RETRIEVAL)
    retrieval.update(_expect(schema.get("retrieval") or {}, dict, where, "memory_schema.retrieval"))
    _expect(retrieval["max_per_query"], int, where, "retrieval.max_per_query")
    for key in ("min_confidence", "recency_weight", "semantic_weight", "coverage_weight"):
        _expect(retrieval[key], (int, float), where, f"retrieval.{key}")
    _expect(retrieval["semantic"], bool, where, "retrieval.semantic")
    if not 0 <= retrieval["semantic_weight"] <= 10:  # NaN fails too
        raise Damaged(where, None, "retrieval.semantic_weight must be from 0 to 10", "fix the config", "config")
    if not 0 <= retrieval["coverage_weight"] <= 1:  # NaN fails too
        raise Damaged(where, None, "retrieval.coverage_weight must be from 0 to 1", "fix the config", "config")
    if not isinstance(retrieval["semantic_model"], str) or not retrieval["semantic_model"].strip():
        raise Damaged(
            where, None, "retrieval.semantic_model must be a model name or a folder", "fix the config", "config"
        )
    lifecycle = dict(DEFAULT_LIFECYCLE)
    lifecycle.update(_expect(schema.get("lifecycle") or {}, dict, where, "memory_schema.lifecycle"))
    for key in ("auto_archive", "check_on_session_start"):
        _expect(lifecycle[key], bool, where, f"lifecycle.{key}")
    _expect(lifecycle["warn_before_archive_days"], int, where, "lifecycle.warn_before_archive_days")
    archive_default = storage_dir / "archive" if "archive_dir" not in (schema.get("lifecycle") or {}) else None
    archive_dir = archive_default or _inside(root, lifecycle["archive_dir"], where, "lifecycle.archive_dir")
    if archive_dir == storage_dir:
        raise Damaged(
            where,
            None,
            "lifecycle.archive_dir must differ from storage_dir",
            "use a sub-folder like <storage_dir>/archive",
            "config",
        )
    own_scope = storage_dir.parent.name if storage_dir.name == "memory" else None
    scoped = {**categories, **scope_categories.get(own_scope or "", {})}
    return Config(
        root,
        config_path,
        storage_dir,
        archive_dir,
        scoped,
        retrieval,
        lifecycle,
        enabled,
        categories,
        scope_categories,
        build_settings(schema, where),
    )


def _categories(raw: dict[str, Any], where: str, section: str) -> dict[str, Category]:
    """The categories of one config section, checked."""
    categories: dict[str, Category] = {}
    for name, spec in raw.items():
        label = f"{section}.{name}"
        if not isinstance(name, str) or not CATEGORY_RE.match(name):
            raise Damaged(where, None, f"category name {name!r} must be a lowercase word", "fix the config", "config")
        spec = spec or {}
        _expect(spec, dict, where, label)
        default = DEFAULT_CATEGORIES.get(
            name, {"storage_file": f"{name}s.yaml", "ttl": "permanent", "confidence_required": 0.5}
        )
        storage_file = _expect(spec.get("storage_file", default["storage_file"]), str, where, f"{label}.storage_file")
        if (
            "/" in storage_file
            or "\\" in storage_file
            or storage_file.startswith(".")
            or not storage_file.endswith((".yaml", ".yml"))
        ):
            raise Damaged(
                where,
                None,
                f"{label}.storage_file {storage_file!r} must be a plain *.yaml file name",
                "fix the config",
                "config",
            )
        kind = _expect(spec.get("kind", "note"), str, where, f"{label}.kind")
        if kind not in KINDS:
            raise Damaged(
                where,
                None,
                f"{label}.kind {kind!r} is not a kind mem knows",
                f"use one of: {', '.join(KINDS)}",
                "config",
            )
        tracked = _expect(spec.get("tracked", True), bool, where, f"{label}.tracked")
        ttl = spec.get("ttl", default["ttl"])
        try:
            ttl = check_ttl(_expect(ttl, str, where, f"{label}.ttl"))
        except BadInput:
            raise Damaged(
                where,
                None,
                f"{label}.ttl {ttl!r} must be 'permanent' or like '30d', '12h', '10m', '30s'",
                "fix the config",
                "config",
            ) from None
        floor = _expect(
            spec.get("confidence_required", default["confidence_required"]),
            (int, float),
            where,
            f"{label}.confidence_required",
        )
        if not 0 <= floor <= 1:
            raise Damaged(
                where, None, f"{label}.confidence_required must be between 0 and 1", "fix the config", "config"
            )
        category = Category(name, storage_file, ttl, float(floor), kind, tracked)
        if not category.takes_ttl(ttl):
            raise Damaged(
                where,
                None,
                f"{label}.ttl {ttl!r}: Loa's categories take days ('30d') or 'permanent'",
                "fix the config; give hours or minutes to a category of your own",
                "config",
            )
        categories[name] = category
    _distinct_files(categories, where, section)
    return categories


def _distinct_files(categories: dict[str, Category], where: str, section: str) -> None:
    seen: dict[str, str] = {}
    for category in categories.values():
        other = seen.setdefault(category.storage_file, category.name)
        if other != category.name:
            raise Damaged(
                where,
                None,
                f"{section}: storage_file {category.storage_file!r} is used by {other} and {category.name}",
                "give each category its own file",
                "config",
            )
