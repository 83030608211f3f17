"""The layout's promises, checked on the source (docs/design.md, CONTRIBUTING.md):
one folder per layer and arrows that only point down, no import cycles, small
modules, SQL only in the catalog, exit codes only in core/errors.py."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "grimoire_cli"
WARN_LINES = 450
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """Every grimoire_cli module `name` imports anywhere (top level, inside
    functions, under TYPE_CHECKING): a cycle through any of them is a cycle."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name and t != "grimoire_cli")
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _reachable(start: str) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        for nxt in GRAPH[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def test_the_graph_is_read():
    # The checks below would pass on an empty graph: make sure it is not one.
    assert len(MODULES) > 30
    assert "grimoire_cli.storage.store" in GRAPH["grimoire_cli.api"]
    assert "grimoire_cli.storage.catalog.queries" in GRAPH["grimoire_cli.retrieval.search"]


def test_no_import_cycles():
    cycles = sorted(name for name in GRAPH if name in _reachable(name))
    assert cycles == [], f"modules on an import cycle: {cycles}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_are_small(name):
    """Past ~450 lines a module is worth a look (a warning in the summary),
    not a reason to split one idea in two; past 600 it holds two ideas."""
    lines = MODULES[name].read_text().count("\n")
    if lines > WARN_LINES:
        warnings.warn(f"{name} has {lines} lines: does it hold one idea?", stacklevel=1)
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it by what it holds"


def test_sub_package_inits_are_empty():
    # An __init__ that imports would load its whole sub-package on every command.
    for name, path in MODULES.items():
        if path.name == "__init__.py" and name != "grimoire_cli":
            assert path.read_text().strip() == "", name


# The layers, bottom up: each folder of the package is one, and a module may
# import only from its own layer and the layers below it. `api.py` (the
# `Grimoire` facade) sits with `facade/`; `__init__` and `__main__` are the
# package's doors and are not checked.
LAYERS = (
    "core",
    "storage",
    "git",
    "guard",
    "kinds",
    "memory",
    "retrieval",
    "lifecycle",
    "learning",
    "facade",
    "adapters",
    "operations",
    "integrations",
    "cli",
)
TOP_LEVEL = {"api": "facade"}


def _layer(name: str) -> str:
    parts = name.split(".")
    return TOP_LEVEL.get(parts[1], parts[1]) if len(parts) > 1 else ""


def test_every_module_is_in_a_layer():
    # A new folder or a module left at the top must be placed in LAYERS on purpose.
    outside = sorted(
        n for n in MODULES if n not in ("grimoire_cli", "grimoire_cli.__main__") and _layer(n) not in LAYERS
    )
    assert outside == []
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()} == set(LAYERS)


def test_arrows_point_down():
    """cli -> integrations -> operations -> adapters -> facade (api) -> learning ->
    lifecycle -> retrieval -> memory -> kinds -> guard -> git -> storage -> core.
    The YAML reader is a leaf the config may use. The integrations (MCP, Claude
    Code, the memory tool) are front ends as the cli is; the adapters (each
    memory system's own API) sit on the facade; the operations (each declared
    once) under both front ends, which make their command and tool from them."""
    wrong = []
    for name, deps in GRAPH.items():
        if name in ("grimoire_cli", "grimoire_cli.__main__"):
            continue
        for dep in deps:
            if dep == "grimoire_cli.storage.yamlio" and name == "grimoire_cli.core.config":
                continue
            if LAYERS.index(_layer(dep)) > LAYERS.index(_layer(name)):
                wrong.append(f"{name} ({_layer(name)}) -> {dep} ({_layer(dep)})")
    assert wrong == []


def test_the_merge_driver_does_not_load_the_storage_engine():
    reached = _reachable("grimoire_cli.git.merge")
    engine = {"grimoire_cli.storage.store", "grimoire_cli.storage.journal"} | {
        m for m in MODULES if m.startswith("grimoire_cli.storage.catalog")
    }
    assert reached & engine == set()
    assert "grimoire_cli.storage.textedit" in reached  # it does edit text, through the pure module


def _imported_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_library_never_imports_the_cli_framework():
    for name, path in MODULES.items():
        if not name.startswith("grimoire_cli.cli"):
            assert not {"typer", "rich", "click"} & _imported_names(path), name


