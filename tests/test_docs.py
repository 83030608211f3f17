"""The docs hold together: every relative markdown link in the README, docs/,
benchmarks/README.md and CONTRIBUTING.md names a file that exists and, with
`#anchor`, a heading of that file; the README stays the short entry it is."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import ROOT

DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "benchmarks" / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "CHANGELOG.md",
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def prose(path: Path) -> list[tuple[int, str]]:
    """The numbered lines outside code blocks (a heading-like line in a shell
    example is not a heading)."""
    out, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            out.append((number, line))
    return out


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {anchor(line.lstrip("#")) for _, line in prose(path) if line.startswith("#")}


def links(path: Path) -> list[tuple[int, str]]:
    """Links outside code blocks and inline code (`[x](y)` in a code span is an example)."""
    return [(number, target) for number, line in prose(path) for target in LINK.findall(re.sub(r"`[^`]*`", "", line))]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    assert doc.exists(), f"{doc} is missing"
    broken = []
    for number, target in links(doc):
        if re.match(r"[a-z]+:", target):  # https:, mailto: — not checked offline
            continue
        file, _, fragment = target.partition("#")
        dest = (doc.parent / file).resolve() if file else doc
        if not dest.exists():
            broken.append(f"{doc.name}:{number}: {target} (no such file)")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{doc.name}:{number}: {target} (no such heading)")
    assert broken == []


def test_the_link_checker_sees_a_broken_link(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text(
        "# Title\n\nSee [b](b.md), [here](#title), [gone](#nope), `[code](c.md)`.\n\n```\n# not a heading\n[not](a-link.md)\n```\n"
    )
    assert [t for _, t in links(doc)] == ["b.md", "#title", "#nope"]
    assert anchors(doc) == {"title"}
    assert anchor("JSON shapes (`--json`)") == "json-shapes---json"


def test_the_readme_is_an_entry_not_the_manual():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    assert text.startswith("# grimoire — `mem`\n\n<!-- not run: ")  # the two commands, first (tests/test_doc_blocks.py)
    assert text.splitlines()[3:6] == ["```", text.splitlines()[4], text.splitlines()[5]]
    assert text.splitlines()[4].startswith("make demo ") and text.splitlines()[5].startswith("make test ")


def test_pyproject_readme_exists():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (ROOT / project["readme"]).is_file()
    assert (ROOT / "LICENSE").read_text().startswith("MIT License") and project["license"] in ("MIT", {"text": "MIT"})


def _mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the site `root`'s mkdocs.yml describes, into `site`."""
    if importlib.util.find_spec("mkdocs") is None:
        # CI runs `make docs` first, which installs it: there a missing MkDocs is a failure, not a skip.
        assert not os.environ.get("CI"), "MkDocs is not installed: run `make docs` before the tests"
        pytest.skip("MkDocs is not installed: `make docs` installs it")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_site_builds_with_warnings_as_errors(tmp_path):
    built = _mkdocs_build(ROOT, tmp_path / "site")
    assert built.returncode == 0, built.stderr
    pages = {str(path.relative_to(tmp_path / "site")): path.read_text() for path in (tmp_path / "site").rglob("*.html")}
    assert {"index.html", "docs/reference.html", "benchmarks/index.html", "CONTRIBUTING.html"} <= pages.keys()
    # A table's `a \| b` (GitHub's escape of a pipe in a code span) reads `a | b` on the site too.
    assert [name for name, html in pages.items() if re.search(r"<code>[^<]*\\\|", html)] == []
    assert "<code>mem add [TEXT|-] [-c CAT]" in pages["docs/commands.html"]


def test_the_site_build_fails_on_a_broken_link_or_anchor(tmp_path):
    """The strict build is what catches a broken page: a copy of the sources with
    one bad link and one bad anchor does not build."""
    copy = tmp_path / "repo"
    for name in ("mkdocs.yml", "README.md", "CONTRIBUTING.md", "CHANGELOG.md", "LICENSE"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, copy / name)
    for folder in ("docs", "schemas", "scripts", "benchmarks", "grimoire_cli/lifecycle/prompts"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=shutil.ignore_patterns("*.py[co]", "__pycache__", ".data"))
    with (copy / "docs" / "ci.md").open("a") as ci:
        ci.write("\nSee [gone](nope.md) and [there](reference.md#no-such-heading).\n")
    built = _mkdocs_build(copy, tmp_path / "site")
    assert built.returncode == 1
    assert "'nope.md'" in built.stderr and "'#no-such-heading'" in built.stderr


