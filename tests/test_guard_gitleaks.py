"""gitleaks' maintained rules in the guard: the vendored ruleset, its
conversion from Go's RE2, keywords, entropy floors and allowlists, and the
benign lines other scanners' tests taught us to accept.

Fake secrets are assembled at run time so this file itself holds none.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import ALNUM, HEX, LOWER, fake, fake_uuid

from grimoire_cli.guard import gitleaks as guard_gitleaks
from grimoire_cli.guard.convert import ConversionError, convert, convert_pattern
from grimoire_cli.guard.scan import scan, scan_fields

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "grimoire_cli" / "guard" / "data"


# Prefixes grimoire's own rules never had: each now refused, bare, by gitleaks' rule.
NEW_SHAPES = [
    (
        "slack-app-token",
        "xapp-1-" + fake("ABCDEFGHIJ0123456789", 11, 1) + "-" + fake("0123456789", 13, 2) + "-" + fake(HEX, 64, 3),
    ),
    ("planetscale-password", "pscale_pw_" + fake(ALNUM, 43, 4)),
    ("heroku-api-key-v2", "HRKU-AA" + fake(ALNUM, 58, 5)),
    ("huggingface-organization-api-token", "api_org_" + fake(LOWER, 34, 6)),
    ("planetscale-api-token", "pscale_tkn_" + fake(ALNUM, 43, 7)),
    ("1password-service-account-token", "ops_eyJ" + fake(ALNUM, 260, 8)),
    ("flyio-access-token", "fo1_" + fake(ALNUM, 43, 9)),
    ("sendinblue-api-token", "xkeysib-" + fake(HEX, 64, 10) + "-" + fake(ALNUM, 16, 11)),
    ("azure-ad-client-secret", fake(ALNUM, 3, 12) + "8Q~" + fake(ALNUM, 34, 13)),
]


@pytest.mark.parametrize("kind, text", NEW_SHAPES, ids=[k for k, _ in NEW_SHAPES])
def test_a_vendor_prefix_gitleaks_knows_is_refused_bare_and_in_prose(kind, text):
    assert kind in {f.kind for f in scan(text)}
    assert kind in {f.kind for f in scan(f"Deploy uses {text} for now")}
    assert [kind] == [
        f.kind for _, f in scan_fields({"content": f"uses {text}", "summary": "ok"})
    ]  # one finding per secret


@pytest.mark.parametrize("kind, text", NEW_SHAPES, ids=[k for k, _ in NEW_SHAPES])
def test_the_keyword_gate_changes_no_finding(kind, text):
    assert scan(text) == scan(text, gated=False)


def test_a_text_without_any_keyword_opens_no_rule():
    assert guard_gitleaks.runnable("the build broke at noon on friday") == []
    assert guard_gitleaks.runnable("the build broke at noon on friday", gated=False) == []


def test_ungated_a_rule_still_needs_its_keyword():
    """A keyword is part of a gitleaks rule: without the combined search (the
    gate), each rule's own keywords are looked for, and findings agree.
    Hypothesis found 40 hex digits reported ungated as a Sourcegraph token."""
    digits = "4111" + fake(HEX, 36, 380)
    assert scan(digits) == scan(digits, gated=False) == []
    fields = {"content": digits, "tags": [digits[-6:]]}
    assert scan_fields(fields) == scan_fields(fields, gated=False) == []
    assert {rule.kind for rule in guard_gitleaks.runnable("sourcegraph " + digits, gated=False)} >= {
        "sourcegraph-access-token"
    }


def test_a_keyword_inside_a_longer_one_opens_its_rules():
    # `xoxe-` holds `xox`... the one keyword search finds the longest at each
    # position; the rules of every keyword inside it open too.
    rules = guard_gitleaks.ruleset()
    for keyword in {k for rule in rules.rules for k in rule.keywords}:
        lower = f"say {keyword} here"
        opened = {rule.kind for rule in guard_gitleaks.runnable(lower)}
        assert {rule.kind for rule in rules.rules if any(k in lower for k in rule.keywords)} <= opened, keyword


def test_a_match_already_claimed_is_skipped_before_its_checks():
    """guard._spans passes the spans grimoire's rules claimed: a gitleaks
    match inside one is dropped before its entropy and allowlists are
    checked (the costly part of a scan), and nothing else changes."""
    text = "PLANETSCALE pscale_tkn_" + fake(ALNUM, 43, 390)
    found = list(guard_gitleaks.matches(text))
    assert [kind for kind, *_ in found] == ["planetscale-api-token"]
    assert list(guard_gitleaks.matches(text, taken=lambda start, end: True)) == []
    assert list(guard_gitleaks.matches(text, taken=lambda start, end: False)) == found


def test_entropy_floor_and_placeholders_are_accepted():
    assert scan("pscale_tkn_" + "a" * 40) == []  # below the rule's entropy floor
    # gitleaks' allowlist takes AWS's documented example key (grimoire's own
    # AWS rule still refuses it: the rest of the suite stores it as "a secret").
    assert list(guard_gitleaks.matches("aws key AKIA" + "IOSFODNN7" + "EXAMPLE")) == []
    assert list(guard_gitleaks.matches("aws key AKIA" + "IOSFODNN7" + "EXAMPLQ")) != []
    assert scan("HRKU-AA" + "x" * 58) == []


def test_the_vendored_ruleset_names_its_version_and_licence():
    source = guard_gitleaks.ruleset().source
    assert "gitleaks v8." in source and "MIT" in source
    assert "MIT License" in (DATA / "LICENSE-gitleaks").read_text()
    assert len(guard_gitleaks.ruleset().rules) > 200
    for rule in guard_gitleaks.ruleset().rules:
        assert rule.pattern.pattern == rule.source  # every rule compiles


@pytest.mark.parametrize(
    "go, python",
    [
        (r"[[:alnum:]]{4}\z", r"[a-zA-Z0-9]{4}\Z"),
        (r"\bab_(?i)[a-z]{3}", r"\bab_(?i:[a-z]{3})"),
        (r"(?:x_(?i)[a-z]+|y|w)z", r"(?:x_(?i:[a-z]+)|(?i:y)|(?i:w))z"),
        (r"(?i)key-[a-z]", r"(?i)key-[a-z]"),
    ],
)
def test_re2_is_converted_to_python(go, python):
    assert convert_pattern(go) == python


@pytest.mark.parametrize("go", [r"\p{Greek}+", r"\Qa.b\E", r"[[:nosuch:]]", r"(unclosed"])
def test_a_rule_that_cannot_be_converted_stops_the_conversion_naming_it(go):
    with pytest.raises(ConversionError, match="rule bad-one"):
        convert({"rules": [{"id": "fine", "regex": "abc"}, {"id": "bad-one", "regex": go}]}, "test")


def test_update_rules_fails_loudly_and_writes_nothing(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "gitleaks.toml").write_text(
        "[[rules]]\nid = 'bad-one'\nregex = '''\\p{Greek}'''\nkeywords = ['x']\n"
    )
    (tmp_path / "LICENSE").write_text("x")
    before = (DATA / "gitleaks_rules.json").read_bytes()
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "update_rules.py"), str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: gitleaks rule bad-one") and "Traceback" not in done.stderr
    assert (DATA / "gitleaks_rules.json").read_bytes() == before


# Pairs listed after one whose value is a keyword (`service=api`): generic-api-key
# read `api`, then `,` as its operator, then the next pair, name and all, as
# the secret (`root_cause=bad`, 3.6 bits per character). Reported through
# `mem episode deploy-rollback --context service=api --context "root_cause=bad migration"`,
# whose content line is the second text.
PLAIN_PAIRS = [
    "service=api, root_cause=bad migration",
    "deploy-rollback (unknown) [service=api, root_cause=bad migration]",
    "service=api, root_cause=missing index",
    "service=api, reason=bad migration",
    "service=api, root_cause: disk full on host",
    "credential: vault, root_cause=bad migration, owner=platform team",
]


@pytest.mark.parametrize("text", PLAIN_PAIRS)
def test_plain_words_in_the_pair_after_a_keyword_are_no_secret(text):
    assert scan(text) == [] and scan(text, gated=False) == []
    assert scan_fields({"content": text, "context": {"service": "api", "root_cause": "bad migration"}}) == []


# The same pairs with values of letters and digits, as an episode's context
# holds them: none is random, or the name holds no secret (an id).
ORDINARY_PAIRS = [
    "service=api, job=nightly-etl_v3",
    "service=auth, root_cause=expired_tls_cert2",
    "component=token-service, pod=api-7d9f8b6c5-x2kq9",
    "pod=api-7d9f8b6c5-x2kq9, trace_id=" + fake(HEX, 32, 35),
    "deploy-rollback (failure) [pod=api-7d9f8b6c5-x2kq9, job=nightly-etl_v3]",
]


@pytest.mark.parametrize("text", ORDINARY_PAIRS)
def test_an_ordinary_value_in_the_pair_after_a_keyword_is_no_secret(text):
    assert scan(text) == [] and scan(text, gated=False) == []


def test_a_random_value_in_the_pair_after_a_keyword_is_still_refused():
    value = fake(ALNUM, 20, 31)
    assert [f.kind for f in scan(f"service=api, root_cause={value}")] == ["generic-api-key"]
    assert [f.kind for f in scan(f"auth, root_cause={value} after the bad migration")] == ["generic-api-key"]
    assert [f.kind for f in scan("service=api, api_key=" + fake(HEX, 20, 32))] == ["password or secret assignment"]
    long_lower = fake(LOWER + "0123456789", 28, 36)  # one case and digits: random from 24 characters
    assert [f.kind for f in scan(f"service=api, ref={long_lower}")] == ["generic-api-key"]
    padded = fake(ALNUM, 22, 33) + "=="  # base64 padding is no assignment
    assert [f.kind for f in scan(f"api, {padded}")] == ["generic-api-key"]
    # A token with `=` inside: what comes before it is no name (Atlassian's shape, from gitleaks' cases).
    atlassian = "ATATT3" + fake(ALNUM, 177, 34) + "=C63992E6"
    assert [f.kind for f in scan(atlassian)] == ["atlassian-api-token"]


# Lines that name a secret without holding one (the kind of line other
# scanners' tests list as false positives), written for this test.
BENIGN = [
    "pipeline { steps { withCredentials([string(credentialsId: '"
    + fake_uuid(1)
    + "', variable: 'TOKEN')]) { sh 'make' } } }",
    "deployCredentialsId: '" + fake_uuid(2) + "'",
    '  "credentialId": "' + fake(ALNUM, 22, 3) + '",',
    'SECRETS_ID = "PROD_DB_CRED"',
    "staging.credentials.url=staging-lb2.internal.example:8443",
    'public_key = "' + fake(ALNUM, 43, 4) + '"',
    'publicToken: "' + fake(ALNUM, 43, 5) + '"',
    "primaryKey=" + fake(ALNUM, 28, 6),
    "encryption.KeySize = AesEncryptionKeySize.Key256Bit;",
    '"kms_key_id": "' + fake_uuid(7) + '",',
    'const tokenAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz-_"',
    'API_SECRET_NAME = "BILLING-API-KEY-V2"',
    "private_key = load_pem_private_key(pem_bytes, password=None) raises on an encrypted key",
    'dependency "Maven - io.jsonwebtoken:jjwt-impl-0.12.3"',
    "see https://example.org/media/2/41/2019-xoxo-conference-3.jpg",
    "-e REDIS_PASSWORD=`vault kv get -field=pw secret/redis`",
    'curl "https://host:9000";@next',
]


@pytest.mark.parametrize("text", BENIGN)
def test_a_line_that_names_a_secret_without_holding_one_is_accepted(text):
    assert scan(text) == []


def test_the_rules_file_is_package_data_json():
    raw = json.loads((DATA / "gitleaks_rules.json").read_text())
    assert raw["source"].startswith("gitleaks ") and raw["rules"]