def test_sql_lives_in_the_catalog():
    words = ("SELECT ", "INSERT INTO", "DELETE FROM", "UPDATE ", "ORDER BY", "CREATE TABLE")
    found = []
    for name, path in MODULES.items():
        if name.startswith("grimoire_cli.storage.catalog"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and any(w in node.value for w in words):
                found.append(f"{name}:{node.lineno}")
        if "sqlite3" in _imported_names(path):
            found.append(f"{name} imports sqlite3")
    assert found == []


def test_feature_modules_read_the_catalog_through_named_reads():
    """Outside storage/, no lambda over the catalog (`store.ask(lambda catalog, paths: ...)`,
    `store.kept(lambda catalog: ...)`): a read has a name that says what it reads (storage/reads.py)."""
    found = []
    for name, path in MODULES.items():
        if name.startswith("grimoire_cli.storage"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("ask", "kept")
                and any(isinstance(arg, ast.Lambda) for arg in node.args)
            ):
                found.append(f"{name}:{node.lineno}")
    assert found == []


def test_exit_codes_are_spelled_only_in_errors():
    found = []
    for name, path in MODULES.items():
        if name == "grimoire_cli.core.errors":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                "Exit",
                "exit",
                "_exit",
            ):
                if any(isinstance(arg, ast.Constant) and isinstance(arg.value, int) for arg in node.args):
                    found.append(f"{name}:{node.lineno}")
            if (
                isinstance(node, ast.Return)
                and isinstance(node.value, ast.Constant)
                and type(node.value.value) is int
                and name.startswith("grimoire_cli.cli")
            ):
                found.append(f"{name}:{node.lineno} returns a number")
    assert found == []


def test_only_the_runtime_reads_the_environment():
    """MEM_* values reach the library as a `Runtime` (core/runtime.py), built once by the CLI and
    each integration and handed to `Grimoire`: no other module reads or writes os.environ. Two read
    git's, not mem's: gitops hands git the environment (less what would point it at a caller's
    repository), and trees reads the branch names git gives a merge driver (GITHEAD_*)."""
    allowed = {"grimoire_cli.core.runtime", "grimoire_cli.git.gitops", "grimoire_cli.git.trees"}
    found = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            reads = (
                isinstance(node, ast.Attribute)
                and node.attr in ("environ", "getenv", "putenv", "unsetenv")
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
            ) or (
                isinstance(node, ast.ImportFrom)
                and node.module == "os"
                and any(a.name == "environ" for a in node.names)
            )
            if reads and name not in allowed:
                found.append(f"{name}:{node.lineno}")
    assert found == []


# Each memory system's own names live in its adapter (adapters/), not on the facade,
# and the front ends call the facade's names.
SEED_NAMES = (
    "remember_fact recall_fact search_facts update_fact remember_episode recall_episodes search_episodes "
    "remember_procedure recall_procedure list_procedures execute_procedure schedule_task get_pending_tasks "
    "complete_task cancel_task list_memory_categories memory_stats clear_memory query_memory get_memory_pattern "
    "store_insight get_tool_recommendations save_memory load_short_term age_to_longterm memory_recall"
).split()


def test_seed_names_live_in_the_adapters():
    from grimoire_cli import Grimoire

    assert [name for name in SEED_NAMES if hasattr(Grimoire, name)] == []
    front = [n for n in MODULES if _layer(n) in ("integrations", "cli")]
    called = []
    for name in front:
        for node in ast.walk(ast.parse(MODULES[name].read_text())):
            if isinstance(node, ast.Attribute) and node.attr in SEED_NAMES:
                called.append(f"{name}:{node.lineno} .{node.attr}")
    assert called == []


# The facade is composed (issue 36 item 3): `Grimoire` inherits nothing, and each
# namespace is a class of its own module in facade/ that takes the grimoire it serves.
NAMESPACES = {
    "facts": "Facts",
    "tasks": "Tasks",
    "episodes": "Episodes",
    "procedures": "Procedures",
    "chat": "Chat",
    "lifecycle": "Lifecycle",
    "learning": "Learning",
}


def test_the_facade_is_composed_not_mixed_in(repo):
    from grimoire_cli import Grimoire

    assert Grimoire.__bases__ == (object,)
    g = Grimoire.open(repo)
    for name, cls in NAMESPACES.items():
        part = getattr(g, name)
        assert type(part).__name__ == cls and type(part).__module__ == f"grimoire_cli.facade.{name}"
        assert part.grimoire is g
    # Only facade/host.py says what a namespace uses of a Grimoire (a Protocol): no other stub of it.
    stubs = [
        n
        for n in MODULES
        if _layer(n) == "facade" and n != "grimoire_cli.facade.host" and "Protocol" in MODULES[n].read_text()
    ]
    assert stubs == []
