"""A team of clones of one bare remote, working as a team works (issue 42).

Each round every clone, on the state it last pulled, adds memories on the
same day (so ids collide), supersedes and archives one of its own, applies a
few of anyone's and links some with `related`; then the clones commit, pull
(merge or rebase, at random), and push, in random order; some skip a round
and write against ids several rounds stale. Some work goes on a branch of
its own, pushed: another clone may cherry-pick its first commit onto main
before its owner merges the branch (the pick renumbered where main had
published the same id, the merge then meeting one memory under two ids), and
a server may merge a pushed branch as a forge merges a pull request: git's
line merge, no mem driver and no hooks. The model holds each memory by
its content, which is unique, so it can tell which memory an id names, and
the applies each line of history holds (joined as git joins them).
After every pull, merge and pick `mem validate` is clean (I1) and each memory
carries exactly the applies its line holds; after the last sync every
memory is stored once, each supersede, apply, archive and reference is on
the memory meant when it was written, and the clones are byte-identical.

A clone also supersedes another's memory now and then, by the id it last
pulled (CROSSING). CI runs 4 clones x 4 rounds, seeds 1, 3, 9 and 21 (9
and 21 without crossing); `make soak` 8 x 10 (HYPOTHESIS_PROFILE=soak).
TEAM_SEEDS=... runs others.
"""

from __future__ import annotations

import os
import random
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import git, mem_process

from grimoire_cli import Grimoire

SOAK = os.environ.get("HYPOTHESIS_PROFILE") == "soak"
CLONES, ROUNDS = (8, 10) if SOAK else (4, 4)
BRANCHING = 0.25  # how often a clone's round of work goes on a pushed branch of its own
PICKING = 0.4  # how often a clone cherry-picks a pushed branch's first commit onto main
SERVING = float(os.environ.get("TEAM_SERVING", "0.3"))  # how often the server merges a pushed branch (a pull request)
NAMING = 0.3  # how often a clone's round remembers a fact in a category it names on first use (new_categories)
NEW_CATEGORIES = ("research", "runbook", "ops")  # a small pool: two clones name the same one as often as different ones
CROSSING = 0.3  # how often a clone supersedes another's memory instead of its own (one no one has ended)
# TEAM_SEEDS=3,4,5 to try others; "9:0" runs seed 9 with no crossing, the sequence it had before crossing was added
# (seeds 9 and 21 found fixes 7 and 8, and keep showing them so).
SEEDS = os.environ.get("TEAM_SEEDS", "1,3,9:0,21:0").split(",")
WORDS = (
    "deploy",
    "cache",
    "schema",
    "runner",
    "queue",
    "index",
    "branch",
    "lint",
    "review",
    "kafka",
    "redis",
    "nginx",
    "proxy",
    "vault",
    "docker",
    "helm",
    "terraform",
    "grafana",
    "loki",
    "tempo",
    "celery",
    "django",
    "flask",
    "react",
    "webpack",
    "babel",
    "eslint",
    "mypy",
    "ruff",
    "pytest",
    "tox",
    "nox",
    "poetry",
    "pip",
    "wheel",
    "sdist",
    "cython",
    "numpy",
)


@dataclass
class Memory:
    """What should be true of one memory, whoever holds it."""

    author: str
    archived: bool = False
    superseded_by: str | None = None  # contents, never ids: ids are what the merges may change
    supersedes: str | None = None
    applications: int = 0
    successes: int = 0
    related: list[str] = field(default_factory=list)


def mem(clone: Path, *args: str) -> subprocess.CompletedProcess:
    """conftest's `mem_process` in `clone`, its output as text."""
    done = mem_process(*args, cwd=clone)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


