"""`mem consolidate`: transcripts in, an external summarizer (real scripts the
tests write), memories and a summary out, in one lock (docs/tiers-and-consolidation.md)."""

import json
import sys
from pathlib import Path

import pytest
from conftest import git, mem

from grimoire_cli.lifecycle.transcripts import read_transcript

MEMORY = Path("grimoires/loa/memory")
AWS = "AKIA" + "IOSFODNN7EXAMPLE"  # split so this file holds no secret a scanner would flag

ANSWER = {
    "facts": [
        {"content": "The user's dog is called Rex", "importance": 6, "topic": "pets"},
        {"content": "The staging database runs postgres 16", "importance": 4, "key": "db.staging.engine"},
    ],
    "decisions": [{"content": "We deploy on tuesdays only", "importance": 8, "tags": ["deploy"]}],
    "episodes": [
        {"content": "The friday deploy broke checkout", "importance": 7, "event": "deploy", "outcome": "failure"}
    ],
    "procedures": [],
    "preferences": [{"content": "The user prefers short answers", "importance": 5, "confidence": 0.9}],
    "summary": "A chat about the dog, the staging database and deploy days.",
    "model": "test-model-1",
}


def _script(folder: Path, name: str, body: str) -> str:
    """A real executable the summarizer option names: the prompt arrives on its stdin."""
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport json, sys, time\nprompt = sys.stdin.read()\n{body}\n")
    path.chmod(0o755)
    return str(path)


def _answering(folder: Path, answer: dict, keep_prompt: Path | None = None) -> str:
    save = f"open({str(keep_prompt)!r}, 'w').write(prompt)\n" if keep_prompt else ""
    return _script(folder, "summarizer.py", f"{save}print(json.dumps({answer!r}))")


def _claude_code(path: Path, session: str = "sess-42", turns: int = 6) -> Path:
    """A Claude Code session log: text turns, tool calls and results between them, a summary line, a meta line."""
    lines = [
        {"type": "summary", "summary": "Earlier work", "leafUuid": "x"},
        {
            "type": "user",
            "isMeta": True,
            "sessionId": session,
            "message": {"role": "user", "content": "<command-name>/clear</command-name>"},
        },
    ]
    for n in range(turns):
        lines.append(
            {
                "type": "user",
                "sessionId": session,
                "message": {"role": "user", "content": f"question {n} about deploys"},
            }
        )
        lines.append(
            {
                "type": "assistant",
                "sessionId": session,
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm"},
                        {"type": "text", "text": f"answer {n}"},
                        {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": "ls"}},
                    ],
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "sessionId": session,
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "TOOL NOISE"}],
                },
            }
        )
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


@pytest.fixture
def samaritan(repo):
    assert mem("init", "--preset", "samaritan").code == 0
    assert mem("init", "--preset", "sabre").code == 0  # an episode category too
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    return repo


def _files(repo: Path) -> dict:
    return {p: p.read_bytes() for p in (repo / MEMORY).rglob("*.yaml")}


