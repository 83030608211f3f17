"""`mem serve` in a real browser (issue 39, part 4): headless Chromium from the
system's packages, driven by Selenium through the system's chromedriver,
against the real `mem serve` in a subprocess. Every page loads without a
console error; search shows what `mem query` returns; the chain timeline shows
both ends; a write lands in the YAML only with --write; a `<script>` memory is
inert. Screenshots of every page (1280 and 360 px, light and dark) are kept.

Without Chromium the test is skipped, except where $CI is set: there a missing
browser is a failure (`.ci/run` installs it)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, git, mem

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCRIPT = "<script>alert('owned')</script>"
WIDTHS = (1280, 360)
THEMES = ("light", "dark")
LATER = "2026-11-22T12:00:00Z"  # two hours after conftest's NOW: the task added `--due +1h` is due


def _browser_or_skip() -> None:
    """Skip (locally) or fail (in CI) when the system's Chromium or Selenium is missing."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the Python package selenium (the `test` extra)")
    if not missing:
        return
    reason = f"no browser to test in: {', '.join(missing)} missing (apt-get install chromium chromium-driver)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must have it (.ci/run installs it)")
    pytest.skip(reason)


def _add(*args: str, env: dict | None = None) -> str:
    result = mem("add", "--json", *args, env=env)
    assert result.code == 0, result.err
    return json.loads(result.out)["id"]


WEEK_AGO = "2026-11-15T09:00:00Z"  # a week before conftest's NOW: long-term, past the hot tier's 48 h
DUPLICATE = "the deploy runner needs a restart after the nightly build, case {n}"


@pytest.fixture
def filled(sabre) -> dict[str, Any]:
    """A committed grimoire with something on every page: a supersede chain of
    three, a related memory, an archived one, a `<script>` memory, a task due
    at LATER, a review queue, long-term entries and six days of executions
    learnt from."""
    related = _add("-c", "learning", "--", "the storage migration needs a maintenance window")
    first = _add("-c", "decision", "--", "use postgres for the storage layer")
    # The middle of the chain, related to the learning: its page has a timeline and a related memory.
    second = _add("-c", "decision", "--supersedes", first, "--related", related, "--", "use postgres 15 for storage")
    third = json.loads(mem("supersede", "--json", second, "--", "use postgres 16 for the storage layer").out)["id"]
    gone = _add("-c", "learning", "--", "an old note about the build cache")
    assert mem("archive", gone, "--no-commit").code == 0
    hostile = _add("-c", "learning", "--", f"a memory holding {SCRIPT} as text")
    task = json.loads(mem("task", "add", "--due", "+1h", "--json", "--", "rotate the storage keys").out)["id"]
    seeded = {"chain": [first, second, third], "related": related, "hostile": hostile, "task": task, "gone": gone}
    seeded |= _review_queue() | _learnt_from_executions()
    git("add", "-A", cwd=sabre)
    git("commit", "-q", "-m", "memories", cwd=sabre)
    return seeded


def _review_queue() -> dict[str, Any]:
    """What `mem review` lists, one of each: an ineffective decision (0 of 3
    helped), a low one (1 of 3), a learning expiring in 3 days, a near-duplicate
    pair (written a week ago, so the tiers page has long-term entries too)."""
    old = {"MEM_NOW": WEEK_AGO}
    pair = [_add("-c", "learning", "--", DUPLICATE.format(n=n), env=old) for n in (1, 2)]
    _add("-c", "preference", "--", "prefer small commits with clear messages", env=old)
    outcomes = {"ineffective": ("--failure",) * 3, "low": ("--success", "--failure", "--failure")}
    rated = {}
    for name, applied in outcomes.items():
        rated[name] = _add("-c", "decision", "--", f"a decision that turned out {name}: cache the carrier rates")
        for outcome in applied:
            assert mem("apply", rated[name], outcome).code == 0
    expiring = _add("-c", "learning", "--ttl", "3d", "--", "the staging certificate is renewed by hand this week")
    return {"duplicates": pair, "rated": rated, "expiring": expiring}


