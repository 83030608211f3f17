"""Realistic execution logs for `mem observe` (the Persistent Memory
System's input), for tests and `make bench`.

    python benchmarks/executions.py --records 10000 [--seed 7] > runs.jsonl

Tasks follow a few plans (tool sequences) in three contexts; each tool has
its own failure rate (worse in some contexts), duration and retries; a
failed step carries a recurring error whose numbers, ids and paths vary
(`timeout after 30s on /srv/a/1.json`, `... 12s on /srv/b/7.json`), and a
parameter value that goes with failure. The records are what an agent
runtime would log; `truth()` counts what the generator put in, so a test
can compare mem's statistics with it exactly.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

CONTEXTS = ("shipping", "billing", "support")
# tool -> (failure rate, failure rate in "support", mean duration ms)
TOOLS = {
    "list_facilities": (0.02, 0.02, 120),
    "get_rates": (0.10, 0.30, 200),
    "create_shipment": (0.15, 0.15, 450),
    "cancel_shipment": (0.30, 0.30, 300),
    "send_email": (0.05, 0.05, 80),
}
PLANS = (
    ("list_facilities", "create_shipment"),
    ("get_rates", "create_shipment", "send_email"),
    ("cancel_shipment", "send_email"),
)
GOALS = {
    PLANS[0]: "create shipment for facility {n}",
    PLANS[1]: "quote and ship order {n} to {email}",
    PLANS[2]: "cancel shipment {n} and tell the customer",
}
ERRORS = {
    "list_facilities": ("facility {n} not found",),
    "get_rates": ("HTTP 429 from rates.example.com, retry after {n} ms",),
    "create_shipment": ("timeout after {n}s on /srv/{word}/{n2}.json", "carrier '{word}' rejected the label"),
    "cancel_shipment": ("shipment {n} already in transit",),
    "send_email": ("SMTP 451 temporary failure for msg-{n}",),
}
WORDS = ("alpha", "bravo", "delta", "kilo", "oscar")


def _error(tool: str, rng: random.Random) -> str:
    template = rng.choice(ERRORS[tool])
    return template.format(n=rng.randint(1, 999), n2=rng.randint(1, 99), word=rng.choice(WORDS))


def generate(count: int, seed: int = 7, start: datetime | None = None) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    start = start or datetime(2026, 11, 16, tzinfo=UTC)
    records = []
    for n in range(count):
        plan = rng.choice(PLANS)
        context = rng.choice(CONTEXTS)
        steps, failed = [], False
        for tool in plan:
            rate, support_rate, mean = TOOLS[tool]
            carrier = rng.choice(("ups", "dhl", "fedex")) if tool == "create_shipment" else None
            bad = rng.random() < (support_rate if context == "support" else rate) * (2 if carrier == "fedex" else 1)
            params: dict[str, Any] = {"id": rng.randint(1, 5000)}
            if carrier:
                params["carrier"] = carrier
            step = {
                "tool": tool,
                "params": params,
                "status": "failed" if bad else "completed",
                "duration_ms": round(rng.expovariate(1 / mean), 1),
                "retries": rng.randint(1, 3) if bad else rng.choice((0, 0, 0, 1)),
                "error": _error(tool, rng) if bad else None,
            }
            steps.append(step)
            if bad:
                failed = True
                break
        at = start + timedelta(seconds=n * 60)
        records.append(
            {
                "task_id": f"task-{n:06d}",
                "goal": GOALS[plan].format(n=rng.randint(100, 99999), email=f"user{n}@example.com"),
                "context": context,
                "agent": "bench-agent",
                "outcome": "failure" if failed else "success",
                "started_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "duration_ms": round(sum(s["duration_ms"] for s in steps), 1),
                "steps": steps,
            }
        )
    return records


def truth(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per tool: executions, successes, failures, durations, retries, and per context the same counts."""
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        for step in record["steps"]:
            tool = out.setdefault(
                step["tool"],
                {"executions": 0, "successes": 0, "failures": 0, "durations": [], "retries": [], "contexts": {}},
            )
            ok = step["status"] == "completed"
            tool["executions"] += 1
            tool["successes" if ok else "failures"] += 1
            tool["durations"].append(step["duration_ms"])
            tool["retries"].append(step["retries"])
            per = tool["contexts"].setdefault(record["context"], [0, 0])
            per[0] += 1
            per[1] += ok
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    for record in generate(args.records, args.seed):
        sys.stdout.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