class Team:
    def __init__(self, tmp_path: Path, seed: int, crossing: float = CROSSING):
        self.rng = random.Random(seed)
        self.crossing = crossing
        self.crossing_rng = random.Random(seed + 1000)  # its own: with no crossing, the rest draws as it did before
        self.naming_rng = random.Random(seed + 2000)  # its own too, for the same reason
        self.remote = tmp_path / "remote.git"
        git("init", "-q", "--bare", "-b", "main", str(self.remote), cwd=tmp_path)
        first = tmp_path / "clone0"
        git("clone", "-q", str(self.remote), str(first), cwd=tmp_path)
        assert mem(first, "init").returncode == 0
        config = first / ".loa.config.yaml"  # a category named on first use is added to the config, tracked
        config.write_text(
            config.read_text().replace("memory_schema:\n", "memory_schema:\n  new_categories: tracked\n", 1)
        )
        git("add", "-A", cwd=first)
        git("commit", "-qm", "grimoire", cwd=first)
        git("push", "-q", "origin", "HEAD:main", cwd=first)
        self.clones = [first] + [tmp_path / f"clone{i}" for i in range(1, CLONES)]
        for clone in self.clones[1:]:
            git("clone", "-q", str(self.remote), str(clone), cwd=tmp_path)
        for clone in self.clones:
            assert mem(clone, "hooks", "install").returncode == 0
        self.memories: dict[str, Memory] = {}
        self.counter = 0
        self.branches: dict[str, Path] = {}  # pushed, not yet merged into main: branch -> its owner's clone
        self.picked: set[str] = set()  # branches whose first commit is on main already
        self.pending: set[str] = set()  # contents superseded or archived on an unmerged branch
        self.claimed: set[str] = set()  # contents anyone superseded or archived: no one ends them again
        self.applied: list[tuple[str, bool]] = []  # (content, success) of every apply
        # The applies (indexes into `applied`) each line of history holds, as git should combine them:
        # (clone, branch) -> applies; the remote's main; a pull or merge takes the union of what it joins.
        self.held: dict[tuple[str, str], set[int]] = {}
        self.published: set[int] = set()
        self.by_commit: dict[str, set[int]] = {}  # an apply commit's message -> the applies it made
        self.pushed: dict[str, set[int]] = {}  # a pushed branch -> the applies it holds
        self.server = tmp_path / "server"  # merges pull requests as a forge does: git alone, no mem, no hooks
        git("clone", "-q", str(self.remote), str(self.server), cwd=tmp_path)

    # -- one clone's work, on the state it last pulled ---------------------------

    def view(self, clone: Path) -> dict[str, object]:
        """content -> entry, as this clone sees them now (active ones)."""
        return {
            e.content: e for e in Grimoire.open(clone).entries() if not e.archived and not e.data.get("superseded_by")
        }

    def text(self, who: str) -> str:
        self.counter += 1
        words = self.rng.sample(WORDS, 5)
        return f"{who} noted #{self.counter}: {' '.join(words)} {self.counter * 7919 % 100003}"

    def work(self, clone: Path, who: str) -> None:
        g = Grimoire.open(clone)
        seen = self.view(clone)
        for _ in range(self.rng.randint(2, 5)):
            content = self.text(who)
            related = []
            if seen and self.rng.random() < 0.4:
                other = self.rng.choice(sorted(seen))
                related = [other]
            g.add(content, "fact", related=[seen[c].id for c in related])
            self.memories[content] = Memory(who, related=related)
        if self.naming_rng.random() < NAMING:
            # Two clones adding categories each append to the config's categories: the config's own merge
            # driver unites them (git/config_merge.py; issue 37's team seam), or every later pull stops.
            content = self.text(who)
            g.facts.remember(f"{who}.note{self.counter}", content, category=self.naming_rng.choice(NEW_CATEGORIES))
            self.memories[content] = Memory(who)
        seen = self.view(clone)
        own = self.own(seen, who)
        if own:
            old = self.rng.choice(own)
            # Another's memory, by the id this clone last pulled (issue 42: a stale clone's supersede of a
            # memory renumbered since must land on that memory, not on the one that took its id).
            others = sorted(c for c in seen if self.memories[c].author != who and c not in self.claimed | self.pending)
            if others and self.crossing_rng.random() < self.crossing:
                old = self.crossing_rng.choice(others)
            new = self.text(who)
            g.supersede(seen[old].id, new)
            self.memories[old].superseded_by = new
            self.memories[new] = Memory(who, supersedes=old)
            self.ended(clone, old)
        git("add", "-A", cwd=clone)
        git("commit", "-qm", f"{who}'s memories", cwd=clone)
        seen = self.view(clone)
        first = len(self.applied)
        for content in self.rng.sample(sorted(seen), min(len(seen), self.rng.randint(0, 3))):
            success = self.rng.random() < 0.5
            # Each apply at its own second, as people work (ids stay same-day): the merge takes two identical
            # effectiveness records, last_applied included, for one change seen twice (a cherry-pick).
            self.counter += 1
            g.runtime.fixed_now = datetime(2026, 11, 22, 10, tzinfo=UTC) + timedelta(seconds=self.counter)
            g.apply(seen[content].id, success)
            self.line(clone).add(len(self.applied))
            self.applied.append((content, success))
            self.memories[content].applications += 1
            self.memories[content].successes += int(success)
        git("add", "-A", cwd=clone)
        message = f"{who} applied memories ({len(self.by_commit)})"  # a pick of it carries these applies
        self.by_commit[message] = {i for i in self.line(clone) if i >= first}
        git("commit", "-qm", message, "--allow-empty", cwd=clone)
        own = self.own(seen, who)
        if own and self.rng.random() < 0.7:
            gone = self.rng.choice(own)
            g.archive([seen[gone].id], reason="manual")  # its own commit
            self.memories[gone].archived = True
            self.ended(clone, gone)

    def own(self, seen: dict[str, object], who: str) -> list[str]:
        """This clone's active memories it may still end: none a branch of its ended already."""
        return sorted(c for c in seen if self.memories[c].author == who and c not in self.pending | self.claimed)

    def ended(self, clone: Path, content: str) -> None:
        self.claimed.add(content)  # two successors of one memory are a conflict a person settles (docs/teams.md)
        if git("branch", "--show-current", cwd=clone).strip() != "main":
            self.pending.add(content)

    # -- a branch of one's own, and a cherry-pick of it -------------------------------

    def work_on_branch(self, clone: Path, who: str) -> None:
        """A round's work on a new branch, pushed; main stays where it was."""
        self.counter += 1
        branch = f"{who}-topic{self.counter}"
        git("checkout", "-q", "-b", branch, cwd=clone)
        self.held[(clone.name, branch)] = set(self.held.get((clone.name, "main"), set()))
        self.work(clone, who)
        git("push", "-q", "origin", branch, cwd=clone)
        self.pushed[branch] = set(self.line(clone))
        git("checkout", "-q", "main", cwd=clone)
        self.branches[branch] = clone

    def pick(self, clone: Path) -> None:
        """Cherry-pick another's branch's first commit (its memories and a supersede) onto main."""
        others = sorted(b for b, owner in self.branches.items() if owner != clone and b not in self.picked)
        if not others:
            return
        branch = self.rng.choice(others)
        git("fetch", "-q", "origin", cwd=clone)
        base = git("merge-base", "HEAD", f"origin/{branch}", cwd=clone).strip()
        first = git("rev-list", "--reverse", f"{base}..origin/{branch}", cwd=clone).split()[0]
        picked = subprocess.run(["git", "cherry-pick", first], cwd=clone, capture_output=True, text=True)
        if picked.returncode != 0 and "is now empty" in picked.stderr:
            # Its memories are on main already, under main's ids (an earlier branch of the same owner, merged):
            # the merge found them the same memories, and git has nothing left to pick.
            git("cherry-pick", "--skip", cwd=clone)
        else:
            assert picked.returncode == 0, f"{clone.name}: git cherry-pick {branch}:\n{picked.stdout}{picked.stderr}"
            # The branch's first commit past the merge base may be one its owner made on main, unpushed.
            self.line(clone).update(
                self.by_commit.get(git("log", "-1", "--format=%s", first, cwd=clone).strip(), set())
            )
        checked = mem(clone, "validate")
        assert checked.returncode == 0, f"{clone.name} after picking {branch}:\n{checked.stdout}{checked.stderr}"
        self.counted(clone, f"picking {branch}")
        self.picked.add(branch)

    def serve(self) -> None:
        """The server merges a pushed branch into main, as a forge merges a pull request: git's own line
        merge, no mem driver and no hooks (a conflict leaves the pull request open). The clones that pull
        it repair what it left (an id used twice) with their hooks."""
        open_ = sorted(self.branches)
        if not open_:
            return
        branch = self.rng.choice(open_)
        git("fetch", "-q", "origin", cwd=self.server)
        git("checkout", "-q", "-B", "main", "origin/main", cwd=self.server)
        merged = subprocess.run(
            ["git", "merge", "-q", "--no-edit", f"origin/{branch}"], cwd=self.server, capture_output=True, text=True
        )
        if merged.returncode != 0:
            git("merge", "--abort", cwd=self.server)
            return
        git("push", "-q", "origin", "HEAD:main", cwd=self.server)
        self.published |= self.pushed[branch]

    def merge_branches(self, clone: Path, every: bool = False) -> None:
        """The owner merges its pushed branches into its main (some now, all at the end)."""
        for branch in sorted(b for b, owner in self.branches.items() if owner == clone):
            if every or self.rng.random() < 0.5:
                merged = subprocess.run(
                    ["git", "merge", "-q", "--no-edit", branch], cwd=clone, capture_output=True, text=True
                )
                assert merged.returncode == 0, f"{clone.name}: git merge {branch}:\n{merged.stdout}{merged.stderr}"
                checked = mem(clone, "validate")
                assert checked.returncode == 0, (
                    f"{clone.name} after merging {branch}:\n{checked.stdout}{checked.stderr}"
                )
                self.line(clone).update(self.held.pop((clone.name, branch), set()))
                self.counted(clone, f"merging {branch}")
                del self.branches[branch]
        if not any(owner == clone for owner in self.branches.values()):
            self.pending -= {c for c, m in self.memories.items() if m.author == clone.name}

    # -- sync ----------------------------------------------------------------------

    def sync(self, clone: Path) -> None:
        for _ in range(10):
            how = self.rng.choice(["--no-rebase", "--rebase"])
            pulled = subprocess.run(
                ["git", "pull", "-q", how, "--no-edit", "origin", "main"], cwd=clone, capture_output=True, text=True
            )
            assert pulled.returncode == 0, f"{clone.name}: git pull {how} failed:\n{pulled.stdout}{pulled.stderr}"
            checked = mem(clone, "validate")
            assert checked.returncode == 0, (
                f"{clone.name} after pull {how}: mem validate:\n{checked.stdout}{checked.stderr}"
            )
            self.line(clone).update(self.published)
            self.counted(clone, f"pull {how}")
            pushed = subprocess.run(
                ["git", "push", "-q", "origin", "HEAD:main"], cwd=clone, capture_output=True, text=True
            )
            if pushed.returncode == 0:
                self.published = set(self.line(clone))
                return
        raise AssertionError(f"{clone.name} could not push")

    def line(self, clone: Path) -> set[int]:
        """The applies the branch the clone has checked out holds."""
        branch = git("branch", "--show-current", cwd=clone).strip()
        return self.held.setdefault((clone.name, branch), set())

    def counted(self, clone: Path, after: str) -> None:
        """Each memory the clone holds carries exactly the applies its line of history holds: the first
        git operation that lands an apply on another memory, drops one or counts one twice fails here."""
        want: dict[str, tuple[int, int]] = {}
        for index in self.line(clone):
            content, success = self.applied[index]
            runs, wins = want.get(content, (0, 0))
            want[content] = (runs + 1, wins + int(success))
        wrong = []
        for entry in Grimoire.open(clone).store.entries(include_archive=True):
            counts = entry.data.get("effectiveness") or {}
            got = (counts.get("applications", 0), counts.get("successes", 0))
            if got != want.get(entry.content, (0, 0)):
                wrong.append(
                    f"{entry.id} {entry.content!r}: (applications, successes) {got} != {want.get(entry.content, (0, 0))}"
                )
        assert not wrong, f"{clone.name} after {after}:\n" + "\n".join(wrong)

    # -- the final state -------------------------------------------------------------

    def check(self) -> None:
        for clone in self.clones:
            self.merge_branches(clone, every=True)
            self.sync(clone)
        for clone in self.clones:  # the last pushes reach every clone
            git("pull", "-q", "--no-rebase", "origin", "main", cwd=clone)
        files = [
            {
                p.relative_to(c).as_posix(): p.read_bytes()
                for p in sorted((c / "grimoires").rglob("*.yaml"))
                if "local" not in p.name
            }
            for c in self.clones
        ]
        entries = list(Grimoire.open(self.clones[0]).store.entries(include_archive=True))
        by_content: dict[str, list] = {}
        for entry in entries:
            by_content.setdefault(entry.content, []).append(entry)
        lost = sorted(set(self.memories) - set(by_content))
        doubled = sorted(c for c, group in by_content.items() if len(group) > 1)
        assert not lost and not doubled, f"lost {lost}, stored twice {doubled}"
        id_of = {c: group[0].id for c, group in by_content.items()}
        content_of = {v: k for k, v in id_of.items()}
        wrong = []
        for content, model in self.memories.items():
            entry = by_content[content][0]
            data = entry.data
            got = {
                "archived": bool(entry.archived),
                "superseded_by": content_of.get(data.get("superseded_by")),
                "supersedes": content_of.get(data.get("supersedes")),
                "applications": (data.get("effectiveness") or {}).get("applications", 0),
                "successes": (data.get("effectiveness") or {}).get("successes", 0),
                "related": sorted(content_of.get(r, r) for r in data.get("related_memories") or []),
            }
            want = {
                "archived": model.archived,
                "superseded_by": model.superseded_by,
                "supersedes": model.supersedes,
                "applications": model.applications,
                "successes": model.successes,
                "related": sorted(model.related),
            }
            if got != want:
                wrong.append(
                    f"{entry.id} {content!r}: "
                    + ", ".join(f"{k} {got[k]!r} != {want[k]!r}" for k in want if got[k] != want[k])
                )
        assert not wrong, f"{len(wrong)} of {len(self.memories)} memories wrong:\n" + "\n".join(wrong)
        assert all(f == files[0] for f in files), "the clones differ after the final sync"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_team_of_clones_keeps_every_memory_and_every_link(tmp_path, seed):
    number, _, crossing = seed.partition(":")
    team = Team(tmp_path, int(number), float(crossing or CROSSING))
    for _ in range(ROUNDS):
        for clone in team.clones:
            if team.rng.random() < BRANCHING:
                team.work_on_branch(clone, clone.name)
            else:
                team.work(clone, clone.name)
        if team.rng.random() < SERVING:
            team.serve()
        order = team.rng.sample(team.clones, len(team.clones))
        for clone in order:
            if team.rng.random() < PICKING:
                team.pick(clone)
            if team.rng.random() < 0.75:  # the others write against ids that grow stale
                team.merge_branches(clone)
                team.sync(clone)
    team.check()


