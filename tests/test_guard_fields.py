"""The guard over every field of every write path (issue 41.2): each field is
scanned as it was given, before anything normalises it (a tag is lowercased
and its `_` turned into `-`, which hid `ghp_…` and `AKIA…`), and mapping
keys as their values. A refusal is exit code 2, names the field, never
quotes the secret, and leaves no trace of it in any file of the repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, mem, with_preset
from fakes import ALNUM, fake

from grimoire_cli.core.errors import GrimoireError

# Split: this file holds no secret a scanner would flag.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
OLD = "MEM-20261122-001"  # the fact the supersede cases replace


@pytest.fixture
def written(repo) -> Path:
    """SABRE's categories (episodes, procedures, tasks, semantic facts) and one fact to supersede, committed."""
    with_preset(repo, "sabre")
    assert mem("add", "-c", "fact", "The staging database runs postgres").code == 0
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "a fact", cwd=repo)
    return repo


def _line(**fields) -> str:
    return json.dumps(fields) + "\n"


def _cli(*args: str, input: str | None = None) -> Callable[[str], tuple[int, str]]:
    """A `mem` command with the secret put where `{}` is."""

    def run(secret: str) -> tuple[int, str]:
        result = mem(*(a.replace("{}", secret) for a in args), input=input.replace("{}", secret) if input else None)
        return result.code, result.err

    return run


def _library(call: Callable[..., object]) -> Callable[[str], tuple[int, str]]:
    """A library call (the MCP call layer, the memory tool) given the secret: its error's exit code and line."""

    def run(secret: str) -> tuple[int, str]:
        try:
            call(secret)
        except GrimoireError as exc:
            return exc.exit_code, f"error: {exc}"
        except Exception as exc:  # the memory tool's ToolError carries the error line
            return 2 if str(exc).startswith("error: ") else -1, str(exc)
        return 0, ""

    return run


def _mcp(name: str, arguments: Callable[[str], dict]) -> Callable[[str], tuple[int, str]]:
    from grimoire_cli import Grimoire
    from grimoire_cli.integrations.calls import invoke

    return _library(lambda secret: invoke(lambda: Grimoire.open("."), name, arguments(secret)))


def _memory_tool(path: str, text: str = "The build cache lives on the runner") -> Callable[[str], tuple[int, str]]:
    pytest.importorskip("anthropic")
    from anthropic.types.beta import BetaMemoryTool20250818CreateCommand as Create

    from grimoire_cli import Grimoire
    from grimoire_cli.integrations.anthropic import GrimoireMemoryTool

    return _library(
        lambda secret: GrimoireMemoryTool(Grimoire.open(".")).execute(
            Create(command="create", path=path.replace("{}", secret), file_text=text)
        )
    )


