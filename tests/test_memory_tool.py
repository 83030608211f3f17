"""grimoire_cli.integrations.anthropic: Anthropic's memory tool over a
grimoire, driven with the SDK's own command objects (docs/agents.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import git, mem, mem_process, wal_pinned, with_preset

pytest.importorskip("anthropic")
from anthropic.lib.tools import ToolError
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand as Create,
)
from anthropic.types.beta import (
    BetaMemoryTool20250818DeleteCommand as Delete,
)
from anthropic.types.beta import (
    BetaMemoryTool20250818InsertCommand as Insert,
)
from anthropic.types.beta import (
    BetaMemoryTool20250818RenameCommand as Rename,
)
from anthropic.types.beta import (
    BetaMemoryTool20250818StrReplaceCommand as StrReplace,
)
from anthropic.types.beta import (
    BetaMemoryTool20250818ViewCommand as View,
)

from grimoire_cli import Grimoire
from grimoire_cli.core.errors import BadInput
from grimoire_cli.integrations.anthropic import GrimoireMemoryTool
from grimoire_cli.integrations.calls import invoke


@pytest.fixture
def tool(repo):
    with_preset(repo, "sabre")
    return GrimoireMemoryTool(Grimoire.open(repo))


def shown(entry_id: str) -> dict:
    return json.loads(mem("show", entry_id, "--json").out)


def test_a_conversation_creates_edits_moves_and_deletes_through_the_chain(tool, repo):
    made = tool.execute(
        Create(
            command="create",
            path="/memories/decision/database.md",
            file_text="We use PostgreSQL 16.\nMigrations run with alembic.",
        )
    )
    assert made.startswith("File created successfully at: /memories/decision/database.md (MEM-20261122-001)")
    first = shown("MEM-20261122-001")
    assert (
        first["category"] == "decision"
        and first["source"]["agent"] == "claude"
        and first["metadata"] == {"memory_path": "database.md"}
    )

    listing = tool.execute(View(command="view", path="/memories/decision"))
    assert "/memories/decision/database.md\tMEM-20261122-001, today: We use PostgreSQL 16." in listing
    assert tool.execute(View(command="view", path="/memories/decision/database.md")).endswith(
        "     1\tWe use PostgreSQL 16.\n     2\tMigrations run with alembic."
    )

    edited = tool.execute(
        StrReplace(command="str_replace", path="/memories/decision/database.md", old_str="16", new_str="17")
    )
    assert "(MEM-20261122-001 superseded by MEM-20261122-002)" in edited and "     1\tWe use PostgreSQL 17." in edited
    assert shown("MEM-20261122-001")["superseded_by"] == "MEM-20261122-002"
    assert tool.execute(View(command="view", path="/memories/decision/database.md", view_range=[1, 1])).endswith(
        "1\tWe use PostgreSQL 17."
    )

    tool.execute(
        Insert(
            command="insert", path="/memories/decision/database.md", insert_line=1, insert_text="Backups run nightly.\n"
        )
    )
    assert mem("show", "MEM-20261122-003", "--json").code == 0
    assert (
        shown("MEM-20261122-003")["content"]
        == "We use PostgreSQL 17.\nBackups run nightly.\nMigrations run with alembic."
    )

    moved = tool.execute(
        Rename(command="rename", old_path="/memories/decision/database.md", new_path="/memories/fact/database.md")
    )
    assert moved.startswith("Successfully renamed /memories/decision/database.md to /memories/fact/database.md")
    fact = shown("MEM-20261122-004")
    assert (fact["category"], fact["supersedes"], fact["metadata"]["memory_path"]) == (
        "fact",
        "MEM-20261122-003",
        "database.md",
    )
    assert "(none yet)" in tool.execute(View(command="view", path="/memories/decision"))

    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memories", cwd=repo)
    gone = tool.execute(Delete(command="delete", path="/memories/fact/database.md"))
    assert gone.startswith("Successfully deleted /memories/fact/database.md (MEM-20261122-004 archived, reason manual")
    assert shown("MEM-20261122-004")["archive_reason"] == "manual"
    assert [e["id"] for e in json.loads(mem("list", "--archived", "--json").out)] == ["MEM-20261122-004"]
    assert git("status", "--porcelain", cwd=repo) == ""  # archived in a commit of its own, as mem archive does
    assert mem("validate").code == 0


def test_editing_a_keyed_fact_changes_what_recall_gives(tool, repo):
    """Found by the model test: an edit kept the old typed value in metadata,
    so `recall` still gave the value from before the edit."""
    grimoire = Grimoire.open(repo)
    old = grimoire.facts.remember("db.pool", {"size": 2}, category="fact").entry
    answer = tool.execute(
        StrReplace(command="str_replace", path=f"/memories/fact/{old.id}.md", old_str="2", new_str="3")
    )
    assert "superseded by" in str(answer)
    assert grimoire.facts.recall("db.pool") == '{"size": 3}'
    assert mem("recall", "db.pool").out == '{"size": 3}\n'


def test_the_root_lists_one_folder_per_category(tool):
    tool.execute(
        Create(
            command="create", path="/memories/learning/tests.md", file_text="Run the migrations before the API tests"
        )
    )
    root = tool.execute(View(command="view", path="/memories"))
    assert "/memories/learning/\t1 memory" in root and "/memories/decision/\t0 memories" in root
    assert "/memories/episode/" in root  # sabre's kinds are shown, not written


@pytest.mark.parametrize(
    "path, says",
    [
        ("/memories/../etc/passwd", "would escape"),
        ("/memories/decision/../../x.md", "would escape"),
        ("/memories/decision/../../memoriesX/a.md", "would escape"),
        ("/etc/passwd", "must start with /memories"),
        ("/memoriesX/decision/a.md", "must start with /memories"),
        ("memories/decision/a.md", "must start with /memories"),
        ("/memories/nonsense/a.md", "no category 'nonsense'"),
        ("/memories/decision/sub/a.md", "as deep as memories go"),
        ("/memories/decision/.hidden", "Bad file name"),
        ("/memories/episode/a.md", "holds episode entries"),
        ("/memories/decision", "is not a file"),
    ],
)
def test_paths_outside_a_category_file_are_refused(tool, repo, path, says):
    before = {p: p.read_bytes() for p in (repo / "grimoires").rglob("*.yaml")}
    with pytest.raises(ToolError, match=says.replace("(", r"\(").replace(".", r"\.")):
        tool.execute(Create(command="create", path=path, file_text="Something to remember about the build"))
    assert {p: p.read_bytes() for p in (repo / "grimoires").rglob("*.yaml")} == before


def test_every_write_goes_through_the_guard_and_validation(tool, repo):
    secret = "the deploy key is " + "AKIA" + "IOSFODNN7EXAMPLE"  # split: this file holds no secret a scanner would flag
    with pytest.raises(ToolError, match="^error: .*secret"):
        tool.execute(Create(command="create", path="/memories/fact/keys.md", file_text=secret))
    tool.execute(Create(command="create", path="/memories/fact/db.md", file_text="The staging database is postgres"))
    with pytest.raises(ToolError, match="already exists"):
        tool.execute(Create(command="create", path="/memories/fact/db.md", file_text="Another text"))
    with pytest.raises(ToolError, match="an identical memory already exists: MEM-20261122-001"):
        tool.execute(
            Create(command="create", path="/memories/fact/db2.md", file_text="The staging database is postgres")
        )
    with pytest.raises(ToolError, match="^error: .*secret"):
        tool.execute(StrReplace(command="str_replace", path="/memories/fact/db.md", old_str="postgres", new_str=secret))
    with pytest.raises(ToolError, match="did not appear verbatim"):
        tool.execute(StrReplace(command="str_replace", path="/memories/fact/db.md", old_str="mysql", new_str="x"))
    with pytest.raises(ToolError, match=r"range \[0, 1\]"):
        tool.execute(Insert(command="insert", path="/memories/fact/db.md", insert_line=5, insert_text="x"))
    tool.execute(
        Create(
            command="create",
            path="/memories/fact/private.md",
            file_text="The VPN is at 10.0.0.1 <private>pw hunter2</private>",
        )
    )
    assert "hunter2" not in (repo / "grimoires/loa/memory/facts.yaml").read_text()
    assert [e["content"] for e in json.loads(mem("list", "-c", "fact", "--json").out)] == [
        "The VPN is at 10.0.0.1",
        "The staging database is postgres",
    ]


def test_deleting_a_folder_or_a_missing_file_is_refused(tool):
    with pytest.raises(ToolError, match="the folders are the grimoire's categories"):
        tool.execute(Delete(command="delete", path="/memories/decision"))
    with pytest.raises(ToolError, match="does not exist"):
        tool.execute(Delete(command="delete", path="/memories/decision/nothing.md"))


def test_entries_written_elsewhere_are_files_too_and_seen_at_once(tool, repo):
    added = mem_process("add", "-c", "decision", "--confidence", "0.9", "Reviews need two approvals", cwd=repo)
    entry_id = added.stdout.decode().strip()
    assert f"/memories/decision/{entry_id}.md\t{entry_id}" in tool.execute(
        View(command="view", path="/memories/decision")
    )
    assert tool.execute(View(command="view", path=f"/memories/decision/{entry_id}.md")).endswith(
        "1\tReviews need two approvals"
    )


def test_a_category_another_process_named_on_first_use_is_a_folder_at_once(tool, repo):
    """The config changed under the tool (a category named on first use, as a pull may bring one too):
    its next command runs on the config as the file now says, as a new `mem` process would."""
    assert "/memories/research" not in tool.execute(View(command="view", path="/memories"))
    done = mem_process("remember", "trusted.sources", "arxiv.org", "--category", "research", "--json", cwd=repo)
    entry_id = json.loads(done.stdout)["id"]
    assert "/memories/research" in tool.execute(View(command="view", path="/memories"))
    assert f"/memories/research/{entry_id}.md\t{entry_id}, today: trusted.sources = arxiv.org" in tool.execute(
        View(command="view", path="/memories/research")
    )


def test_a_folder_listing_stays_within_its_size_limit(repo):
    with_preset(repo, "sabre")
    small = GrimoireMemoryTool(Grimoire.open(repo), view_limit=300)
    for n in range(12):
        small.execute(
            Create(
                command="create",
                path=f"/memories/learning/l{n}.md",
                file_text=f"Lesson number {n} about flaky tests in module {n}",
            )
        )
    listing = small.execute(View(command="view", path="/memories/learning"))
    assert len(listing) < 300 + 200 and listing.endswith("more (view a file by its path, or ask `mem query`)")
    assert "/memories/learning/l11.md" in listing  # newest first


def test_the_sdk_runs_it_as_a_tool(tool):
    """The SDK's entry point (what tool_runner calls with the model's input) and its tool definition."""
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    out = tool.call(
        {"command": "create", "path": "/memories/preference/style.md", "file_text": "The user prefers short answers"}
    )
    assert out.startswith("File created successfully")
    assert "The user prefers short answers" in tool.call({"command": "view", "path": "/memories/preference/style.md"})


@pytest.mark.parametrize("outside", ["cli", "mcp"])
def test_a_file_superseded_outside_the_tool_keeps_its_name(tool, repo, outside):
    """Issue 41, item 7a: `mem supersede` and the MCP `supersede` carry
    `metadata.memory_path` over, so the file keeps its name, with the new text."""
    tool.execute(Create(command="create", path="/memories/decision/database.md", file_text="We use PostgreSQL 16."))
    if outside == "cli":
        assert mem("supersede", "MEM-20261122-001", "We use PostgreSQL 17.").code == 0
    else:
        invoke(lambda: Grimoire.open(repo), "supersede", {"id": "MEM-20261122-001", "content": "We use PostgreSQL 17."})
    listing = tool.execute(View(command="view", path="/memories/decision"))
    assert "/memories/decision/database.md\tMEM-20261122-002, today: We use PostgreSQL 17." in listing
    assert "MEM-20261122-002.md" not in listing
    assert tool.execute(View(command="view", path="/memories/decision/database.md")).endswith(
        "     1\tWe use PostgreSQL 17."
    )


_CREATOR = """
import sys
from anthropic.lib.tools import ToolError
from grimoire_cli import Grimoire
from grimoire_cli.integrations.anthropic import GrimoireMemoryTool