def test_transcript_formats_and_tool_noise(tmp_path):
    claude = read_transcript(_claude_code(tmp_path / "s.jsonl").read_text(), "s.jsonl")
    assert (claude.format, claude.session_id, len(claude.messages)) == ("claude-code", "sess-42", 12)
    assert claude.messages[:2] == [("user", "question 0 about deploys"), ("assistant", "answer 0")]
    assert not any("NOISE" in m.text or "clear" in m.text or m.text == "hmm" for m in claude.messages)
    listed = read_transcript(
        json.dumps(
            [
                {"role": "user", "content": "a"},
                {"role": "tool", "content": "x"},
                {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
            ]
        ),
        "t.json",
    )
    assert (listed.format, listed.messages) == ("json", [("user", "a"), ("assistant", "b")])
    lines = read_transcript('{"role": "human", "content": "a"}\n\n{"role": "ai", "content": "b"}\n', "t.jsonl")
    assert (lines.format, lines.messages) == ("jsonl", [("user", "a"), ("assistant", "b")])
    plain = read_transcript("User: hi\nthere\nAssistant: hello\n", "t.txt")
    assert plain.messages == [("user", "hi\nthere"), ("assistant", "hello")]
    assert [m.text for m in read_transcript("one\n\ntwo\nlines\n", "t.txt").messages] == ["one", "two lines"]
    assert plain.fallback_id() == read_transcript("User: hi\nthere\nAssistant: hello\n", "x").fallback_id()


def test_a_session_is_consolidated_with_its_id_and_a_summary_listing_what_was_saved(samaritan, tmp_path):
    prompt = tmp_path / "prompt.txt"
    script = _answering(tmp_path, ANSWER, prompt)
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", script)
    assert result.code == 0, result.err
    last = result.out.splitlines()[-1]
    assert last.startswith("Summarized 12 messages → 5 memories saved (0 duplicates, 0 refused); summary MEM-")
    assert "saved MEM-20261122-001 (fact, importance 6): The user's dog is called Rex" in result.out
    sent = prompt.read_text()
    assert sent.startswith("You are the memory of a software project") and "user: question 5 about deploys" in sent
    assert "TOOL NOISE" not in sent and "hmm" not in sent
    entries = {e["id"]: e for e in map(json.loads, mem("export").out.splitlines())}
    summary = next(e for e in entries.values() if e["category"] == "summary")
    saved = [i for i, e in entries.items() if e["category"] != "summary"]
    assert summary["memories"] == saved and summary["session_id"] == "sess-42" and summary["message_count"] == 12
    assert summary["model"] == "test-model-1" and summary["content"] == ANSWER["summary"]
    assert all(e["source"]["session_id"] == "sess-42" for e in entries.values())
    by_content = {e["content"]: e for e in entries.values()}
    assert by_content["The user's dog is called Rex"]["tags"] == ["pets"]  # a topic is a tag
    episode = by_content["deploy (failure): The friday deploy broke checkout"]
    assert (episode["category"], episode["event"], episode["learned"]) == (
        "episode",
        "deploy",
        "The friday deploy broke checkout",
    )
    assert by_content["The user prefers short answers"]["confidence"] == 0.9
    assert mem("validate").code == 0


def test_secrets_duplicates_and_keys(samaritan, tmp_path):
    mem("add", "-c", "decision", "We deploy on tuesdays only")
    old = mem("add", "-c", "fact", "--key", "db.staging.engine", "The staging database runs postgres 15").out.strip()
    answer = {
        **ANSWER,
        "facts": [
            *ANSWER["facts"],
            {"content": f"The deploy key is {AWS}", "importance": 9},
            {"content": "not a tag", "importance": 3, "tags": ["!!!"]},
        ],
    }
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, answer))
    assert result.code == 0, result.err
    assert "Summarized 12 messages → 4 memories saved (1 duplicate, 2 refused)" in result.out
    assert "skipped decisions[0]: the same as MEM-20261122-001" in result.err
    assert "refused facts[2]: refusing to store a secret" in result.err and AWS not in result.err
    assert "refused facts[3]: bad tag" in result.err
    assert not any(AWS.encode() in data for data in _files(samaritan).values())
    new = json.loads(mem("get", "db.staging.engine", "--json").out)
    assert new["content"] == "The staging database runs postgres 16" and new["supersedes"] == old
    again = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, answer), "--json")
    done = json.loads(again.out)
    # The key's value too; the summary stands
    assert (len(done["saved"]), len(done["duplicates"]), done["summary"]) == (
        0,
        5,
        None,
    )


def test_a_dry_run_shows_and_writes_nothing(samaritan, tmp_path):
    before = _files(samaritan)
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, ANSWER), "--dry-run")
    assert result.code == 0 and "would save MEM-20261122-001 (fact, importance 6)" in result.out
    assert "5 memories would be saved" in result.out
    assert _files(samaritan) == before