def _learnt_from_executions() -> dict[str, Any]:
    """240 generated execution records, one every 36 minutes over the six days
    before NOW, through `mem observe`, then `mem learn` (the insight category
    from the pms preset)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from executions import generate

    start = datetime(2026, 11, 16, tzinfo=UTC)
    records = generate(240, start=start)
    for n, record in enumerate(records):
        record["started_at"] = (start + timedelta(minutes=36 * n)).strftime("%Y-%m-%dT%H:%M:%SZ")
    log = "\n".join(json.dumps(record) for record in records) + "\n"
    assert mem("observe", "-", input=log).code == 0
    assert mem("init", "--preset", "pms").code == 0
    learnt = mem("learn", "--json")
    assert learnt.code == 0, learnt.err
    return {"tools": sorted({step["tool"] for record in records for step in record["steps"]})}


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def served(repo: Path, *options: str) -> Iterator[str]:
    """The real `mem serve` (the installed console script) on a free port; yields its base URL."""
    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "mem"), "serve", "--port", str(port), *options],
        cwd=repo,
        env={**os.environ, "MEM_NOW": LATER},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(base, server)
        yield base
    finally:
        server.terminate()
        server.communicate(timeout=10)


def _wait_for(base: str, server: subprocess.Popen) -> None:
    for _ in range(200):
        if server.poll() is not None:
            pytest.fail(f"mem serve stopped: {server.stderr.read().decode() if server.stderr else ''}")
        try:
            with urllib.request.urlopen(f"{base}/overview.json", timeout=5):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    pytest.fail("mem serve did not answer within 10 s")


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium through the system's chromedriver (Selenium never downloads one)."""
    _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)  # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _visit(driver: Any, url: str) -> None:
    """Load `url` and fail on anything the page logged as an error (CSP violations, failed loads, script errors)."""
    driver.get(url)
    errors = [line for line in driver.get_log("browser") if line["level"] == "SEVERE"]
    assert errors == [], f"{url}: {errors}"


def _shot(driver: Any, folders: list[Path], name: str, width: int) -> None:
    """A full-page screenshot at `width` CSS pixels (the mobile layout at 360)."""
    metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    driver.refresh()
    height = driver.execute_script("return document.documentElement.scrollHeight")
    clip = {"x": 0, "y": 0, "width": width, "height": min(height, 4000), "scale": 1}
    png = driver.execute_cdp_cmd("Page.captureScreenshot", {"captureBeyondViewport": True, "clip": clip})["data"]
    for folder in folders:
        (folder / f"{name}.png").write_bytes(base64.b64decode(png))
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _linked_ids(driver: Any, selector: str) -> list[str]:
    hrefs = driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(a => a.getAttribute('href'))", selector
    )
    return [href.removeprefix("/entry/") for href in hrefs]


def _shot_folders(tmp_path: Path) -> list[Path]:
    """tmp_path's folder, and benchmarks/.data/screenshots/ when that (git-ignored) folder exists."""
    folders = [tmp_path / "screenshots"]
    kept = ROOT / "benchmarks" / ".data" / "screenshots"
    if kept.is_dir():
        folders.append(kept)
    for folder in folders:
        folder.mkdir(exist_ok=True)
    return folders


@pytest.mark.slow
def test_every_page_in_a_real_browser(filled, repo, browser, tmp_path):
    second = filled["chain"][1]
    pages = {
        "overview": "/",
        "search": "/search?q=postgres+storage",
        "entry": f"/entry/{second}",
        "entry-script": f"/entry/{filled['hostile']}",
        "archive": "/archive",
        "review": "/review",
        "tiers": "/tiers",
        "learning": "/learning",
    }
    folders = _shot_folders(tmp_path)
    print(f"\nscreenshots: {', '.join(map(str, folders))}")
    with served(repo) as base:
        for theme in THEMES:
            _visit(browser, f"{base}/theme/{theme}?back=/")  # the theme link a person clicks
            assert browser.find_element("css selector", "html").get_attribute("data-theme") == theme
            for name, url in pages.items():
                _visit(browser, base + url)
                for width in WIDTHS:
                    _shot(browser, folders, f"{name}-{width}-{theme}", width)

        _overview_shows_what_is_due_and_expiring(browser, base, filled)
        _search_ranks_as_mem_query(browser, base + pages["search"])
        _entry_shows_its_chain_and_related(browser, base + pages["entry"], filled)
        _archive_shows_the_reason(browser, base, filled["gone"])
        _review_lists_every_section(browser, base, filled)
        _tiers_split_hot_and_long_term(browser, base)
        _learning_draws_tools_days_errors_patterns_insights(browser, base, filled["tools"])

        for name in ("entry", "review", "learning", "overview"):
            _tables_fit_a_phone(browser, base + pages[name])
        for name in ("overview", "learning"):
            for width in WIDTHS:
                _card_charts_are_readable(browser, base + pages[name], width)

        # The `<script>` memory is text: shown, never run.
        _visit(browser, base + pages["entry-script"])
        assert SCRIPT in browser.find_element("css selector", "p.summary").text
        assert browser.execute_script("return document.querySelectorAll('main script').length") == 0
        _no_alert(browser)


def _main_text(driver: Any) -> str:
    return driver.find_element("tag name", "main").text


def _count(driver: Any, selector: str) -> int:
    return driver.execute_script("return document.querySelectorAll(arguments[0]).length", selector)