who, count = sys.argv[1], int(sys.argv[2])
tool = GrimoireMemoryTool(Grimoire.open("."))
for n in range(count):
    try:
        tool.call({"command": "create", "path": f"/memories/learning/f{n}.md", "file_text": f"Lesson {n} as process {who} saw it"})
        print("made", n)
    except ToolError as exc:
        assert "already exists" in str(exc), exc
"""


def test_two_processes_creating_the_same_files_make_each_once(tool, repo, tmp_path):
    """Issue 41, item 7c: the file's existence is checked under the write lock,
    so of two processes racing through the same paths one makes each file and
    the other is told it exists (before: both made some of them)."""
    script = tmp_path / "creator.py"
    script.write_text(_CREATOR)
    count = 40
    runs = [
        subprocess.Popen(
            [sys.executable, str(script), who, str(count)],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in "AB"
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    made = sorted(int(line.split()[1]) for out, _ in outputs for line in out.splitlines())
    assert made == list(range(count))
    listing = tool.execute(View(command="view", path="/memories/learning"))
    assert sorted(line.split("\t")[0] for line in listing.splitlines()[1:]) == sorted(
        f"/memories/learning/f{n}.md" for n in range(count)
    )


def test_insert_splits_lines_as_the_sdks_backend_does(tool, tmp_path):
    """Issue 41, item 7b: a text ending in a newline has no line after it to
    insert at (before: line 3 of two was taken, and wrote a blank line)."""
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    path = "/memories/decision/db.md"
    answers = {}
    for backend in (tool, sdk):
        backend.execute(Create(command="create", path=path, file_text="line one\nline two\n"))
        with pytest.raises(ToolError) as refused:
            backend.execute(Insert(command="insert", path=path, insert_line=3, insert_text="line three"))
        backend.execute(Insert(command="insert", path=path, insert_line=2, insert_text="line three\n"))
        answers[backend] = (str(refused.value), backend.execute(View(command="view", path=path)))
    assert answers[tool] == answers[sdk]
    assert answers[tool][0] == "Invalid `insert_line` parameter: 3. It should be within the range [0, 2]."
    assert shown("MEM-20261122-002")["content"] == "line one\nline two\nline three\n"


@pytest.mark.parametrize(
    "path",
    [
        "/memories/decision/./a.md",
        "/memories/./decision/a.md",
        "/memories/fact/../decision/a.md",
        "/memories/decision//a.md",
        "/memories/decision/a.md/.",
        "/memories/../memories/decision/a.md",
    ],
)
def test_dot_components_resolve_as_the_sdk_resolves_them(tool, tmp_path, path):
    """Issue 41, item 7e: `.`, and a `..` that stays inside /memories, name the
    file they lead to (before: refused as an escape)."""
    sdk = BetaLocalFilesystemMemoryTool(str(tmp_path / "sdk"))
    for backend in (tool, sdk):
        assert backend.execute(Create(command="create", path=path, file_text="We deploy on Tuesdays")).startswith(
            "File created successfully"
        )
        assert backend.execute(View(command="view", path="/memories/decision/a.md")).endswith(
            "     1\tWe deploy on Tuesdays"
        )
    assert shown("MEM-20261122-001")["metadata"] == {"memory_path": "a.md"}


def test_files_at_the_root_are_memories_of_the_home_category(tool, repo):
    """Issue 41, item 7d: `/memories/progress.md`, a common habit of models, is
    an entry of the home category (learning) keeping its whole path; every
    command works on it (before: refused as no category 'progress.md')."""
    made = tool.execute(
        Create(command="create", path="/memories/progress.md", file_text="Step 1 done: the schema is migrated")
    )
    assert made.startswith("File created successfully at: /memories/progress.md (MEM-20261122-001)")
    first = shown("MEM-20261122-001")
    assert (first["category"], first["metadata"]) == ("learning", {"memory_path": "/memories/progress.md"})
    root = tool.execute(View(command="view", path="/memories"))
    assert "/memories/progress.md\tMEM-20261122-001, today: Step 1 done: the schema is migrated" in root
    assert "/memories/learning/\t0 memories" in root  # it is at the root, not in the folder
    assert "(none yet)" in tool.execute(View(command="view", path="/memories/learning"))
    with pytest.raises(ToolError, match="already exists"):
        tool.execute(Create(command="create", path="/memories/progress.md", file_text="Another text"))

    tool.execute(
        StrReplace(command="str_replace", path="/memories/progress.md", old_str="Step 1", new_str="Step 1 and 2")
    )
    tool.execute(Insert(command="insert", path="/memories/progress.md", insert_line=1, insert_text="Next: the API"))
    assert mem("supersede", "MEM-20261122-003", "Steps 1-3 done\nNext: the API").code == 0
    assert tool.execute(View(command="view", path="/memories/progress.md")).endswith(
        "     1\tSteps 1-3 done\n     2\tNext: the API"
    )

    tool.execute(Rename(command="rename", old_path="/memories/progress.md", new_path="/memories/fact/progress.md"))
    assert "/memories/progress.md" not in tool.execute(View(command="view", path="/memories"))
    tool.execute(Rename(command="rename", old_path="/memories/fact/progress.md", new_path="/memories/status.md"))
    moved = shown("MEM-20261122-006")
    assert (moved["category"], moved["metadata"]["memory_path"]) == ("learning", "/memories/status.md")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memories", cwd=repo)
    gone = tool.execute(Delete(command="delete", path="/memories/status.md"))
    assert gone.startswith("Successfully deleted /memories/status.md (MEM-20261122-006")
    with pytest.raises(ToolError, match="does not exist"):
        tool.execute(View(command="view", path="/memories/status.md"))
    assert mem("validate").code == 0


def test_the_home_of_root_files_is_a_note_category_of_choice(repo):
    with_preset(repo, "sabre")
    grimoire = Grimoire.open(repo)
    GrimoireMemoryTool(grimoire, root_category="preference").execute(
        Create(command="create", path="/memories/user.md", file_text="The user prefers short answers")
    )
    assert shown("MEM-20261122-001")["category"] == "preference"
    with pytest.raises(BadInput, match="root_category 'episode' is not a category of kind note"):
        GrimoireMemoryTool(grimoire, root_category="episode")


def test_the_tool_waiting_for_the_next_command_holds_no_snapshot_of_the_catalog(tool, repo):
    """Once a command answered, the tool holds no snapshot of the catalog: the WAL other processes write to is
    checkpointed while the agent thinks."""
    assert mem("add", "-c", "decision", "We use PostgreSQL 16 for the orders database").code == 0
    assert "decision" in tool.execute(View(command="view", path="/memories/decision"))
    assert not wal_pinned(repo)