def test_all_or_nothing_a_summary_that_cannot_be_written_fails_the_batch(samaritan, tmp_path):
    before = _files(samaritan)
    answer = {**ANSWER, "summary": f"We talked about the key {AWS}"}
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, answer))
    assert result.code == 2 and "refusing to store a secret" in result.err and len(result.err.splitlines()) == 1
    assert _files(samaritan) == before


@pytest.mark.parametrize(
    "body, code, message",
    [
        ("time.sleep(30)", 5, "did not answer within 1s; nothing was written"),
        (
            "sys.stderr.write('model overloaded\\n'); sys.exit(1)",
            5,
            "exited with 1: model overloaded; nothing was written",
        ),
        ("print('{\"facts\": [')", 5, "printed no valid JSON"),
        ("print(json.dumps({'facts': [{'content': 'x'}]}))", 5, "facts[0] without an importance from 1 to 10"),
        ("print(json.dumps('facts'))", 5, "is a JSON str, not an object"),
        ("print(json.dumps([1, 2]))", 5, "has preferences[0] that is not an object"),  # Samaritan's list, of memories
    ],
)
def test_a_failing_summarizer_writes_nothing(samaritan, tmp_path, body, code, message):
    config = samaritan / ".loa.config.yaml"
    config.write_text(
        config.read_text().replace("memory_schema:\n", "memory_schema:\n  consolidate: {timeout: 1}\n", 1)
    )
    before = _files(samaritan)
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _script(tmp_path, "bad.py", body))
    assert result.code == code and message in result.err, result.err
    assert result.err.startswith("error: ") and len(result.err.splitlines()) == 1
    assert _files(samaritan) == before


def test_fenced_json_is_read(samaritan, tmp_path):
    script = _script(tmp_path, "fenced.py", f"print('```json'); print(json.dumps({ANSWER!r})); print('```')")
    assert mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", script).code == 0


def test_bad_input_is_one_line_and_writes_nothing(samaritan, tmp_path):
    before = _files(samaritan)
    script = _answering(tmp_path, ANSWER)
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    short = tmp_path / "short.json"
    short.write_text(
        json.dumps(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "bye"},
            ]
        )
    )
    cases = [
        (["consolidate", tmp_path / "missing.jsonl", "--with", script], 2, "no such file"),
        (["consolidate", empty, "--with", script], 2, "is empty"),
        (
            ["consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", "no-such-summarizer -m x"],
            2,
            "command not found: no-such-summarizer",
        ),
        (["consolidate", _claude_code(tmp_path / "s.jsonl")], 2, "no summarizer command configured"),
    ]
    for args, code, message in cases:
        result = mem(*args)
        assert result.code == code and message in result.err and len(result.err.splitlines()) == 1, (args, result.err)
    skipped = mem("consolidate", short, "--with", _script(tmp_path, "never.py", "sys.exit(3)"))  # never run
    assert (
        skipped.code == 0
        and skipped.out == "not summarized: 3 messages, fewer than 4 (consolidate.min_messages); nothing saved\n"
    )
    assert _files(samaritan) == before


def test_without_a_summary_category_the_preset_is_named(repo, tmp_path):
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, ANSWER))
    assert result.code == 2 and "run `mem init --preset samaritan`" in result.err


def test_the_last_turns_only_private_sections_gone_secrets_redacted(samaritan, tmp_path):
    config = samaritan / ".loa.config.yaml"
    config.write_text(
        config.read_text().replace("memory_schema:\n", "memory_schema:\n  consolidate: {max_turns: 4}\n", 1)
    )
    transcript = tmp_path / "t.json"
    transcript.write_text(
        json.dumps(
            [{"role": "user", "content": f"message {n}"} for n in range(8)]
            + [{"role": "user", "content": f"my key is {AWS} <private>the pin is 1234</private> ok"}]
        )
    )
    prompt = tmp_path / "prompt.txt"
    result = mem("consolidate", transcript, "--with", _answering(tmp_path, ANSWER, prompt), "--json")
    assert json.loads(result.out)["messages"] == 4 and json.loads(result.out)["redacted"] == 1
    sent = prompt.read_text()
    assert (
        "message 4" not in sent
        and "message 5" in sent
        and "pin" not in sent
        and AWS not in sent
        and "[redacted:" in sent
    )


