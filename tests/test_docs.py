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
    assert (tmp_path / "site" / "index.html").is_file() and (
        tmp_path / "site" / "docs" / "reference" / "index.html"
    ).is_file()


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
