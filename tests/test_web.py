"""`mem serve` (issue 39, docs/web.md): every page and its JSON URL on real
grimoires, the JSON equal to what `mem … --json` prints, and the safety
promises: escaped content, a strict CSP, read-only without --write, CSRF on
writes, a token off loopback, no URL reaching outside the grimoire."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest
from conftest import git, mem, mem_process, started, wal_pinned, with_preset
from starlette.testclient import TestClient

from grimoire_cli import Grimoire
from grimoire_cli.integrations.web import svg
from grimoire_cli.integrations.web.app import CSP, build_app

LOCAL = "http://127.0.0.1"
TOKEN = "a-long-enough-test-token"
SCRIPT = "<script>alert('owned')</script>"
HTML = {"accept": "text/html"}


def _add(*args: str) -> str:
    result = mem("add", "--json", *args)
    assert result.code == 0, result.err
    return json.loads(result.out)["id"]


@pytest.fixture
def filled(repo):
    """A committed grimoire with a supersede chain of three, a related pair,
    an archived entry and an entry holding a script tag."""
    first = _add("-c", "decision", "--", "use postgres for the storage layer")
    second = json.loads(mem("supersede", "--json", first, "--", "use postgres 15 for the storage layer").out)["id"]
    third = json.loads(mem("supersede", "--json", second, "--", "use postgres 16 for the storage layer").out)["id"]
    related = _add("-c", "learning", "--related", third, "--", "the storage migration needs a maintenance window")
    gone = _add("-c", "learning", "--", "an old note about the build cache")
    assert mem("archive", gone, "--no-commit").code == 0
    hostile = _add("-c", "learning", "--", f"a memory holding {SCRIPT} as text")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "memories", cwd=repo)
    return {"chain": [first, second, third], "related": related, "archived": gone, "hostile": hostile}


def _client(repo, **options) -> TestClient:
    return started(TestClient(build_app(lambda: Grimoire.open(repo), **options), base_url=LOCAL))


def _cli_json(*args: str):
    result = mem(*args, "--json")
    assert result.code in (0, 1), result.err
    return json.loads(result.out)


PAGES = ["/", "/search?q=postgres", "/archive", "/review", "/tiers", "/learning"]


@pytest.mark.parametrize("url", PAGES)
def test_every_page_loads_with_its_headers(filled, repo, url):
    response = _client(repo).get(url, headers=HTML)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP and "default-src 'none'" in CSP
    assert response.headers["x-content-type-options"] == "nosniff"
    assert '<link rel="stylesheet" href="/static/style.css">' in response.text  # nothing from another origin
    assert "http://" not in response.text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_the_json_urls_are_the_cli_json(filled, repo):
    client = _client(repo)
    last = filled["chain"][-1]
    assert client.get("/search.json?q=postgres").json() == _cli_json("query", "postgres")
    assert client.get("/search.json?q=postgres&explain=1").json() == _cli_json("query", "postgres", "--explain")
    assert client.get("/search.json?q=storage&category=learning").json() == _cli_json(
        "query", "storage", "-c", "learning"
    )
    assert client.get("/archive.json").json() == _cli_json("list", "--archived")
    assert client.get("/review.json").json() == _cli_json("review")
    entry = client.get(f"/entry/{last}.json").json()
    assert entry["entry"] == _cli_json("show", last)
    assert entry["chain"] == _cli_json("show", last, "--chain")
    overview = client.get("/overview.json").json()
    assert overview["stats"] == _cli_json("stats")
    assert overview["scopes"] == _cli_json("scopes")
    assert client.get("/tiers.json").json()["age"] == _cli_json("age", "--dry-run")
    assert client.get("/learning.json").json() == {"tools": [], "days": {}, "patterns": [], "insights": []}


def test_search_page_shows_the_ranking_of_mem_query(filled, repo):
    page = _client(repo).get("/search?q=postgres&explain=1", headers=HTML).text
    ranked = [hit["id"] for hit in _cli_json("query", "postgres")]
    assert ranked and [i for i in re.findall(r'href="/entry/([^"]+)"', page) if i in ranked] == ranked
    assert "bm25=" in page  # the --explain breakdown, on demand
    assert 'id="q"' in page and "/static/keys.js" in page  # `/` focuses it when JavaScript runs


def test_an_entry_shows_its_fields_chain_both_ways_related_and_history(filled, repo):
    first, middle, last = filled["chain"]
    client = _client(repo)
    page = client.get(f"/entry/{middle}", headers=HTML).text
    for other in (first, last):  # the timeline reaches both ends from the middle
        assert f'<a href="/entry/{other}"><circle class="dot"' in page
    assert f'<a href="/entry/{middle}"><circle class="dot dot-current"' in page
    assert "use postgres 15 for the storage layer" in page and "superseded_by" in page
    assert "memories" in page  # the commit that added its file, from git log
    related = client.get(f"/entry/{filled['related']}.json").json()["related"]
    assert [e["id"] for e in related] == [last]
    assert client.get(f"/entry/{last}.json").json()["history"][0]["subject"] == "memories"


def test_the_archive_shows_reasons_and_the_overview_counts(filled, repo):
    client = _client(repo)
    archived = client.get("/archive", headers=HTML).text
    assert filled["archived"] in archived and "archived: manual" in archived
    overview = client.get("/", headers=HTML).text
    assert "entries per category" in overview and "memories" in overview  # a chart and the latest commit


def test_a_script_in_a_memory_is_shown_as_text(filled, repo):
    client = _client(repo)
    for url in (f"/entry/{filled['hostile']}", "/search?q=memory+holding", "/"):
        page = client.get(url, headers=HTML).text
        assert "<script>alert" not in page, url
        if url != "/":
            assert "&lt;script&gt;alert(" in page, url
    # The charts write labels from the grimoire (tool names) without a template's escaping.
    drawn = svg.bars([(SCRIPT, 1)], "t") + svg.timeline([{"id": SCRIPT}], "x", "t")
    assert "<script>" not in drawn and "&lt;script&gt;" in drawn


def test_without_write_every_post_is_refused_and_nothing_changes(filled, repo):
    before = (repo / "grimoires/loa/memory/decisions.yaml").read_bytes()
    last = filled["chain"][-1]
    client = _client(repo)
    for action, form in (("apply", {"outcome": "success"}), ("archive", {}), ("supersede", {"content": "x y z"})):
        response = client.post(f"/entry/{last}/{action}", data=form, follow_redirects=False)
        assert response.status_code == 403 and "read-only" in response.json()["error"]
    assert (repo / "grimoires/loa/memory/decisions.yaml").read_bytes() == before
    assert 'action="/entry/' not in client.get(f"/entry/{last}", headers=HTML).text  # no write forms offered


def _csrf(client: TestClient, entry_id: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', client.get(f"/entry/{entry_id}", headers=HTML).text).group(1)


def test_a_write_needs_the_csrf_token_and_lands_in_the_yaml(filled, repo):
    last = filled["chain"][-1]
    client = _client(repo, write=True)
    decisions = repo / "grimoires/loa/memory/decisions.yaml"
    before = decisions.read_bytes()
    for form in ({"outcome": "success"}, {"outcome": "success", "csrf": "forged"}):
        response = client.post(f"/entry/{last}/apply", data=form, follow_redirects=False)
        assert response.status_code == 403 and "CSRF" in response.json()["error"]
    assert decisions.read_bytes() == before
    token = _csrf(client, last)
    response = client.post(f"/entry/{last}/apply", data={"outcome": "success", "csrf": token}, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == f"/entry/{last}"
    assert _cli_json("show", last)["effectiveness"]["applications"] == 1
    assert "applications: 1" in git("diff", "--", str(decisions), cwd=repo)  # a diff ready to commit


def test_supersede_and_archive_through_the_page(filled, repo):
    last = filled["chain"][-1]
    client = _client(repo, write=True)
    token = _csrf(client, last)
    response = client.post(
        f"/entry/{last}/supersede",
        data={"content": "use postgres 17 for storage", "csrf": token},
        follow_redirects=False,
    )
    newest = response.headers["location"].rsplit("/", 1)[1]
    assert response.status_code == 303 and newest != last
    assert [e["id"] for e in _cli_json("show", newest, "--chain")][-2:] == [last, newest]
    response = client.post(f"/entry/{newest}/archive", data={"csrf": token}, follow_redirects=False)
    assert response.status_code == 303
    assert _cli_json("show", newest)["archived"] is True
    # A refused write is the library's own error, shown, with nothing written.
    response = client.post(f"/entry/{newest}/supersede", data={"content": "", "csrf": token}, headers=HTML)
    assert response.status_code == 400 and "error" in response.text


def test_a_due_task_is_on_the_overview_and_is_marked_done(repo, monkeypatch):
    with_preset(repo, "sabre")
    task = json.loads(mem("task", "add", "--due", "+1h", "--json", "--", "rotate the keys").out)["id"]
    monkeypatch.setenv("MEM_NOW", "2026-11-22T12:00:00Z")  # two hours later: due
    client = _client(repo, write=True)
    assert [t["id"] for t in client.get("/overview.json").json()["due"]] == [task]
    response = client.post(f"/entry/{task}/done", data={"csrf": _csrf(client, task)}, follow_redirects=False)
    assert response.status_code == 303 and _cli_json("show", task)["status"] == "done"
    assert client.get("/overview.json").json()["due"] == []


def test_the_learning_page_draws_the_tools(repo):
    records = [
        {
            "task_id": f"t{n}",
            "goal": "deploy",
            "agent": "a",
            "outcome": "success" if n % 4 else "failure",
            "started_at": f"2026-11-{20 + n // 4}T10:00:00Z",
            "steps": [
                {
                    "tool": "kubectl",
                    "status": "completed" if n % 4 else "failed",
                    "duration_ms": 100 + n,
                    "error": None if n % 4 else f"timeout after {n}s",
                }
            ],
        }
        for n in range(8)
    ]
    assert mem("observe", "-", input="".join(json.dumps(r) + "\n" for r in records)).code == 0
    client = _client(repo)
    data = client.get("/learning.json").json()
    assert data["tools"] == _cli_json("tools")
    assert data["days"] == {
        "kubectl": [
            {"day": "2026-11-20", "runs": 4, "successes": 3, "success_rate": 0.75, "p50_ms": 101.0, "p95_ms": 103.0},
            {"day": "2026-11-21", "runs": 4, "successes": 3, "success_rate": 0.75, "p50_ms": 105.0, "p95_ms": 107.0},
        ]
    }
    page = client.get("/learning", headers=HTML).text
    assert "success rate per tool" in page and ">kubectl</text>" in page and ">75%</text>" in page
    assert "success rate per day" in page and "day: 2026-11-21" in page
    assert "<code>timeout after &lt;n&gt;s</code>" in page  # an error shape, escaped


def _runs(day: str, count: int, tool: str = "kubectl") -> str:
    """`count` one-step records of `tool` started on `day`, as JSON lines."""
    return "".join(
        json.dumps(
            {
                "task_id": f"{day}-{n}",
                "outcome": "success",
                "started_at": f"{day}T10:00:00Z",
                "steps": [{"tool": tool, "status": "completed", "duration_ms": 100 + n}],
            }
        )
        + "\n"
        for n in range(count)
    )


def test_the_learning_page_reads_the_log_again_only_when_it_changed(repo):
    """Its runs per day are kept in the catalog under the log's inode, size and
    modification time: reading a log of 10,000 records took ~0.4 s every load
    of the page (issue 39). A grown log is read again."""
    import os

    from grimoire_cli.learning import tool_days

    assert mem("observe", "-", input=_runs("2026-11-20", 4)).code == 0
    client = _client(repo)
    first = client.get("/learning.json").json()["days"]
    assert [day["runs"] for day in first["kubectl"]] == [4]
    log = Grimoire.open(repo).config.local_dir / "observations.jsonl"
    seen = log.stat()
    log.write_bytes(log.read_bytes().replace(b'"kubectl"', b'"kubectX"'))  # the same inode and size
    os.utime(log, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    assert client.get("/learning.json").json()["days"] == first  # the kept answer: the log was not read
    assert mem("observe", "-", input=_runs("2026-11-21", 2, "helm")).code == 0
    grown = client.get("/learning.json").json()["days"]
    assert set(grown) == {"kubectX", "helm"} and grown["helm"][0]["day"] == "2026-11-21"
    assert grown == tool_days._computed(Grimoire.open(repo).store, 90)


def test_the_learning_page_names_the_tasks_of_structured_evidence(repo):
    from grimoire_cli import Grimoire

    assert mem("init", "--preset", "pms").code == 0
    evidence = [{"task_id": "task-1", "description": "two calls instead of ten"}, "task-2"]
    Grimoire.open(repo).learning.add_insight(
        "Batch the labels", applies_to={"contexts": ["shipping"]}, evidence=evidence
    )
    page = _client(repo).get("/learning", headers=HTML).text
    assert "<td>task-1, task-2</td>" in page


def test_the_tiers_page_draws_importance_decay(filled, repo):
    data = _client(repo).get("/tiers.json").json()["decay"]
    assert data["curves"]["10"][0] == 10 and data["curves"]["10"][-1] == data["floor"]
    page = _client(repo).get("/tiers", headers=HTML).text
    assert page.count('<polyline class="line') == 3 and "effective importance by age" in page


@pytest.mark.parametrize(
    "url",
    [
        "/static/../pyproject.toml",
        "/static/%2e%2e/%2e%2e/%2e%2e/pyproject.toml",
        "/static/..%2f..%2f..%2fpyproject.toml",
        "/entry/..%2F..%2F..%2Fpyproject.toml",
        "/entry/..%2F..%2F..%2Fpyproject.toml.json",
        "/entry/MEM-20261122-001%2F..%2F..%2Fx.json",
    ],
)
def test_no_url_reaches_outside_the_grimoire(filled, repo, url):
    response = _client(repo).get(url)
    assert response.status_code in (400, 404), url
    assert "[build-system]" not in response.text and "storage_dir" not in response.text


def test_a_page_served_under_another_host_name_is_refused(filled, repo):
    # A site rebinding its own name to 127.0.0.1 would send its Host: refused on loopback.
    response = _client(repo).get("/overview.json", headers={"host": "attacker.example"})
    assert response.status_code == 400
    assert response.headers["content-security-policy"] == CSP


def test_the_theme_link_goes_back_only_within_the_site(filled, repo):
    client = _client(repo)
    for back, expected in (("/review", "/review"), ("//evil.example/x", "/"), ("https://evil.example", "/")):
        response = client.get(f"/theme/dark?back={back}", follow_redirects=False)
        assert response.headers["location"] == expected
    client.cookies.set("theme", "dark")
    assert '<html lang="en" data-theme="dark">' in client.get("/", headers=HTML).text


def test_a_token_guards_every_page(filled, repo):
    client = _client(repo, token=TOKEN)
    assert client.get("/overview.json").status_code == 401
    assert client.get("/overview.json", headers={"authorization": "Bearer wrong-token"}).status_code == 401
    assert client.get("/overview.json", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
    response = client.get("/", headers=HTML, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/login"
    assert client.get("/static/style.css").status_code == 200  # the login page's own style
    assert client.post("/login", data={"token": "wrong-token"}).status_code == 401
    response = client.post("/login", data={"token": TOKEN}, follow_redirects=False)
    assert response.status_code == 303 and TOKEN not in response.headers["set-cookie"]
    assert "httponly" in response.headers["set-cookie"].lower()
    assert client.get("/", headers=HTML).status_code == 200  # the cookie the form set


def test_serving_off_loopback_needs_a_token(repo):
    result = mem("serve", "--host", "0.0.0.0")
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: --host 0.0.0.0 lets other machines read this grimoire (hint: give --token")
    assert len(result.err.splitlines()) == 1
    short = mem("serve", "--host", "0.0.0.0", "--token", "short")
    assert short.code == 2 and "shorter than 16" in short.err


def test_without_the_extra_mem_serve_says_how_to_install_it(repo):
    code = "import sys; sys.modules['jinja2'] = None; from grimoire_cli.cli.main import main; sys.exit(main(['serve']))"
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        done.stderr
        == "error: mem serve needs the package jinja2 (hint: install the extra: pip install 'grimoire-cli[web]')\n"
    )


def test_outside_a_grimoire_mem_serve_is_the_usual_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = mem("serve")
    assert result.code != 0 and result.err.startswith("error: ") and "serving" not in result.err


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.slow
def test_the_real_mem_serve_answers_a_browser(filled, repo):
    port = _free_port()
    mem_process("--version", cwd=repo)  # the console script exists
    server = subprocess.Popen(
        [str(mem_process.__globals__["Path"](sys.executable).parent / "mem"), "serve", "--port", str(port)],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        page = None
        for _ in range(100):
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/entry/{filled['hostile']}", headers=HTML)
                with urllib.request.urlopen(request, timeout=5) as response:
                    page, headers = response.read().decode(), response.headers
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        assert page is not None, server.stderr.read1().decode() if server.poll() is not None else "no answer"
        assert headers["content-security-policy"] == CSP and "&lt;script&gt;alert(" in page
    finally:
        server.terminate()
        _, err = server.communicate(timeout=10)
    assert f"serving http://127.0.0.1:{port}/ (read-only)" in err.decode()


def test_a_port_in_use_is_one_error_line(repo):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = mem("serve", "--port", str(port))
    assert result.code == 2
    assert result.err == (
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use (hint: choose another --port, or stop what uses it)\n"
    )


def test_a_day_without_runs_is_a_gap_in_its_line():
    drawn = svg.curves({"a": [1, 2, None, 3, 4], "b": [None, None, 5, None, None]}, "t", x_label="day", y_label="%")
    assert drawn.count("<polyline") == 2 and drawn.count("<circle") == 1  # a's two stretches, b's lone point
    assert "nothing yet" in svg.curves({"a": [None, None]}, "t", x_label="day", y_label="%")


@pytest.mark.parametrize("token", [None, "a-token-long-enough-for-the-server"])
def test_a_stopped_server_leaves_no_thread_behind(repo, token):
    """The app's worker thread outlived the server: a process that had served (the test suite, an agent
    embedding the app) kept a thread, and a process with threads never forks the parallel parser's workers."""
    with TestClient(build_app(lambda: Grimoire.open(repo), token=token), base_url=LOCAL) as client:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        assert client.get("/overview.json", headers=headers).status_code == 200
        assert [t.name for t in threading.enumerate() if t.name.startswith("grimoire-web")]
    assert [t.name for t in threading.enumerate() if t.name.startswith("grimoire-web")] == []


def test_a_server_waiting_for_the_next_request_holds_no_snapshot_of_the_catalog(filled, repo):
    """A search's reads see one snapshot of the catalog; it ends with the search, so the server holds none
    while it waits for the next request (the WAL other processes write to is checkpointed meanwhile)."""
    client = _client(repo)
    assert client.get("/search?q=postgres").status_code == 200
    assert not wal_pinned(repo)