def test_the_python_api_takes_messages(samaritan, tmp_path):
    from grimoire_cli import Grimoire

    g = Grimoire.open(samaritan)
    messages = [{"role": "user", "content": f"turn {n}"} for n in range(5)]
    result = g.lifecycle.consolidate(messages, command=_answering(tmp_path, ANSWER), session_id="chat-7")
    assert len(result.saved) == 5 and result.summary.data["session_id"] == "chat-7"
    assert all(e.data["source"]["session_id"] == "chat-7" for e in result.saved)


def test_what_the_command_says_on_stderr_is_redacted(samaritan, tmp_path):
    body = "sys.stderr.write('auth failed for key " + "sk-ant-api03-" + "A" * 90 + "\\n'); sys.exit(1)"
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _script(tmp_path, "leaky.py", body))
    assert result.code == 5 and "[redacted:" in result.err and "AAAAAAAAAA" not in result.err


def test_a_command_that_cannot_start_is_bad_input(samaritan, tmp_path):
    script = tmp_path / "no-shebang"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    for command in (str(script), "x" * 5000):
        result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", command)
        assert result.code == 2 and result.err.startswith("error: ") and len(result.err.splitlines()) == 1, result.err


def test_the_model_is_the_answers_else_the_command_lines(samaritan, tmp_path):
    from grimoire_cli.lifecycle.consolidation import model_of

    assert model_of("llm -m gpt-4o-mini --no-stream") == "gpt-4o-mini"
    assert model_of("/usr/local/bin/summarize --model=claude-3 -x") == "claude-3"
    assert model_of("/home/me/bin/summarize.py --flag") == "summarize.py"
    answer = {k: v for k, v in ANSWER.items() if k != "model"}
    done = json.loads(
        mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, answer), "--json").out
    )
    assert done["summary"]["model"] == "summarizer.py"