# -- the git flows one by one: which side yields, and why it is safe -----------------


def _clone(remote: Path, path: Path, hooks: bool = True) -> Path:
    git("clone", "-q", str(remote), str(path), cwd=remote.parent)
    if hooks:
        assert mem(path, "hooks", "install").returncode == 0
    return path


def _add(clone: Path, text: str, *args: str) -> str:
    done = mem(clone, "add", "-c", "fact", "--confidence", "0.9", text, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _commit(clone: Path, message: str) -> None:
    git("add", "-A", cwd=clone)
    git("commit", "-qm", message, cwd=clone)


def _validated(clone: Path) -> None:
    checked = mem(clone, "validate")
    assert checked.returncode == 0, checked.stdout


def _ids(clone: Path) -> dict[str, str]:
    """content -> id, the archive included."""
    return {e.content: e.id for e in Grimoire.open(clone).store.entries(include_archive=True)}


@pytest.fixture
def remote(tmp_path) -> Path:
    bare = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    seed = _clone(bare, tmp_path / "seed", hooks=False)
    assert mem(seed, "init").returncode == 0
    _commit(seed, "grimoire")
    git("push", "-q", "origin", "HEAD:main", cwd=seed)
    return bare


@pytest.mark.parametrize("how", ["--no-rebase", "--rebase"])
def test_a_stale_clones_writes_land_on_the_memories_it_meant(remote, how):
    """The issue's trace: alice publishes -001; bob's own -001 yields on his pull; carol, who never pulled,
    supersedes and applies her own -001. Her pull renumbers her ids (never the published ones), and her
    supersede and apply follow her memory."""
    alice, bob, carol = (_clone(remote, remote.parent / name) for name in ("alice", "bob", "carol"))
    assert _add(alice, "alice: the cache is redis") == "MEM-20261122-001"
    _commit(alice, "alice")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    assert _add(bob, "bob: the queue is kafka") == "MEM-20261122-001"
    _commit(bob, "bob")
    git("pull", "-q", how, "--no-edit", "origin", "main", cwd=bob)
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    assert _ids(bob)["alice: the cache is redis"] == "MEM-20261122-001"  # published first: kept

    assert _add(carol, "carol: the runner is arm64") == "MEM-20261122-001"
    assert mem(carol, "apply", "MEM-20261122-001", "--success").returncode == 0
    assert mem(carol, "supersede", "MEM-20261122-001", "carol: the runner is x86").returncode == 0
    _commit(carol, "carol")
    git("pull", "-q", how, "--no-edit", "origin", "main", cwd=carol)
    assert mem(carol, "validate").returncode == 0

    ids = _ids(carol)
    assert (
        ids["alice: the cache is redis"] == "MEM-20261122-001"
        and ids["bob: the queue is kafka"] == _ids(bob)["bob: the queue is kafka"]
    )
    entries = {e.content: e.data for e in Grimoire.open(carol).store.entries(include_archive=True)}
    old, new = entries["carol: the runner is arm64"], entries["carol: the runner is x86"]
    assert old["superseded_by"] == new["id"] and new["supersedes"] == old["id"]
    assert old["effectiveness"]["applications"] == 1
    assert (
        "superseded_by" not in entries["alice: the cache is redis"]
        and "effectiveness" not in entries["alice: the cache is redis"]
    )


def _same_id_on_feature_and_main(remote: Path, bobs: str, alices: str) -> tuple[Path, Path]:
    """Bob publishes his memory as -001 on a pushed branch `feature`, then alice hers as -001 on main."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    git("checkout", "-q", "-b", "feature", cwd=bob)
    assert _add(bob, bobs) == "MEM-20261122-001"
    _commit(bob, "feature")
    git("push", "-q", "-u", "origin", "feature", cwd=bob)
    assert _add(alice, alices) == "MEM-20261122-001"
    _commit(alice, "main")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    return alice, bob


def test_merging_main_into_a_pushed_branch_keeps_mains_ids(remote):
    """A pull request brought up to date: `git merge origin/main` on a feature branch that is pushed too.
    Main is the remote's default branch: the feature's new ids yield."""
    _, bob = _same_id_on_feature_and_main(
        remote, "bob: feature flags live in unleash", "alice: releases are tagged on main"
    )
    git("fetch", "-q", cwd=bob)
    git("merge", "-q", "--no-edit", "origin/main", cwd=bob)
    assert mem(bob, "validate").returncode == 0
    ids = _ids(bob)
    assert (
        ids["alice: releases are tagged on main"] == "MEM-20261122-001"
        and ids["bob: feature flags live in unleash"] != "MEM-20261122-001"
    )


def test_a_clone_without_hooks_is_named_by_validate_and_repaired_by_merge_fixup(remote):
    """No driver ran (git merged the files as lines): CI's `mem validate` names the id used twice, and
    `mem merge-fixup post-merge` renumbers the side that was not yet pushed."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob", hooks=False)
    assert _add(alice, "alice: the cache is redis") == "MEM-20261122-001"
    _commit(alice, "alice")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    assert mem(bob, "add", "-c", "decision", "bob: we chose postgres").returncode == 0  # another file: no line conflict
    _commit(bob, "bob")
    git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=bob)
    checked = mem(bob, "validate")
    assert (
        checked.returncode == 1
        and "[duplicate-id] MEM-20261122-001" in checked.stdout
        and "mem merge-fixup post-merge" in checked.stdout
    )
    fixed = mem(bob, "merge-fixup", "post-merge")
    assert fixed.returncode == 0, fixed.stderr
    assert "renumbered ours' MEM-20261122-001 to MEM-20261122-002" in fixed.stderr
    assert mem(bob, "validate").returncode == 0
    assert _ids(bob) == {"alice: the cache is redis": "MEM-20261122-001", "bob: we chose postgres": "MEM-20261122-002"}
    assert git("status", "--porcelain", cwd=bob) == ""