# (write path, the field the refusal names, how to give the secret in it)
CASES = [
    ("add", "tags", lambda: _cli("add", "-c", "fact", "The cache is warm", "-t", "{}")),
    ("add", "key", lambda: _cli("add", "-c", "fact", "The cache is warm", "--key", "{}")),
    ("add", "source.session_id", lambda: _cli("add", "-c", "fact", "The cache is warm", "--session-id", "{}")),
    ("add", "source.agent", lambda: _cli("add", "-c", "fact", "The cache is warm", "--agent", "{}")),
    ("add", "source.phase", lambda: _cli("add", "-c", "fact", "The cache is warm", "--phase", "{}")),
    ("add", "summary", lambda: _cli("add", "-c", "fact", "The cache is warm", "-s", "cache {}")),
    ("supersede", "tags", lambda: _cli("supersede", OLD, "The staging database runs postgres 16", "-t", "{}")),
    ("supersede", "summary", lambda: _cli("supersede", OLD, "The staging database runs postgres 16", "-s", "db {}")),
    ("remember", "key", lambda: _cli("remember", "{}", "5432")),
    ("task", "context", lambda: _cli("task", "add", "--next-session", "check the backups", "--context", "{}=db")),
    (
        "task",
        "context.where",
        lambda: _cli("task", "add", "--next-session", "check the backups", "--context", "where={}"),
    ),
    ("episode", "tags", lambda: _cli("episode", "deploy-failed", "--learned", "warm the cache", "-t", "{}")),
    ("episode", "context", lambda: _cli("episode", "deploy-failed", "--context", "{}=api")),
    ("episode", "context.service", lambda: _cli("episode", "deploy-failed", "--context", "service={}")),
    (
        "episode",
        "context.deep.er",
        lambda: _cli("episode", "deploy-failed", "--context-json", '{"deep": {"er": "{}"}}'),
    ),
    ("episode", "learned", lambda: _cli("episode", "deploy-failed", "--learned", "use {} next time")),
    (
        "procedure",
        "steps.run",
        lambda: _cli("procedure", "add", "-", input="name: ship\nsteps:\n  - name: build\n    run: export K={}\n"),
    ),
    ("procedure", "steps.name", lambda: _cli("procedure", "add", "-", input="name: ship\nsteps:\n  - name: push {}\n")),
    (
        "procedure",
        "tags",
        lambda: _cli("procedure", "add", "-", input="name: ship\ntags: ['{}']\nsteps:\n  - name: build\n"),
    ),
    (
        "procedure",
        "description",
        lambda: _cli("procedure", "add", "-", input="name: ship\ndescription: with {}\nsteps:\n  - name: build\n"),
    ),
    (
        "import",
        "tags",
        lambda: _cli("import", "-", input=_line(content="The cache is warm", category="fact", tags=["{}"])),
    ),
    ("import", "key", lambda: _cli("import", "-", input=_line(content="The cache is warm", category="fact", key="{}"))),
    (
        "import",
        "source.session_id",
        lambda: _cli(
            "import", "-", input=_line(content="The cache is warm", category="fact", source={"session_id": "{}"})
        ),
    ),
    (
        "import",
        "source.agent",
        lambda: _cli("import", "-", input=_line(content="The cache is warm", category="fact", agent="{}")),
    ),
    (
        "import",
        "metadata.note",
        lambda: _cli("import", "-", input=_line(content="The cache is warm", category="fact", metadata={"note": "{}"})),
    ),
    (
        "import",
        "metadata",
        lambda: _cli("import", "-", input=_line(content="The cache is warm", category="fact", metadata={"{}": 1})),
    ),
    (
        "import",
        "context.service",
        lambda: _cli(
            "import",
            "-",
            input=_line(
                content="deploy failed",
                category="episode",
                event="deploy-failed",
                outcome="failure",
                context={"service": "{}"},
            ),
        ),
    ),
    (
        "import",
        "steps.run",
        lambda: _cli(
            "import",
            "-",
            input=_line(
                content="ship. Steps: 1. build",
                category="procedure",
                name="ship",
                steps=[{"name": "build", "run": "{}"}],
            ),
        ),
    ),
    (
        "import",
        "context",
        lambda: _cli(
            "import",
            "-",
            input=_line(
                content="check backups",
                category="task",
                task="check backups",
                trigger="session-start",
                status="pending",
                context={"{}": "db"},
            ),
        ),
    ),
    (
        "import",
        "archive_reason",
        lambda: _cli(
            "import",
            "-",
            input=_line(
                content="The cache is warm",
                category="fact",
                archived=True,
                archived_at="2026-11-21T10:00:00Z",
                archive_reason="{}",
            ),
        ),
    ),
    ("memory tool", "metadata.memory_path", lambda: _memory_tool("/memories/fact/{}.md")),
    (
        "mcp save",
        "tags",
        lambda: _mcp("save", lambda s: {"content": "The cache is warm", "category": "fact", "tags": [s]}),
    ),
    ("mcp save", "key", lambda: _mcp("save", lambda s: {"content": "The cache is warm", "category": "fact", "key": s})),
    (
        "mcp save",
        "source.session_id",
        lambda: _mcp("save", lambda s: {"content": "The cache is warm", "category": "fact", "session_id": s}),
    ),
    (
        "mcp save",
        "source.agent",
        lambda: _mcp("save", lambda s: {"content": "The cache is warm", "category": "fact", "agent": s}),
    ),
    (
        "mcp supersede",
        "tags",
        lambda: _mcp(
            "supersede", lambda s: {"id": OLD, "content": "The staging database runs postgres 16", "tags": [s]}
        ),
    ),
    ("mcp remember", "key", lambda: _mcp("remember", lambda s: {"key": s, "value": 5432})),
    ("mcp episode", "tags", lambda: _mcp("episode", lambda s: {"event": "deploy-failed", "tags": [s]})),
    ("mcp episode", "context", lambda: _mcp("episode", lambda s: {"event": "deploy-failed", "context": {s: "api"}})),
    (
        "mcp task",
        "context",
        lambda: _mcp(
            "task_schedule", lambda s: {"text": "check the backups", "next_session": True, "context": {s: "db"}}
        ),
    ),
    (
        "mcp procedure",
        "steps.run",
        lambda: _mcp("procedure_add", lambda s: {"document": {"name": "ship", "steps": [{"name": "b", "run": s}]}}),
    ),
]