def test_a_key_given_twice_keeps_the_last_and_a_rerun_writes_nothing(samaritan, tmp_path):
    answer = {
        "facts": [{"content": "v1", "importance": 5, "key": "a.b"}, {"content": "v2", "importance": 5, "key": "a.b"}]
    }
    script = _answering(tmp_path, answer)
    first = json.loads(mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", script, "--json").out)
    assert [e["content"] for e in first["saved"]] == ["v2"]
    assert first["refused"] == [{"item": "facts[0]", "error": "the key a.b is given again by facts[1], which is kept"}]
    again = json.loads(mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", script, "--json").out)
    assert (again["saved"], len(again["duplicates"]), again["summary"]) == ([], 1, None)


def test_a_transcript_without_messages_is_bad_input(samaritan, tmp_path):
    for text in ('{"messages": "x"}', '{"a": 1}\n{"b": 2}\n', "[1, 2]"):
        path = tmp_path / "t.json"
        path.write_text(text)
        result = mem("consolidate", path, "--with", _answering(tmp_path, ANSWER))
        assert result.code == 2 and "holds no messages" in result.err, text


def test_the_same_transcript_twice_writes_nothing_the_second_time_and_says_so(samaritan, tmp_path):
    procedure = {"content": "How we ship", "importance": 6, "name": "ship", "steps": ["build", "push"]}
    answer = {**ANSWER, "procedures": [procedure]}
    transcript = _claude_code(tmp_path / "s.jsonl")
    first = mem("consolidate", transcript, "--with", _answering(tmp_path, answer))
    assert (
        first.code == 0
        and "Summarized 12 messages → 6 memories saved (0 duplicates, 0 refused); summary MEM-20261122-007" in first.out
    )
    before = _files(samaritan)
    again = mem("consolidate", transcript, "--with", _answering(tmp_path, answer))
    assert again.code == 0, again.err
    assert again.out.strip() == (
        "Summarized 12 messages → 0 memories saved (6 duplicates, 0 refused); "
        "nothing new since summary MEM-20261122-007, nothing written"
    )
    assert "skipped procedures[0]: the same as MEM-20261122-005" in again.err
    assert _files(samaritan) == before  # no copy of the procedure superseding it, no second summary
    # A procedure that did change is a new version, and the run gets its summary.
    changed = {**answer, "procedures": [{**procedure, "steps": ["build", "test", "push"]}]}
    third = json.loads(mem("consolidate", transcript, "--with", _answering(tmp_path, changed), "--json").out)
    assert [(e["category"], e["supersedes"]) for e in third["saved"]] == [("procedure", "MEM-20261122-005")]
    assert third["summary"]["memories"] == [third["saved"][0]["id"]] and third["summarized_by"] is None
    assert json.loads(mem("show", "MEM-20261122-005", "--json").out)["superseded_by"] == third["saved"][0]["id"]


def test_a_facts_value_and_ttl_and_an_episodes_context_are_kept(sabre, tmp_path):
    """SABRE's consolidation: facts [{key, value, ttl}], episodes [{event, context, learned}]."""
    from grimoire_cli import Grimoire

    answer = {
        "facts": [
            {
                "content": "The orders table has three columns",
                "importance": 6,
                "key": "database.orders.schema",
                "value": {"columns": ["id", "amount", "created_at"]},
                "ttl": 3600,
            },
            {"content": "Tests run with pytest -q", "importance": 5, "key": "project.test_command", "ttl": "1d"},
            {
                "content": "The api runs 5 replicas",
                "importance": 5,
                "key": "service.api.topology",
                "value": {"replicas": 5},
            },
        ],
        "episodes": [
            {
                "content": "MRR dropped because card retries failed",
                "importance": 7,
                "event": "mrr-drop-investigation",
                "outcome": "success",
                "context": {"root_cause": "failed card retries", "duration": "2h"},
                "learned": "Check the payment retry job first when MRR drops",
            }
        ],
    }
    g = Grimoire.open(sabre)
    held = g.facts.remember("service.api.topology", {"replicas": 3}, ttl="5m", category="semantic").entry
    messages = [{"role": "user", "content": f"turn {n}"} for n in range(5)]
    result = g.lifecycle.consolidate(messages, command=_answering(tmp_path, answer), session_id="conv-1")
    assert result.refused == [] and len(result.saved) == 4
    schema = g.facts.recall_entry("database.orders.schema")
    assert g.facts.recall("database.orders.schema") == {"columns": ["id", "amount", "created_at"]}
    assert (schema.data["ttl"], schema.category) == ("1h", "semantic")
    assert g.facts.recall_entry("project.test_command").data["ttl"] == "1d"
    # A key already held keeps its category and ttl (as update_fact does) and gets the new value.
    topology = g.facts.recall_entry("service.api.topology")
    assert (topology.data["supersedes"], topology.category, topology.data["ttl"]) == (held.id, "semantic", "5m")
    assert g.facts.recall("service.api.topology") == {"replicas": 5}
    [episode] = g.episodes.list(None, event="mrr-drop-investigation")
    assert episode.entry.data["context"] == {"root_cause": "failed card retries", "duration": "2h"}
    assert episode.entry.data["learned"] == "Check the payment retry job first when MRR drops"
    assert episode.entry.data["outcome"] == "success"


def test_an_items_bad_ttl_or_context_refuses_that_item_only(sabre, tmp_path):
    from grimoire_cli import Grimoire

    answer = {
        "facts": [
            {"content": "A", "importance": 5, "key": "a.b", "ttl": "soon"},
            {"content": "B", "importance": 5, "key": "c.d", "ttl": 60},
        ],
        "episodes": [{"content": "C", "importance": 5, "event": "x", "context": "not an object"}],
    }
    g = Grimoire.open(sabre)
    messages = [{"role": "user", "content": f"turn {n}"} for n in range(5)]
    result = g.lifecycle.consolidate(messages, command=_answering(tmp_path, answer), session_id="conv-2")
    assert [label for label, _ in result.refused] == ["facts[0]", "episodes[0]"]
    assert "bad ttl 'soon'" in result.refused[0][1] and "context" in result.refused[1][1]
    assert g.facts.recall_entry("c.d").data["ttl"] == "1m"


def test_sabres_bare_fact_shape_is_saved_as_mem_remember_keeps_it(sabre, tmp_path):
    """SABRE's summarizer answers a fact as {key, value, ttl}: no content, no
    importance. Its content is the value, its summary `key = value`, as `mem
    remember` writes them; an empty value refuses that item only."""
    answer = {
        "facts": [
            {"key": "database.orders.schema", "value": {"columns": ["id", "amount"]}, "ttl": 3600},
            {"key": "project.test_command", "value": "pytest -q", "ttl": 86400, "importance": 6},
            {"key": "project.owner", "value": "  "},
        ],
        "episodes": [],
        "procedures": [],
    }
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, answer), "--json")
    assert result.code == 0, result.err
    done = json.loads(result.out)
    assert [item["item"] for item in done["refused"]] == ["facts[2]"]
    assert json.loads(mem("recall", "database.orders.schema", "--json").out)["value"] == {"columns": ["id", "amount"]}
    schema, command = (json.loads(mem("show", e["id"], "--json").out) for e in done["saved"])
    assert (schema["ttl"], schema["summary"], schema["category"]) == (
        "1h",
        'database.orders.schema = {"columns": ["id", "amount"]}',
        "semantic",
    )
    assert (command["content"], command["summary"], command["ttl"], command["importance"]) == (
        "pytest -q",
        "project.test_command = pytest -q",
        "1d",
        6,
    )
    assert mem("validate").code == 0


