"""The guard measured on other secret scanners' test cases
(`../shared/benchmarks/secrets/`, read in place, never copied here):
gitleaks' true positives as written, bare, in prose and after an
assignment; detect-secrets' positive cases; refusals of benign text and
of placeholders; throughput of `scan`; the misses grouped by rule.
Used by bench_guard.py."""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

# A rule's regex that starts with a literal (`ghp_`, `xoxb-`): its secret
# alone is recognisable, so "bare" recall is expected of it.
_LEADING = re.compile(r"^(?:\(\?i\)|\\b|\(\?:|\()*([A-Za-z0-9_\-.]{3,})")
_PLACEHOLDER = re.compile(r"(?i)x{4,}|\*{4,}|example|placeholder|<[^>]+>|\$\{|\{\{|your[_-]")


class _Kind(str):
    @property
    def kind(self) -> str:
        return str(self)


def _rows(folder: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def has_literal_prefix(regex: str) -> bool:
    found = _LEADING.match(regex or "")
    return bool(found) and not found.group(1).startswith(("a-z", "A-Z", "0-9"))


def measure(folder: Path, kinds_of) -> list[str]:
    """The report's lines: each figure, then the misses by rule. `kinds_of`:
    the kinds found in each of a list of texts (`mem scan --jsonl`, say)."""
    tp = _rows(folder, "gitleaks_tp.jsonl")
    ds = _rows(folder, "detect_secrets_cases.jsonl")
    benign = {name: _rows(folder, name) for name in ("benign_dev.jsonl", "must_accept.jsonl")}
    negatives = [r["text"] for r in _rows(folder, "gitleaks_fp.jsonl") + [r for r in ds if not r["label"]]]
    ways = {
        "as written": lambda r: r["text"],
        "bare": lambda r: r["secret"],
        "in prose": lambda r: f"Deploy uses {r['secret']}",
        "after an assignment": lambda r: f"config: api_key = {r['secret']}",
    }
    texts = [build(r) for way, build in ways.items() for r in tp if way == "as written" or r.get("secret")]
    texts += [r["text"] for r in ds] + [r["text"] for rows in benign.values() for r in rows] + negatives
    started = time.perf_counter()
    verdicts = dict(zip(texts, kinds_of(texts)))
    elapsed = time.perf_counter() - started
    refused = lambda text: bool(verdicts[text])
    scan = lambda text: [_Kind(kind) for kind in verdicts[text]]
    lines, misses = [], defaultdict(Counter)
    for way, build in ways.items():
        cases = [r for r in tp if way == "as written" or r.get("secret")]
        hits = 0
        for row in cases:
            if refused(build(row)):
                hits += 1
            else:
                misses[row["rule"]][way] += 1
        lines.append(f"gitleaks true positives {way}: {hits}/{len(cases)} = {100 * hits / max(len(cases), 1):.1f} %")
        if way == "bare":
            prefixed = [r for r in cases if has_literal_prefix(r.get("regex", ""))]
            found = sum(1 for r in prefixed if refused(r["secret"]))
            lines.append(
                f"  bare, rules whose secret has a literal prefix: {found}/{len(prefixed)} = {100 * found / max(len(prefixed), 1):.1f} %"
            )
    positives = [r for r in ds if r["label"]]
    found = sum(1 for r in positives if refused(r["text"]))
    lines.append(f"detect-secrets positive cases: {found}/{len(positives)} = {100 * found / len(positives):.1f} %")
    for name, rows in benign.items():
        bad = [r["text"] for r in rows if refused(r["text"])]
        lines.append(f"refusals of {name}: {len(bad)} of {len(rows)}")
        lines.extend(f"    refused: {', '.join(f.kind for f in scan(text))}: {text[:110]}" for text in bad)
    placeholders = [text for text in negatives if _PLACEHOLDER.search(text)]
    accepted = sum(1 for text in placeholders if not refused(text))
    lines.append(
        f"placeholders (scanners' negatives with xxxx, EXAMPLE, <…>, ${{…}}): {accepted}/{len(placeholders)} accepted"
    )
    lines.append(
        f"throughput: {len(texts) / elapsed:,.0f} texts/s ({len(texts)} texts, {elapsed:.2f} s, all of the above in one run)"
    )
    lines.append("misses by rule (as written / bare / in prose / after an assignment):")
    for rule, counts in sorted(misses.items(), key=lambda item: -sum(item[1].values())):
        lines.append(f"    {rule}: " + " / ".join(str(counts[way]) for way in ways))
    return lines