# -- the code the docs name ------------------------------------------------------

PACKAGE = ROOT / "grimoire_cli"
# A path from the repository root (`grimoire_cli/core/errors.py`, `tests/test_merge.py::test_ci_recipe`).
REPO_PATH = re.compile(r"\b((?:grimoire_cli|tests|schemas|benchmarks|scripts)/[\w./*-]*)")
# A module by its dotted name, maybe with an attribute (`grimoire_cli.integrations.anthropic.GrimoireMemoryTool`).
DOTTED = re.compile(r"\bgrimoire_cli(?:\.\w+)+")
LAYERS = sorted(path.name for path in PACKAGE.iterdir() if path.is_dir() and not path.name.startswith("_"))
# A path inside the package, from its layer folder (`storage/textedit`, `core/errors.py`).
LAYER_PATH = re.compile(rf"^(?:{'|'.join(LAYERS)})/[\w./]*$")
# A module by its file name alone (`gitops.py`).
FILE_NAME = re.compile(r"^\w+\.py$")
CODE_SPAN = re.compile(r"`([^`]+)`")
PYTHON_FILES = {
    path.name for folder in ("grimoire_cli", "tests", "benchmarks", "scripts") for path in (ROOT / folder).rglob("*.py")
}


def _repo_path_exists(text: str) -> bool:
    path = text.split("::")[0].rstrip(".")
    return any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()


def _layer_path_exists(text: str) -> bool:
    path = PACKAGE / text.rstrip("/.")
    return path.exists() or path.with_suffix(".py").exists()


def _names_a_module(dotted: str) -> bool:
    """`dotted` is a module of the package, or an attribute of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def code_the_docs_name(doc: Path) -> list[tuple[int, str]]:
    """Every path or module of this repository the doc names that does not exist."""
    missing = []
    lines = list(enumerate(doc.read_text(encoding="utf-8").splitlines(), 1))
    for number, line in lines:
        missing += [(number, path) for path in REPO_PATH.findall(line) if not _repo_path_exists(path)]
        missing += [(number, name) for name in DOTTED.findall(line) if not _names_a_module(name)]
    for number, line in prose(doc):
        for span in CODE_SPAN.findall(line):
            if LAYER_PATH.match(span) and not _layer_path_exists(span):
                missing.append((number, span))
            elif FILE_NAME.match(span) and span not in PYTHON_FILES:
                missing.append((number, span))
    return missing


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_and_path_the_docs_name_exists(doc):
    assert code_the_docs_name(doc) == []


def test_the_layer_tree_names_folders_and_modules_that_exist():
    """CONTRIBUTING.md's tree of grimoire_cli/: each folder it draws, and each
    module it names outside its comments, in the folder it is drawn in."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    tree = text.split("```text\ngrimoire_cli/\n", 1)[1].split("```", 1)[0].splitlines()
    missing, layer, named = [], None, 0
    for line in tree:
        drawn = line.split("#", 1)[0]
        top = re.match(r"^  (\w+)/", drawn)
        sub = re.match(r"^    (\w+)/", drawn)
        if top:
            layer = top.group(1)
        folder = PACKAGE / layer if layer else PACKAGE
        for name in (
            ([top.group(1)] if top else []) + ([sub.group(1)] if sub else []) + re.findall(r"\b\w+\.py\b", drawn)
        ):
            named += 1
            if not (folder / name if not top else PACKAGE / name).exists():
                missing.append(f"{layer}/{name}")
    assert missing == [] and named >= len(LAYERS)
    assert set(LAYERS) <= set(re.findall(r"^  (\w+)/", "\n".join(tree), re.MULTILINE))