def test_a_bare_fact_with_a_bad_importance_refuses_the_answer(sabre, tmp_path):
    answer = {"facts": [{"key": "a.b", "value": 1, "importance": 11}]}
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, answer))
    assert result.code == 5 and "facts[0] with an importance not from 1 to 10" in result.err
    assert "a.b" not in mem("facts").out


def test_sabres_whole_answer_shape_is_saved(sabre, tmp_path):
    """SABRE's LLM result: facts [{key, value, ttl}], episodes [{event, context,
    learned}], procedures [{name, steps, category}]; no content, no importance."""
    from grimoire_cli import Grimoire

    answer = {
        "facts": [{"key": "service.api.topology", "value": {"replicas": 3}, "ttl": 300}],
        "episodes": [
            {"event": "checkout-outage", "context": {"root_cause": "bad migration"}, "learned": "Roll back first"},
            {"event": "quiet-deploy", "context": {"service": "checkout"}},
        ],
        "procedures": [
            {
                "name": "rollback-checkout",
                "steps": [
                    {"action": "kubectl rollout undo deploy/checkout"},
                    {"name": "verify", "action": "curl -f /health"},
                ],
                "category": "runbooks",
            }
        ],
    }
    result = mem("consolidate", _claude_code(tmp_path / "s.jsonl"), "--with", _answering(tmp_path, answer), "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["refused"] == []
    g = Grimoire.open(sabre)
    outage, quiet = sorted((hit.entry for hit in g.episodes.list(None)), key=lambda e: e.data["event"])
    assert (outage.data["event"], outage.data["learned"], outage.data["context"]) == (
        "checkout-outage",
        "Roll back first",
        {"root_cause": "bad migration"},
    )
    assert quiet.data["learned"] == "quiet-deploy" and quiet.data["context"] == {"service": "checkout"}
    procedure = g.procedures.get("rollback-checkout")
    assert [(s["name"], s.get("run")) for s in procedure.steps] == [
        ("kubectl rollout undo deploy/checkout", "kubectl rollout undo deploy/checkout"),
        ("verify", "curl -f /health"),
    ]
    assert procedure.entry.tags == ["runbooks"] and "description" not in procedure.entry.data
    assert mem("validate").code == 0