def test_a_merge_made_on_a_server_is_repaired_by_the_clone_that_pulls_it(remote):
    """A pull request merged where no hooks run leaves an id used twice; the next clone to pull it (a
    fast-forward to that merge) repairs it in its post-merge hook, the pull request's side yielding."""
    alice, bob, carol = (_clone(remote, remote.parent / name) for name in ("alice", "bob", "carol"))
    git("checkout", "-q", "-b", "pr", cwd=bob)
    assert mem(bob, "add", "-c", "decision", "pr: we chose postgres").returncode == 0  # another file: no line conflict
    _commit(bob, "pr")
    git("push", "-q", "origin", "pr", cwd=bob)
    assert _add(alice, "main: the cache is redis") == "MEM-20261122-001"
    _commit(alice, "main")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    server = _clone(remote, remote.parent / "server", hooks=False)  # the forge's merge button: no driver, no hooks
    git("merge", "-q", "--no-edit", "origin/pr", cwd=server)
    git("push", "-q", "origin", "HEAD:main", cwd=server)
    git("pull", "-q", "--no-rebase", "origin", "main", cwd=carol)
    assert mem(carol, "validate").returncode == 0
    assert _ids(carol) == {"main: the cache is redis": "MEM-20261122-001", "pr: we chose postgres": "MEM-20261122-002"}
    assert git("log", "-1", "--format=%s", cwd=carol).startswith("mem: renumber memory ids")


