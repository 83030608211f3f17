"""The secret/PII guard: every realistic fake secret refused, real text passes.

Fake secrets are assembled at run time so this file itself holds none.
"""

import json
import re
from pathlib import Path

import pytest

from conftest import mem
from grimoire_cli.guard import scan

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "benchmarks"
A = "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC2eF4"


def _positives() -> list[tuple[str, str]]:
    hexs = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    return [
        ("AWS access key id", "aws key AKIA" + "IOSFODNN7EXAMPLQ"),
        ("AWS access key id", "creds ASIA" + "Y34FZKBOKMUTVV7A in the env"),
        ("AWS secret access key", "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKY"),
        ("GCP API key", "maps key AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
        ("Azure storage key", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + ("Zm9vYmFy" * 11) + "==;"),
        ("GitHub token", "use ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
        ("GitHub token", "gho_" + "Z" * 36),
        ("GitHub token", "github_pat_" + "11ABCDEFG0" + "x" * 72),
        ("GitLab token", "glpat-" + "xYz12AbC34dEf56GhI78"),
        ("npm token", "//registry.npmjs.org/:_authToken=npm_" + "a" * 18 + "B" * 18),
        ("PyPI token", "pypi-AgEIcHlwaS5vcmc" + "CJDk2NzQ1YjYtYjE3Ni00YzM5LWI4NzItZGQ5ZjA1ZjE3NjMxAAIqWzMsIjE"),
        ("Slack token", "xoxb-" + "2837465019-1827364509-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("Slack token", "webhook https://hooks.slack.com/services/T0" + "1ABCDEF/B02GHIJKL/abcdefghijklmnop1234"),
        ("Stripe key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
        ("Stripe key", "rk_test_" + "51H8xYz" + "Q" * 20),
        ("Twilio key", "twilio SK" + hexs),
        ("SendGrid key", "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"),
        ("Mailgun key", "mailgun key-" + hexs),
        ("OpenAI API key", "OPENAI_API_KEY=sk-proj-" + A + "T3BlbkFJ" + A),
        ("OpenAI API key", "sk-" + "Tz8" + "a" * 45),
        ("Anthropic API key", "sk-ant-api03-" + A + "-" + A),
        ("JSON Web Token", "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ" + ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
        ("private key block", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"),
        ("private key block", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"),
        ("private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF"),
        ("private key block", "-----BEGIN EC PRIVATE KEY-----"),
        ("credentials in a URL", "DATABASE_URL=postgres://app:S3cr3tPass@db.internal:5432/app"),
        ("credentials in a URL", "clone https://deploy:hunter2hunter2@git.example.com/repo.git"),
        ("password or secret assignment", "password=Tr0ub4dor&3x"),
        ("password or secret assignment", "the db secret: Xk9#mQ2!vL7p"),
        ("password or secret assignment", "token: 9aF3kL0pQ7zX2mN8"),
        ("high-entropy value for a key-like name", "SIGNING_KEY = 'q8Zx3Lp0Vt7Ks2Nd9Wm4Yb6Hc1'"),
        ("email address", "contact jane.doe@example.com for access"),
        ("email address", "from ops-team+alerts@corp.example.org"),
        ("phone number", "call +44 20 7946 0958 after six"),
        ("phone number", "her number is (415) 555-0132"),
        ("phone number", "ring 212-555-0187 for the pager"),
        ("phone number", "mobile +49 151 23456789"),
        ("payment card number", "card 4111 1111 1111 1111 exp 12/28"),
        ("payment card number", "mastercard 5555555555554444"),
        ("payment card number", "amex 3782-822463-10005"),
        ("US social security number", "ssn 123-45-6789 on file"),
        ("IBAN", "wire to DE89 3704 0044 0532 0130 00"),
        ("IBAN", "iban GB82WEST12345698765432"),
    ]


POSITIVES = _positives()


def test_positive_corpus_fully_refused():
    assert len(POSITIVES) >= 40
    missed = [(kind, text) for kind, text in POSITIVES if not scan(text)]
    assert missed == []


@pytest.mark.parametrize("kind, text", POSITIVES, ids=[f"{i}-{k}" for i, (k, _) in enumerate(POSITIVES)])
def test_positive_kind_named(kind, text):
    assert kind in {f.kind for f in scan(text)}
    # The gates that skip rules are only a speed-up: same findings without them.
    assert scan(text) == scan(text, gated=False)
    assert scan(f"prefix words {text} suffix") == scan(f"prefix words {text} suffix", gated=False)


NEGATIVES = [
    "commit 3f2a9c1e0b7d4e5f6a7b8c9d0e1f2a3b4c5d6e7f fixed it",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "see MEM-20261122-001 and version 1.2.3, python 3.11.7",
    "https://github.com/pre-commit/pre-commit/issues/1234",
    "listen on 0.0.0.0:8080, timeout 30s, on 2024-01-15T10:00:00Z",
    "path src/grimoire_cli/store.py:120-140",
    "def token(self): return self._token",
    "password: <your password>",
    "api_key=${API_KEY}",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_passes(text):
    assert scan(text) == []


def _locomo_turns():
    data = json.loads((SHARED / "locomo" / "locomo-dev.json").read_text())
    return [t["text"] for s in data for k, v in s["conversation"].items() if re.fullmatch(r"session_\d+", k) for t in v]


@pytest.mark.skipif(not SHARED.exists(), reason="shared benchmarks not beside the checkout")
def test_negative_corpora_false_positive_rate():
    commits = (SHARED / "guard" / "commit-messages.txt").read_text().splitlines()
    turns = _locomo_turns()
    assert len(commits) >= 5000 and len(turns) >= 3000
    for corpus in (commits, turns):
        flagged = sum(1 for text in corpus if scan(text))
        assert flagged / len(corpus) <= 0.005, flagged


def test_add_refuses_without_echoing(repo):
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    result = mem("add", "-c", "fact", f"the CI uses\n  token {secret}")
    assert result.code == 2
    assert "line 2, col 9: GitHub token" in result.err
    assert secret not in result.err and secret[4:] not in result.err
    assert "a1B2" not in (repo / "grimoires/loa/memory/facts.yaml").read_text()