def test_the_path_checks_see_a_stale_path(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text(
        "# A\n\n`grimoire_cli/core/errors.py`, `grimoire_cli/errors.py`, `core/errors.py`, `storage/textedit`,\n"
        "`core/gone.py`, `gitops.py`, `nothing.py`, grimoire_cli.integrations.calls, grimoire_cli.calls,\n"
        "grimoire_cli.integrations.anthropic.GrimoireMemoryTool, grimoire_cli.core.errors.Nope,\n"
        "`tests/test_merge.py::test_ci_recipe`, `schemas/*.json`.\n"
    )
    assert [name for _, name in code_the_docs_name(doc)] == [
        "grimoire_cli/errors.py",
        "grimoire_cli.calls",
        "grimoire_cli.core.errors.Nope",
        "core/gone.py",
        "nothing.py",
    ]


# -- the documents the code cites ----------------------------------------------------

# The design contract and style guide kept outside the repository (../shared):
# the docs, tests and code cite docs/design.md, docs/reference.md and CONTRIBUTING.md instead.
OUTSIDE = re.compile(r"DESIGN(?:\.md)?\s*§|DESIGN\.md|STYLE(?:\.md)?\s+\d|STYLE\.md|(?<!\w)§\s*\d")
# Files still citing it, owned by work in progress elsewhere: none may be added.
OUTSIDE_PENDING = {
    "tests/test_model.py",
    "grimoire_cli/core/settings.py",
    "grimoire_cli/storage/issued.py",
    "grimoire_cli/storage/catalog/heat.py",
    "grimoire_cli/learning/observations.py",
}


def test_nothing_cites_documents_the_repository_does_not_have():
    sources = [
        *DOCS,
        *[p for folder in ("tests", "grimoire_cli", "benchmarks", "scripts") for p in (ROOT / folder).rglob("*.py")],
    ]
    citing = {
        str(path.relative_to(ROOT))
        for path in sources
        if path != Path(__file__).resolve() and OUTSIDE.search(path.read_text(encoding="utf-8"))
    }
    assert citing <= OUTSIDE_PENDING, citing - OUTSIDE_PENDING


# -- what the site's Markdown needs ---------------------------------------------------

LIST_ITEM = re.compile(r"^( *)(?:[-*+]|\d+\.) ")


def lists_the_site_would_break(doc: Path) -> list[int]:
    """Lines of lists the site (Python-Markdown, stricter than GitHub's) would
    not render as lists: one that starts right after a paragraph's line runs
    into it, and a sub-list nests only when indented by 4 spaces."""
    broken, previous = [], ""
    for number, line in prose(doc):
        item = LIST_ITEM.match(line)
        if item and not LIST_ITEM.match(previous) and previous.strip() and not previous.startswith(" "):
            broken.append(number)
        elif item and len(item.group(1)) % 4:
            broken.append(number)
        previous = line
    return broken


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_lists_render_on_the_site(doc):
    assert lists_the_site_would_break(doc) == []


def test_the_list_check_sees_a_list_run_into_its_paragraph(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nText:\n- runs in\n\n- fine\n  - nests wrong\n    - nests\n  wrapped text\n1. fine\n")
    assert lists_the_site_would_break(doc) == [4, 7]


def test_the_adapters_page_names_as_gaps_only_what_the_adapters_do_not_serve():
    """Issue 37 part 2's gaps, as docs/adapters.md lists them: what was built since (Samaritan's
    max_rows, Protea's section over every type, Loa's integrate_with_oracle) is not among them, and
    Loa's oracle is no gap: in Loa's design the oracle reads the memory, and the Loa section shows
    that read (test_adapters_loa checks its shape)."""
    page = (ROOT / "docs/adapters.md").read_text(encoding="utf-8")
    section = page.split("## What the adapters cannot serve yet")[1].split("\n## ")[0]
    gaps, served = section.split("The rest of part 2 is served")
    for built in ("max_rows", "integrate_with_oracle", "every type", "oracle"):
        assert built not in gaps, built
    for built in ("max_rows", "integrate_with_oracle", "every type"):
        assert built in served, built
    loa = page.split("\n## Loa (")[1].split("\n## ")[0]
    assert "the memory never calls the oracle" in loa and "calls no oracle script" in loa
    assert '$ mem query "seed script" --format oracle' in loa