def test_an_id_that_yields_never_takes_a_number_this_clone_issued_before(remote):
    """Bob's -002 went with a `git checkout`, but people may cite it (storage/issued.py): when his -001
    yields to alice's published one, it takes -003."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    assert _add(alice, "alice: the cache is redis") == "MEM-20261122-001"
    _commit(alice, "alice")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    assert _add(bob, "bob: the queue is kafka") == "MEM-20261122-001"
    _commit(bob, "bob")
    assert _add(bob, "bob: a thought he took back") == "MEM-20261122-002"
    git("checkout", "-q", "--", "grimoires", cwd=bob)
    git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=bob)
    assert _ids(bob) == {"alice: the cache is redis": "MEM-20261122-001", "bob: the queue is kafka": "MEM-20261122-003"}


@pytest.mark.parametrize("into", ["main", "feature"])
def test_a_cherry_picked_memory_renumbered_on_one_branch_stays_one_memory_when_the_branches_merge(remote, into):
    """Bob's feature commit is cherry-picked onto main, where alice had published the same id: on main
    it yields (-002). When the branches merge later, in either direction and in a clone that never saw
    the pick, the memory is the one both sides added under different ids, not a new one to number."""
    alice, _ = _same_id_on_feature_and_main(
        remote, "bob: retries back off exponentially", "alice: caches expire hourly"
    )
    git("fetch", "-q", cwd=alice)
    git("cherry-pick", "origin/feature", cwd=alice)
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    assert _ids(alice)["bob: retries back off exponentially"] == "MEM-20261122-002"

    carol = _clone(remote, remote.parent / "carol")
    git("checkout", "-q", into, cwd=carol)
    git("merge", "-q", "--no-edit", "origin/feature" if into == "main" else "origin/main", cwd=carol)
    assert mem(carol, "validate").returncode == 0
    contents = [e.content for e in Grimoire.open(carol).store.entries(include_archive=True)]
    assert sorted(contents) == ["alice: caches expire hourly", "bob: retries back off exponentially"]


@pytest.mark.parametrize("pick", ["branch", "unreachable"])
def test_a_single_cherry_pick_renumbers_an_id_ours_holds_in_another_file(remote, pick):
    """Git tells a merge driver nothing of a single cherry-pick while it merges. Alice's -001 is archived
    (another file) and her -002 is in the file the pick changes; bob's branch brings -001 and -002. Both
    of his yield, each to a number of its own: a driver that saw only this file kept his -001 beside her
    archived one, and the hook after the pick then gave it the number the driver had given his -002.
    A commit no ref holds (its branch deleted) cannot be found: the hook then numbers past the driver's."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    assert _add(alice, "alice: the cache was memcached") == "MEM-20261122-001"
    assert _add(alice, "alice: the cache is redis") == "MEM-20261122-002"
    _commit(alice, "alice")
    assert mem(alice, "archive", "MEM-20261122-001").returncode == 0  # commits the move itself
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("checkout", "-q", "-b", "topic", cwd=bob)
    assert _add(bob, "bob: the queue is kafka") == "MEM-20261122-001"
    assert _add(bob, "bob: the runner is arm64") == "MEM-20261122-002"
    _commit(bob, "topic")
    git("push", "-q", "origin", "topic", cwd=bob)

    git("fetch", "-q", cwd=alice)
    commit = git("rev-parse", "origin/topic", cwd=alice).strip()
    if pick == "unreachable":
        git("push", "-q", "origin", "--delete", "topic", cwd=bob)
        git("fetch", "-q", "--prune", cwd=alice)
    git("cherry-pick", commit, cwd=alice)
    checked = mem(alice, "validate")
    assert checked.returncode == 0, checked.stdout
    ids = _ids(alice)
    assert ids["alice: the cache was memcached"] == "MEM-20261122-001"
    assert ids["alice: the cache is redis"] == "MEM-20261122-002"
    # Found, the commits give his -001 and -002 the next two numbers; not found, the hook numbers his -001
    # past both of those (-004 is the commits' number for his -002, which the driver gave -003).
    expected = ["MEM-20261122-003", "MEM-20261122-004" if pick == "branch" else "MEM-20261122-005"]
    assert sorted([ids["bob: the queue is kafka"], ids["bob: the runner is arm64"]]) == expected
    assert git("status", "--porcelain", cwd=alice) == ""