def _overview_shows_what_is_due_and_expiring(driver: Any, base: str, filled: dict[str, Any]) -> None:
    _visit(driver, base + "/")
    shown = _main_text(driver)
    assert "rotate the storage keys" in shown  # the task due at LATER
    assert "the staging certificate is renewed by hand this week" in shown  # expiring within 7 days
    assert _count(driver, "svg.chart rect.bar") >= 12  # five charts of bars: categories, states, tiers, scopes


def _search_ranks_as_mem_query(driver: Any, url: str) -> None:
    expected = [hit["id"] for hit in json.loads(mem("query", "postgres storage", "--json").out)]
    _visit(driver, url)
    assert expected and _linked_ids(driver, "table.entries tbody td:first-child a") == expected


def _entry_shows_its_chain_and_related(driver: Any, url: str, filled: dict[str, Any]) -> None:
    """The middle of the chain shows both ends, and its related memory."""
    _visit(driver, url)
    assert _linked_ids(driver, "svg a") == filled["chain"]
    assert _clipped_texts(driver, "svg.chart") == []  # every id and date of the timeline drawn whole
    assert filled["related"] in _linked_ids(driver, "table.entries a")


def _clipped_texts(driver: Any, selector: str) -> list[str]:
    """The texts of the charts at `selector` that reach past their viewBox (cut off where drawn)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).flatMap(svg => {"
        "  const box = svg.viewBox.baseVal;"
        "  return Array.from(svg.querySelectorAll('text')).filter(t => {"
        "    const b = t.getBBox(); return b.x < box.x || b.x + b.width > box.x + box.width;"
        "  }).map(t => t.textContent);"
        "})",
        selector,
    )


def _overlapping_labels(driver: Any) -> list[list[str]]:
    """Pairs of a line chart's end labels whose drawn boxes overlap."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('svg.chart')).flatMap(svg => {"
        "  const boxes = Array.from(svg.querySelectorAll('text[class*=line-label]')).map(t => [t, t.getBBox()]);"
        "  return boxes.flatMap(([t, a], i) => boxes.slice(i + 1)"
        "    .filter(([, b]) => a.y < b.y + b.height && b.y < a.y + a.height)"
        "    .map(([u]) => [t.textContent, u.textContent]));"
        "})"
    )


def _tables_fit_a_phone(driver: Any, url: str) -> None:
    """At 360 px no table header breaks mid-word ("cat egory") and no id
    wraps: a table wider than the screen scrolls in its own box, not the page."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 360, "height": 800, "deviceScaleFactor": 1, "mobile": True}
    )
    try:
        _visit(driver, url)
        broken = driver.execute_script(
            "const lines = el => { const r = document.createRange(); r.selectNodeContents(el);"
            "  return new Set(Array.from(r.getClientRects()).map(b => Math.round(b.top))).size; };"
            "return Array.from(document.querySelectorAll('main th, main td:first-child a'))"
            "  .filter(el => el.textContent.trim() && lines(el) > 1).map(el => el.textContent);"
        )
        assert broken == [], f"{url}: {broken}"
        assert driver.execute_script("return document.documentElement.scrollWidth") <= 360, url
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _card_charts_are_readable(driver: Any, url: str, width: int) -> None:
    """The charts in a page's cards draw their 12 px text at 9.5 px or more
    (a 640-wide chart in a ~330 px card drew it at ~6), each text whole."""
    metrics = {"width": width, "height": 800, "deviceScaleFactor": 1, "mobile": width < 600}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    try:
        _visit(driver, url)
        sizes = driver.execute_script(
            "return Array.from(document.querySelectorAll('.grid svg.chart')).map(svg =>"
            "  12 * svg.getBoundingClientRect().width / svg.viewBox.baseVal.width)"
        )
        assert sizes and min(sizes) >= 9.5, f"{url} at {width} px: text drawn at {sizes}"
        assert _clipped_texts(driver, ".grid svg.chart") == [], f"{url} at {width} px"
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _archive_shows_the_reason(driver: Any, base: str, gone: str) -> None:
    _visit(driver, base + "/archive")
    assert _linked_ids(driver, "table.entries tbody td:first-child a") == [gone]
    assert "archived: manual" in _main_text(driver)


def _review_lists_every_section(driver: Any, base: str, filled: dict[str, Any]) -> None:
    """Ineffective, low, expiring and the near-duplicate pair, each on its row."""
    _visit(driver, base + "/review")
    rows = driver.execute_script(
        "return Array.from(document.querySelectorAll('table.entries tbody tr'))"
        ".map(tr => [tr.querySelector('a').getAttribute('href'), tr.lastElementChild.innerText])"
    )
    why = {href.removeprefix("/entry/"): text for href, text in rows}
    assert why[filled["rated"]["ineffective"]] == "ineffective"
    assert why[filled["rated"]["low"]] == "low"
    assert why[filled["expiring"]] == "expiring"
    first, second = filled["duplicates"]
    near = why.get(second) or why[first]
    assert near.startswith("near-duplicate") and (first in near or second in near), near


def _tiers_split_hot_and_long_term(driver: Any, base: str) -> None:
    _visit(driver, base + "/tiers")
    split = driver.find_element("css selector", "svg.chart").text.split()
    counts = dict(zip(split[::2], split[1::2], strict=True))
    assert int(counts["hot"]) > 0 and int(counts["long-term"]) == 3, counts
    assert _count(driver, "svg.chart polyline") == 3  # the decay of three importances
    assert _clipped_texts(driver, "svg.chart") == [] and _overlapping_labels(driver) == []


def _learning_draws_tools_days_errors_patterns_insights(driver: Any, base: str, tools: list[str]) -> None:
    _visit(driver, base + "/learning")
    shown = _main_text(driver)
    assert "nothing yet" not in shown and "no errors observed" not in shown
    assert "no patterns yet" not in shown and "no insights yet" not in shown
    assert _count(driver, ".grid svg.chart rect.bar") >= 3 * len(tools)  # runs, success, p50 (and p95) per tool
    assert _count(driver, ".grid svg.chart polyline") == 8  # four tools over six days, success rate and p95
    assert "timeout after <n>s on <path>" in shown  # an error shape
    assert _clipped_texts(driver, "svg.chart") == [] and _overlapping_labels(driver) == []
    insights = driver.find_elements("xpath", "//h2[.='Insights']/following-sibling::table[1]//tbody/tr")
    kinds = {row.find_elements("tag name", "td")[1].text.split(":")[0] for row in insights}
    assert kinds == {"best_practice", "warning"}, kinds  # what `mem learn` wrote, with its evidence
    assert all(row.find_elements("tag name", "td")[2].text.startswith("task-") for row in insights)


def _no_alert(driver: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 (reading it is what raises when none is open)


def _wait_until(driver: Any, done: Any) -> None:
    """Until `done(driver)` holds: a submitted form's page loads after submit() returns."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10, ignored_exceptions=[StaleElementReferenceException]).until(done)