def _traces(repo: Path, secret: str) -> list[str]:
    """Files of the repository (tracked, the caches, the local state; not .git) holding the secret in any form a write makes of it."""
    forms = {secret, secret.lower(), secret.lower().replace("_", "-")}
    return [
        str(path)
        for path in repo.rglob("*")
        if path.is_file()
        and ".git" not in path.relative_to(repo).parts
        and any(form.encode() in path.read_bytes() for form in forms)
    ]


@pytest.mark.parametrize("secret, kind", [(GITHUB, "GitHub token"), (AWS, "AWS access key id")], ids=["github", "aws"])
@pytest.mark.parametrize("path, field, how", CASES, ids=[f"{path}-{field}" for path, field, _ in CASES])
def test_a_secret_in_any_field_of_any_write_path_is_refused(written, path, field, how, secret, kind):
    before = git("status", "--porcelain", "--untracked-files=all", cwd=written)
    code, err = how()(secret)
    assert code == 2, err
    assert "refusing to store a secret or personal data" in err and f"{kind} in {field}" in err, err
    assert err.count("\n") <= 1 and secret not in err and secret.lower() not in err
    assert _traces(written, secret) == []
    assert git("status", "--porcelain", "--untracked-files=all", cwd=written) == before


def test_the_same_fields_without_a_secret_are_stored(written):
    """The cases above fail for the secret, not for the way they are given."""
    for path, field, how in CASES:
        code, err = how()("manual" if field == "archive_reason" else "plain-value")  # a reason is one of a few words
        assert code == 0, (path, field, err)
        git("checkout", "-q", "--", ".", cwd=written)  # each case on the committed state (the caches rebuild)
        git("clean", "-fdxq", cwd=written)


def test_a_secret_in_a_tag_is_refused_by_the_real_mcp_server(written):
    """`save.tags` over the MCP server (issue 41.2's report), as a client sees it: a tool error, exit code 2."""
    pytest.importorskip("mcp")
    import anyio
    from test_mcp import answer_of, session

    async def run():
        async with session(written) as client:
            for secret in (GITHUB, AWS):
                refused = await answer_of(
                    client, "save", {"content": "The cache is warm", "category": "fact", "tags": ["ci", secret]}
                )
                assert (
                    refused[0] == "error" and refused[2] == 2 and " in tags " in refused[1] and secret not in refused[1]
                )

    anyio.run(run)
    assert _traces(written, GITHUB) == _traces(written, AWS) == []


# A context whose first value is a guard keyword (`api`) and whose next pair
# holds plain words: the episode's content line `… [service=api,
# root_cause=bad migration]` was refused as a generic-api-key.
PLAIN_CONTEXT = [
    ("service=api", "root_cause=bad migration"),
    ("service=api", "reason=bad migration"),
    ("service=api", "root_cause=missing index"),
    ("pod=api-7d9f8b6c5-x2kq9", "job=nightly-etl_v3"),
]


@pytest.mark.parametrize("first, second", PLAIN_CONTEXT, ids=[second for _, second in PLAIN_CONTEXT])
def test_plain_words_in_a_context_are_stored_by_every_write_path(written, first, second):
    from grimoire_cli import Grimoire
    from grimoire_cli.integrations.calls import invoke

    episode = mem("episode", "deploy-rollback", "--context", first, "--context", second)
    assert episode.code == 0, episode.err
    added = mem("add", "-c", "fact", f"The rollback: {first}, {second}")
    assert added.code == 0, added.err
    context = dict(pair.split("=", 1) for pair in (first, second))
    invoke(lambda: Grimoire.open("."), "episode", {"event": "deploy-rollback", "context": context})
    assert mem("validate").code == 0


def test_a_random_value_after_the_same_keyword_is_still_refused(written):
    value = fake(ALNUM, 20, 41)
    refused = mem("add", "-c", "fact", f"The rollback: service=api, root_cause={value} for now")
    assert refused.code == 2 and "generic-api-key in content" in refused.err and value not in refused.err
    refused = mem("episode", "deploy-rollback", "--context", "service=api", "--context", f"api_key={value}")
    assert refused.code == 2 and "password or secret assignment" in refused.err and value not in refused.err
    assert _traces(written, value) == []