def test_a_branch_taken_before_a_pull_renumbered_its_memory_merges_as_one_memory(remote):
    """Bob adds X on main, branches `topic` from there and pushes it; his pull then renumbers X on main
    (alice had published the same id), while `topic` keeps the old id. Merging `topic` into main later
    meets X under two ids: it is one memory, and the old id names alice's."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    assert _add(bob, "bob: the queue is kafka") == "MEM-20261122-001"
    _commit(bob, "bob")
    git("checkout", "-q", "-b", "topic", cwd=bob)
    assert mem(bob, "apply", "MEM-20261122-001", "--success").returncode == 0
    _commit(bob, "applied on topic")
    git("push", "-q", "origin", "topic", cwd=bob)
    git("checkout", "-q", "main", cwd=bob)
    assert _add(alice, "alice: the cache is redis") == "MEM-20261122-001"
    _commit(alice, "alice")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=bob)
    assert _ids(bob)["bob: the queue is kafka"] == "MEM-20261122-002"

    git("merge", "-q", "--no-edit", "topic", cwd=bob)
    _validated(bob)
    entries = {e.content: e.data for e in Grimoire.open(bob).store.entries(include_archive=True)}
    assert sorted(entries) == ["alice: the cache is redis", "bob: the queue is kafka"]
    assert entries["bob: the queue is kafka"]["id"] == "MEM-20261122-002"
    assert entries["bob: the queue is kafka"]["effectiveness"]["applications"] == 1
    assert "effectiveness" not in entries["alice: the cache is redis"]


def test_a_picked_memory_archived_on_its_branch_and_applied_on_main_merges_as_one_archived_memory(remote):
    """Bob's memory, picked onto main under the same id, is archived on his branch and applied on main.
    His branch's facts file is then as the merge base had it, so git takes main's whole and no driver
    meets the two copies: the hook keeps one, archived, with main's application."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    (alice / "README").write_text("the pick's parent differs from the original's\n")
    _commit(alice, "readme")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("checkout", "-q", "-b", "topic", cwd=bob)
    memory = _add(bob, "bob: the queue is kafka")
    _commit(bob, "topic")
    git("push", "-q", "origin", "topic", cwd=bob)
    git("fetch", "-q", cwd=alice)
    git("cherry-pick", "origin/topic", cwd=alice)
    assert mem(alice, "apply", memory, "--success").returncode == 0
    _commit(alice, "applied on main")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    assert mem(bob, "archive", memory).returncode == 0  # commits the move itself
    git("push", "-q", "origin", "topic", cwd=bob)

    git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=bob)
    _validated(bob)
    entries = {e.content: e for e in Grimoire.open(bob).store.entries(include_archive=True)}
    assert sorted(entries) == ["bob: the queue is kafka"]
    kept = entries["bob: the queue is kafka"]
    assert kept.id == memory and kept.archived
    assert kept.data["effectiveness"]["applications"] == 1
    assert git("status", "--porcelain", cwd=bob) == ""


def _feature_of_alice(remote: Path) -> tuple[Path, Path, Path]:
    """Alice's memory as -001 on her pushed branch `feature`, whose parent bob lacks (his pick of it is not
    git's copy of the commit); carol publishes -001 on main. Bob has not pulled."""
    alice, bob, carol = (_clone(remote, remote.parent / name) for name in ("alice", "bob", "carol"))
    (alice / "README").write_text("the pick's parent differs from the original's\n")
    _commit(alice, "readme")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("checkout", "-q", "-b", "feature", cwd=alice)
    assert _add(alice, "alice: the cache is redis") == "MEM-20261122-001"
    _commit(alice, "feature")
    git("push", "-q", "origin", "feature", cwd=alice)
    git("checkout", "-q", "main", cwd=alice)
    git("pull", "-q", "origin", "main", cwd=carol)
    assert _add(carol, "carol: the runner is arm64") == "MEM-20261122-001"
    return alice, bob, carol


