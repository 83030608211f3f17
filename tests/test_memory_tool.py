"""grimoire_cli.integrations.anthropic: Anthropic's memory tool over a
grimoire, driven with the SDK's own command objects (README: Agents)."""

from __future__ import annotations

import json

import pytest

from conftest import git, mem, mem_process, with_preset

pytest.importorskip("anthropic")
from anthropic.lib.tools import ToolError  # noqa: E402
from anthropic.types.beta import (  # noqa: E402
    BetaMemoryTool20250818CreateCommand as Create,
    BetaMemoryTool20250818DeleteCommand as Delete,
    BetaMemoryTool20250818InsertCommand as Insert,
    BetaMemoryTool20250818RenameCommand as Rename,
    BetaMemoryTool20250818StrReplaceCommand as StrReplace,
    BetaMemoryTool20250818ViewCommand as View,
)

from grimoire_cli import Grimoire  # noqa: E402
from grimoire_cli.integrations.anthropic import GrimoireMemoryTool  # noqa: E402
from grimoire_cli.integrations.calls import invoke  # noqa: E402


@pytest.fixture
def tool(repo):
    with_preset(repo, "sabre")
    return GrimoireMemoryTool(Grimoire.open(repo))


def shown(entry_id: str) -> dict:
    return json.loads(mem("show", entry_id, "--json").out)


def test_a_conversation_creates_edits_moves_and_deletes_through_the_chain(tool, repo):
    made = tool.execute(Create(command="create", path="/memories/decision/database.md",
                               file_text="We use PostgreSQL 16.\nMigrations run with alembic."))
    assert made.startswith("File created successfully at: /memories/decision/database.md (MEM-20261122-001)")
    first = shown("MEM-20261122-001")
    assert first["category"] == "decision" and first["source"]["agent"] == "claude" and first["metadata"] == {"memory_path": "database.md"}

    listing = tool.execute(View(command="view", path="/memories/decision"))
    assert "/memories/decision/database.md\tMEM-20261122-001, today: We use PostgreSQL 16." in listing
    assert tool.execute(View(command="view", path="/memories/decision/database.md")).endswith(
        "     1\tWe use PostgreSQL 16.\n     2\tMigrations run with alembic.")

    edited = tool.execute(StrReplace(command="str_replace", path="/memories/decision/database.md", old_str="16", new_str="17"))
    assert "(MEM-20261122-001 superseded by MEM-20261122-002)" in edited and "     1\tWe use PostgreSQL 17." in edited
    assert shown("MEM-20261122-001")["superseded_by"] == "MEM-20261122-002"
    assert tool.execute(View(command="view", path="/memories/decision/database.md", view_range=[1, 1])).endswith("1\tWe use PostgreSQL 17.")

    tool.execute(Insert(command="insert", path="/memories/decision/database.md", insert_line=1, insert_text="Backups run nightly.\n"))
    assert mem("show", "MEM-20261122-003", "--json").code == 0
    assert shown("MEM-20261122-003")["content"] == "We use PostgreSQL 17.\nBackups run nightly.\nMigrations run with alembic."

    moved = tool.execute(Rename(command="rename", old_path="/memories/decision/database.md", new_path="/memories/fact/database.md"))
    assert moved.startswith("Successfully renamed /memories/decision/database.md to /memories/fact/database.md")
    fact = shown("MEM-20261122-004")
    assert (fact["category"], fact["supersedes"], fact["metadata"]["memory_path"]) == ("fact", "MEM-20261122-003", "database.md")
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
    old = grimoire.remember("db.pool", {"size": 2}, category="fact").entry
    answer = tool.execute(StrReplace(command="str_replace", path=f"/memories/fact/{old.id}.md", old_str="2", new_str="3"))
    assert "superseded by" in str(answer)
    assert grimoire.recall("db.pool") == '{"size": 3}'
    assert mem("recall", "db.pool").out == '{"size": 3}\n'