def _record_success_by_hand(driver: Any, base: str, entry_id: str) -> None:
    """Post the 'applied: it helped' form as a page of the read-only view would,
    had it one (built in the page, since that view shows no write forms)."""
    driver.execute_script(
        "const form = document.createElement('form');"
        "form.method = 'post'; form.action = arguments[0];"
        "for (const [k, v] of [['csrf', 'none'], ['outcome', 'success']]) {"
        "  const field = document.createElement('input'); field.name = k; field.value = v; form.appendChild(field);"
        "}"
        "document.body.appendChild(form); form.submit();",
        f"{base}/entry/{entry_id}/apply",
    )


@pytest.mark.slow
def test_a_write_lands_in_the_yaml_only_with_write(filled, repo, browser):
    third = filled["chain"][2]
    with served(repo) as base:
        _visit(browser, f"{base}/entry/{third}")
        assert browser.find_elements("css selector", "form.write") == []  # no write form to offer
        _record_success_by_hand(browser, base, third)
        _wait_until(browser, lambda d: d.current_url.endswith("/apply"))
        assert "this view is read-only" in browser.find_element("tag name", "main").text
        refused = [line["message"] for line in browser.get_log("browser") if line["level"] == "SEVERE"]
        assert len(refused) == 1 and "status of 403" in refused[0]  # the refusal, the only error
    assert git("status", "--porcelain", cwd=repo) == ""

    with served(repo, "--write") as base:
        _visit(browser, f"{base}/entry/{third}")
        browser.find_element("css selector", "form.write button[value=success]").click()
        _wait_until(browser, lambda d: "1 of 1 applications helped" in d.find_element("tag name", "main").text)
        assert browser.current_url == f"{base}/entry/{third}"  # redirected back to the entry
    # A diff ready to commit: the one category file, the outcome added to the entry.
    assert git("diff", "--name-only", cwd=repo) == "grimoires/loa/memory/decisions.yaml\n"
    added = [line for line in git("diff", "-U0", cwd=repo).splitlines() if line.startswith("+ ")]
    assert added == ["+  effectiveness:", "+    applications: 1", "+    successes: 1"] + added[3:], added


def test_without_chromium_it_is_skipped_locally_and_fails_in_ci(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.delenv("CI", raising=False)
    # The driver too may be missing here (a machine without chromium-driver): the message names both then.
    with pytest.raises(pytest.skip.Exception, match=r"no-chromium(, \S+chromedriver)? missing"):
        _browser_or_skip()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI must have it \(.ci/run installs it\)"):
        _browser_or_skip()