def test_a_rebase_whose_first_commit_turns_empty_leaves_upstreams_references_alone(remote):
    """Bob's first local commit is his pick of alice's branch; main picked it too, renumbered. Replayed, it
    adds nothing and is dropped, and git lists it as rewritten to the commit replayed onto. The hook after
    the rebase keeps every id and reference that commit holds (its parent would have been one too far
    back: alice's last decision, there only, had its reference renamed to bob's renumbered memory)."""
    alice, bob, carol = _feature_of_alice(remote)
    _commit(carol, "runner")
    git("push", "-q", "origin", "HEAD:main", cwd=carol)
    git("pull", "-q", "origin", "main", cwd=alice)
    git("cherry-pick", "feature", cwd=alice)
    assert _ids(alice)["alice: the cache is redis"] == "MEM-20261122-002"
    added = mem(
        alice, "add", "-c", "decision", "--confidence", "0.95", "alice: cache in redis", "--related", "MEM-20261122-002"
    )
    assert added.returncode == 0, added.stderr
    _commit(alice, "decision")  # the commit bob's rebase replays onto
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("fetch", "-q", cwd=bob)
    git("cherry-pick", "origin/feature", cwd=bob)
    assert _add(bob, "bob: the queue is kafka") == "MEM-20261122-002"
    _commit(bob, "bob")

    git("pull", "-q", "--rebase", "origin", "main", cwd=bob)
    _validated(bob)
    assert _ids(bob) == {
        "carol: the runner is arm64": "MEM-20261122-001",
        "alice: the cache is redis": "MEM-20261122-002",
        "alice: cache in redis": "MEM-20261122-003",
        "bob: the queue is kafka": "MEM-20261122-004",
    }
    entries = {e.content: e.data for e in Grimoire.open(bob).store.entries(include_archive=True)}
    assert entries["alice: cache in redis"]["related_memories"] == ["MEM-20261122-002"]


def test_a_rebase_keeps_a_memory_whose_id_an_earlier_pick_gave_the_upstream_copy_of_another(remote):
    """Bob picked alice's branch commit (renumbered -002 on his main: his own -001 was there), then added
    his own as -003. Main merged her branch after carol's -001 and -002, so her memory is -003 upstream.
    Bob's rebase renames his copy -002 -> -003 in one pick; in the next, his own -003 yields for a new
    number instead of being taken for hers (hers was overwritten by it)."""
    alice, bob, carol = _feature_of_alice(remote)
    _add(carol, "carol: the proxy is nginx")
    _commit(carol, "runner")
    git("push", "-q", "origin", "HEAD:main", cwd=carol)
    git("pull", "-q", "origin", "main", cwd=alice)
    git("merge", "-q", "--no-edit", "feature", cwd=alice)
    assert _ids(alice)["alice: the cache is redis"] == "MEM-20261122-003"  # the branch's new id yielded to main's
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    assert _add(bob, "bob: the queue is kafka") == "MEM-20261122-001"
    _commit(bob, "bob")
    git("fetch", "-q", cwd=bob)
    git("cherry-pick", "origin/feature", cwd=bob)
    assert _ids(bob)["alice: the cache is redis"] == "MEM-20261122-002"
    assert _add(bob, "bob: the bus is nats") == "MEM-20261122-003"
    _commit(bob, "bob again")

    git("pull", "-q", "--rebase", "origin", "main", cwd=bob)
    _validated(bob)
    assert _ids(bob) == {
        "carol: the runner is arm64": "MEM-20261122-001",
        "carol: the proxy is nginx": "MEM-20261122-002",
        "alice: the cache is redis": "MEM-20261122-003",
        "bob: the queue is kafka": "MEM-20261122-004",
        "bob: the bus is nats": "MEM-20261122-005",
    }