def test_the_root_lists_one_folder_per_category(tool):
    tool.execute(Create(command="create", path="/memories/learning/tests.md", file_text="Run the migrations before the API tests"))
    root = tool.execute(View(command="view", path="/memories"))
    assert "/memories/learning/\t1 memory" in root and "/memories/decision/\t0 memories" in root
    assert "/memories/episode/" in root  # sabre's kinds are shown, not written


@pytest.mark.parametrize("path, says", [
    ("/memories/../etc/passwd", "would escape"),
    ("/memories/decision/../../x.md", "would escape"),
    ("/etc/passwd", "must start with /memories"),
    ("/memoriesX/decision/a.md", "must start with /memories"),
    ("memories/decision/a.md", "must start with /memories"),
    ("/memories/nonsense/a.md", "no category 'nonsense'"),
    ("/memories/decision/sub/a.md", "as deep as memories go"),
    ("/memories/decision/.hidden", "Bad file name"),
    ("/memories/episode/a.md", "holds episode entries"),
    ("/memories/decision", "is not a file"),
])
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
        tool.execute(Create(command="create", path="/memories/fact/db2.md", file_text="The staging database is postgres"))
    with pytest.raises(ToolError, match="^error: .*secret"):
        tool.execute(StrReplace(command="str_replace", path="/memories/fact/db.md", old_str="postgres", new_str=secret))
    with pytest.raises(ToolError, match="did not appear verbatim"):
        tool.execute(StrReplace(command="str_replace", path="/memories/fact/db.md", old_str="mysql", new_str="x"))
    with pytest.raises(ToolError, match=r"range \[0, 1\]"):
        tool.execute(Insert(command="insert", path="/memories/fact/db.md", insert_line=5, insert_text="x"))
    tool.execute(Create(command="create", path="/memories/fact/private.md", file_text="The VPN is at 10.0.0.1 <private>pw hunter2</private>"))
    assert "hunter2" not in (repo / "grimoires/loa/memory/facts.yaml").read_text()
    assert [e["content"] for e in json.loads(mem("list", "-c", "fact", "--json").out)] == [
        "The VPN is at 10.0.0.1", "The staging database is postgres"]


def test_deleting_a_folder_or_a_missing_file_is_refused(tool):
    with pytest.raises(ToolError, match="the folders are the grimoire's categories"):
        tool.execute(Delete(command="delete", path="/memories/decision"))
    with pytest.raises(ToolError, match="does not exist"):
        tool.execute(Delete(command="delete", path="/memories/decision/nothing.md"))


def test_entries_written_elsewhere_are_files_too_and_seen_at_once(tool, repo):
    added = mem_process("add", "-c", "decision", "--confidence", "0.9", "Reviews need two approvals", cwd=repo)
    entry_id = added.stdout.decode().strip()
    assert f"/memories/decision/{entry_id}.md\t{entry_id}" in tool.execute(View(command="view", path="/memories/decision"))
    assert tool.execute(View(command="view", path=f"/memories/decision/{entry_id}.md")).endswith("1\tReviews need two approvals")


def test_a_folder_listing_stays_within_its_size_limit(repo):
    with_preset(repo, "sabre")
    small = GrimoireMemoryTool(Grimoire.open(repo), view_limit=300)
    for n in range(12):
        small.execute(Create(command="create", path=f"/memories/learning/l{n}.md", file_text=f"Lesson number {n} about flaky tests in module {n}"))
    listing = small.execute(View(command="view", path="/memories/learning"))
    assert len(listing) < 300 + 200 and listing.endswith("more (view a file by its path, or ask `mem query`)")
    assert "/memories/learning/l11.md" in listing  # newest first


def test_the_sdk_runs_it_as_a_tool(tool):
    """The SDK's entry point (what tool_runner calls with the model's input) and its tool definition."""
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    out = tool.call({"command": "create", "path": "/memories/preference/style.md", "file_text": "The user prefers short answers"})
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
    assert tool.execute(View(command="view", path="/memories/decision/database.md")).endswith("     1\tWe use PostgreSQL 17.")
