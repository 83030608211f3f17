#!/usr/bin/env bash
# A short real session of `mem` in a throw-away git repository:
# init, add, query, supersede, archive (with its own commit).
set -euo pipefail
demo="$(mktemp -d "${TMPDIR:-/tmp}/grimoire-demo.XXXXXX")"
trap 'rm -rf "$demo"' EXIT
cd "$demo"
export GIT_AUTHOR_NAME=demo GIT_AUTHOR_EMAIL=demo@example.invalid GIT_COMMITTER_NAME=demo GIT_COMMITTER_EMAIL=demo@example.invalid
export MEM_SESSION_ID=demo-session MEM_NOW=2026-11-01T09:00:00Z
# Bold commands on a terminal; plain text when the output is a file or a pipe.
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; "$@"; }

git init -q
step mem init
git add -A && git commit -qm "start a grimoire"
step mem add -c decision "We use SQLite FTS5 for search because it ships with Python" -t search --confidence 0.95
step mem add -c error "The nightly build failed: the runner ran out of disk space" -t ci
step mem add -c learning "Clearing the pip cache frees 2 GB on the CI runner" -t ci
step mem add "We prefer short commit subjects in the imperative mood"
step mem query "serch engine"            # a typo still finds it
old=$(mem list -c decision --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
step mem supersede "$old" "We use SQLite FTS5 with the porter stemmer for search" --confidence 0.95
step mem show "$old" --chain
git add -A && git commit -qm "session memories"
step mem context --budget 120
echo
echo "# 40 days later: the 30-day error memory has expired"
export MEM_NOW=2026-12-11T09:00:00Z
step mem archive
step git log --oneline -n 1 --stat
step mem validate
echo
echo "demo ok: a throw-away repo at $demo (removed on exit)"