def test_an_apply_a_rebase_copied_is_counted_once_when_the_branch_holding_the_original_merges(remote):
    """Bob applies his memory, takes a branch, pulls with --rebase (main now holds a copy of the apply),
    applies it again on main, then merges the branch: the apply both sides hold counts once."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    memory = _add(bob, "bob: the queue is kafka")
    _commit(bob, "bob")
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    assert mem(bob, "apply", memory, "--success").returncode == 0
    _commit(bob, "applied")
    git("branch", "topic", cwd=bob)
    git("pull", "-q", "origin", "main", cwd=alice)
    _add(alice, "alice: the cache is redis")
    _commit(alice, "alice")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("pull", "-q", "--rebase", "origin", "main", cwd=bob)
    assert mem(bob, "apply", memory, "--failure").returncode == 0
    _commit(bob, "applied again")

    git("merge", "-q", "--no-edit", "topic", cwd=bob)
    _validated(bob)
    made = {e.content: e.data for e in Grimoire.open(bob).store.entries()}["bob: the queue is kafka"]["effectiveness"]
    assert (made["applications"], made["successes"]) == (2, 1)


def test_a_rebase_that_flattens_a_merge_renames_an_id_only_where_it_names_the_renamed_memory(remote):
    """Bob merged alice's pushed branch (her memory as -001, then an apply to it) into his main, which
    had his own -001. Main holds a pick of her first commit. Bob's rebase replays his line and hers one
    after the other: his -001 yields for a new number, and her apply to her -001, replayed after it,
    stays on hers (it landed on his: the rename was kept by id alone)."""
    alice, bob, carol = (_clone(remote, remote.parent / name) for name in ("alice", "bob", "carol"))
    git("checkout", "-q", "-b", "topic", cwd=alice)
    assert _add(alice, "alice: the cache is redis") == "MEM-20261122-001"
    _commit(alice, "alice's memory")
    assert mem(alice, "apply", "MEM-20261122-001", "--success").returncode == 0
    _commit(alice, "alice applied it")
    git("push", "-q", "origin", "topic", cwd=alice)
    (carol / "README").write_text("the pick's parent differs from the original's\n")
    _commit(carol, "readme")
    git("fetch", "-q", cwd=carol)
    git("cherry-pick", "origin/topic~1", cwd=carol)
    git("push", "-q", "origin", "HEAD:main", cwd=carol)
    assert _add(bob, "bob: the queue is kafka") == "MEM-20261122-001"
    _commit(bob, "bob")
    git("fetch", "-q", cwd=bob)
    git("merge", "-q", "--no-edit", "origin/topic", cwd=bob)

    git("pull", "-q", "--rebase", "origin", "main", cwd=bob)
    _validated(bob)
    entries = {e.content: e.data for e in Grimoire.open(bob).store.entries(include_archive=True)}
    assert sorted(entries) == ["alice: the cache is redis", "bob: the queue is kafka"]
    assert entries["alice: the cache is redis"]["id"] == "MEM-20261122-001"
    assert entries["alice: the cache is redis"]["effectiveness"]["applications"] == 1
    assert "effectiveness" not in entries["bob: the queue is kafka"]


def test_a_rebase_that_flattens_a_merge_keeps_an_apply_to_a_memory_upstream_archived(remote):
    """Bob applied alice's memory on main after taking a branch, then merged the branch; alice archived
    the memory meanwhile. Replayed onto her archive, the apply has no active entry left and its commit
    is dropped: the hook after the rebase carries it into the archived copy, from the branch as it was
    before the rebase (the last commit replayed is the branch's, which never held the apply)."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    memory = _add(alice, "alice: the cache is redis")
    _commit(alice, "alice")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("pull", "-q", "origin", "main", cwd=bob)
    git("checkout", "-q", "-b", "topic", cwd=bob)
    _add(bob, "bob: the queue is kafka")
    _commit(bob, "bob's memory")
    git("checkout", "-q", "main", cwd=bob)
    assert mem(bob, "apply", memory, "--success").returncode == 0
    _commit(bob, "bob applied it")
    git("merge", "-q", "--no-edit", "topic", cwd=bob)
    assert mem(alice, "archive", memory).returncode == 0  # commits the move itself
    git("push", "-q", "origin", "HEAD:main", cwd=alice)

    git("pull", "-q", "--rebase", "origin", "main", cwd=bob)
    _validated(bob)
    entries = {e.content: e for e in Grimoire.open(bob).store.entries(include_archive=True)}
    assert sorted(entries) == ["alice: the cache is redis", "bob: the queue is kafka"]
    kept = entries["alice: the cache is redis"]
    assert kept.archived and kept.data["effectiveness"]["applications"] == 1


def test_an_apply_to_a_picked_memory_upstream_archived_reaches_the_archived_copy_after_a_rebase(remote):
    """Bob picked alice's branch commit and applied her memory; main merged her branch, and she applied
    and archived it there. Bob's rebase drops his apply (no active entry left upstream); the hook carries it
    into the archived copy, though the merge base holds no copy of the memory (each side got it by a pick
    or a merge of one commit): as added, it had no lifecycle."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    (bob / "README").write_text("the pick's parent differs from the original's\n")
    _commit(bob, "readme")
    git("checkout", "-q", "-b", "feature", cwd=alice)
    memory = _add(alice, "alice: the cache is redis")
    _commit(alice, "feature")
    git("push", "-q", "origin", "feature", cwd=alice)
    git("fetch", "-q", cwd=bob)
    git("cherry-pick", "origin/feature", cwd=bob)
    assert mem(bob, "apply", memory, "--success").returncode == 0
    _commit(bob, "bob applied it")
    git("checkout", "-q", "main", cwd=alice)
    git("merge", "-q", "--no-edit", "feature", cwd=alice)
    assert mem(alice, "apply", memory, "--failure").returncode == 0
    _commit(alice, "alice applied it")
    assert mem(alice, "archive", memory).returncode == 0  # commits the move itself
    git("push", "-q", "origin", "HEAD:main", cwd=alice)

    git("pull", "-q", "--rebase", "origin", "main", cwd=bob)
    _validated(bob)
    entries = {e.content: e for e in Grimoire.open(bob).store.entries(include_archive=True)}
    kept = entries["alice: the cache is redis"]
    assert kept.archived
    made = kept.data["effectiveness"]
    assert (made["applications"], made["successes"]) == (2, 1)


@pytest.mark.parametrize("how", ["--no-rebase", "--rebase"])
def test_one_key_remembered_in_two_clones_chains_by_time_and_recall_gives_the_later(remote, how, monkeypatch):
    """Both clones `remember` the key from the same value: each new entry supersedes the same one. A merge chains
    them in the order written (the old value, then the earlier new one, then the later), so no conflict stops the
    pull and `recall` gives the latest value, in both clones."""
    alice, bob = _clone(remote, remote.parent / "alice"), _clone(remote, remote.parent / "bob")
    assert mem(alice, "remember", "db.pool", "small").returncode == 0
    _commit(alice, "small")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    git("pull", "-q", "--no-rebase", "origin", "main", cwd=bob)
    monkeypatch.setenv("MEM_NOW", "2026-11-22T10:05:00Z")
    assert mem(alice, "remember", "db.pool", "large").returncode == 0
    _commit(alice, "large")
    git("push", "-q", "origin", "HEAD:main", cwd=alice)
    monkeypatch.setenv("MEM_NOW", "2026-11-22T10:03:00Z")  # bob's is the earlier value, pulled after alice's
    assert mem(bob, "remember", "db.pool", "medium").returncode == 0
    _commit(bob, "medium")
    pulled = subprocess.run(["git", "pull", "-q", how, "--no-edit", "origin", "main"], cwd=bob, capture_output=True)
    assert pulled.returncode == 0, pulled.stderr
    _validated(bob)
    git("push", "-q", "origin", "HEAD:main", cwd=bob)
    git("pull", "-q", "--no-rebase", "origin", "main", cwd=alice)
    for clone in (alice, bob):
        assert mem(clone, "recall", "db.pool").stdout == "large\n"
    entries = {e.content: e.data for e in Grimoire.open(bob).store.entries(include_archive=True)}
    ids = {content: data["id"] for content, data in entries.items()}
    assert entries["small"].get("superseded_by") == ids["medium"]
    assert entries["medium"].get("superseded_by") == ids["large"] and entries["large"]["supersedes"] == ids["medium"]
