"""MkDocs hooks for `make docs` (mkdocs.yml): the site is built from the
repository's markdown where it lies (README.md, docs/, benchmarks/README.md,
CONTRIBUTING.md…), not from a copy in docs/, so a relative link means the
same file on GitHub and on the site; headings get GitHub's anchors, so a
`#fragment` does too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
# The pages, and the files they link to (copied as they are).
SOURCES = [
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "LICENSE",
    "docs/*.md",
    "benchmarks/README.md",
    "benchmarks/mutation.md",
    "schemas/*.json",
    "grimoire_cli/lifecycle/prompts/*.md",
]


def github_anchor(text: str, separator: str = "-") -> str:
    """GitHub's anchor for a heading (as tests/test_docs.py computes it):
    lower case, punctuation dropped, each space a dash."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", separator)


def on_config(config: MkDocsConfig, **kwargs: Any) -> MkDocsConfig:
    config.mdx_configs.setdefault("toc", {})["slugify"] = github_anchor
    return config


def _unescape_pipes(row: str) -> str:
    return re.sub(r"`[^`]*`", lambda span: span.group(0).replace("\\|", "|"), row)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """A `|` in a code span of a table row is written `\\|` for GitHub, whose
    tables split on it even there; the site's Markdown does not, and would show
    the backslash."""
    return "\n".join(_unescape_pipes(line) if line.startswith("|") else line for line in markdown.split("\n"))


def on_files(files: Files, config: MkDocsConfig, **kwargs: Any) -> Files:
    """Every source at its repository path, instead of docs_dir's files."""
    paths = sorted({path for pattern in SOURCES for path in ROOT.glob(pattern)})
    return Files(
        [
            File(path.relative_to(ROOT).as_posix(), str(ROOT), config.site_dir, config.use_directory_urls)
            for path in paths
        ]
    )
