"""The guard's edges, each pinned by a text it must flag and one it must pass
(issue 44, item 2: mutants that moved a bound, a threshold or a length and
no test noticed).

Fake secrets are assembled at run time so this file itself holds none.
"""

from __future__ import annotations

import pytest
from fakes import ALNUM, fake

from grimoire_cli.guard.scan import scan


def kinds(text: str) -> list[str]:
    return [finding.kind for finding in scan(text)]


def _pair(flagged: str, passed: str, kind: str) -> None:
    """`flagged` is found as `kind`, `passed` not (another rule may still see
    it: the vendored gitleaks rules read `password="..."` their own way)."""
    assert kind in kinds(flagged), flagged
    assert kind not in kinds(passed), passed


# -- values assigned to a secret-meaning name ------------------------------------

ASSIGNED = "password or secret assignment"


def test_a_quoted_passphrase_for_a_password_is_refused_but_not_for_a_hint():
    _pair('DB_PASSWORD="correct-horse-battery-staple"', 'DB_PASSWORD_HINT="correct-horse-battery-staple"', ASSIGNED)


def test_a_passphrase_needs_three_words_or_sixteen_letters():
    _pair('DB_PASSWORD="correct-horse-battery"', 'DB_PASSWORD="correct-horse"', ASSIGNED)
    _pair('DB_PASSWORD="correcthorsebatt"', 'DB_PASSWORD="correcthorsebat"', ASSIGNED)  # 16 letters, then 15


def test_a_mixed_value_of_eight_characters_is_a_secret_and_of_seven_is_not():
    _pair('api_key = "Abc.DEFghi123"', 'api_key = "Abc.DE1"', ASSIGNED)
    _pair('api_key = "Abc.DEF1"', 'api_key = "Abc.DE1"', ASSIGNED)


def test_letters_only_need_sixteen_characters_and_an_entropy_of_three_and_a_half():
    # 16 letters: 8 once and 4 twice is exactly 3.5 bits a character (flagged); 6 twice and 4 once, 3.25.
    _pair('token = "QwErTyUiOpAsQwEr"', 'token = "QwErTyUiOpQwErTy"', ASSIGNED)
    # 16 distinct letters (4 bits) flagged; 15 (3.9 bits) too short. A 4.5 threshold would pass both.
    _pair('token = "QwErTyUiOpAsDfGh"', 'token = "QwErTyUiOpAsDfG"', ASSIGNED)
    # Both cases needed: one case only is a word or a constant.
    assert kinds('token = "qwertyuiopasdfgh"') == []


# A setting about secrets (its name's last word: policy, ttl, mode, region…)
# holds a value of a secret's two kinds of character that is no secret.
SETTINGS = [
    "password_hashing=argon2id",
    "password_policy: min12-upper-digit",
    '"password_policy": "min12-upper"',
    "auth_method=oauth2-pkce",
    "secrets_manager_region=us-east-1",
    "REFRESH_TOKEN_TTL=P30DT12H",
    "--secret-backend vault-kv2",
    "deploy-rollback (failure) [service=api, auth_mode=mtls-v2, token_budget=4000]",
]


@pytest.mark.parametrize("text", SETTINGS)
def test_a_setting_about_secrets_holds_none(text):
    assert kinds(text) == [] and scan(text, gated=False) == []


@pytest.mark.parametrize("name", ["token_ttl", "password_policy", "AUTH_MODE", "--secret-backend"])
def test_a_setting_about_secrets_given_a_clearly_random_value_is_refused(name):
    value = fake(ALNUM, 17, 61) + "aZ9"  # 20 random characters of both cases and digits
    assert kinds(f"{name}={value}") != [] and kinds(f"{name} {value}") != []
    assert kinds(f'"{name}": "{value}"') != []


def test_a_secret_name_that_only_mentions_a_setting_word_still_holds_a_secret():
    assert kinds("auth_token=" + "mtls-v2-9f3k") == [ASSIGNED]  # the last word is the token
    assert kinds("DB_PASSWORD=" + "argon2id") == [ASSIGNED]


# -- personal data ----------------------------------------------------------------


def _iban(country: str, bban: str) -> str:
    """An IBAN with its check digits computed (mod 97)."""
    number = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def _grouped(text: str) -> str:
    return " ".join(text[i : i + 4] for i in range(0, len(text), 4))


def test_an_iban_is_fifteen_to_thirty_four_characters_with_a_valid_checksum():
    shortest, too_short = _iban("NO", "86011117947"), _iban("NO", "8601111794")
    assert (len(shortest), len(too_short)) == (15, 14)
    _pair(f"pay to {_grouped(shortest)} today", f"pay to {_grouped(too_short)} today", "IBAN")
    longest, too_long = _iban("LC", "A" * 4 + "1" * 26), _iban("LC", "A" * 4 + "1" * 27)
    assert (len(longest), len(too_long)) == (34, 35)
    _pair(f"pay to {_grouped(longest)} today", f"pay to {_grouped(too_long)} today", "IBAN")
    wrong = shortest[:2] + f"{(int(shortest[2:4]) + 1) % 100:02d}" + shortest[4:]
    assert kinds(f"pay to {wrong} today") == []
    assert kinds("ref AB12 CDEF GHIJ") == []  # IBAN-shaped, 12 characters


def test_a_phone_number_has_two_different_digits_and_nine_to_fifteen():
    _pair("call 555-123-4567", "call 000-000-0000", "phone number")
    # 9 digits, then 8 (a ninth digit elsewhere in the text: the rule's gate counts the text's digits, not the number's)
    _pair("call +4 930 123 45", "call +4 930 12 34 from room 7", "phone number")
    _pair("call +1 234 567 890 123 45", "call +1 234 567 890 123 456", "phone number")  # 15, then 16


def _luhn_digit(partial: str) -> str:
    total = 0
    for index, char in enumerate(reversed(partial)):
        value = int(char) * (2 if index % 2 == 0 else 1)
        total += value - 9 if value > 9 else value
    return str((10 - total % 10) % 10)


def test_a_card_number_is_thirteen_to_nineteen_digits_passing_luhn():
    thirteen, twelve = "4" + "2" * 11, "4" + "2" * 10
    _pair(
        f"card {thirteen + _luhn_digit(thirteen)} ok", f"card {twelve + _luhn_digit(twelve)} ok", "payment card number"
    )
    nineteen, twenty = "4" + "1234567890" + "1234567", "4" + "1234567890" + "12345678"
    _pair(
        f"card {nineteen + _luhn_digit(nineteen)} ok", f"card {twenty + _luhn_digit(twenty)} ok", "payment card number"
    )
    wrong_first = "1" + "2" * 11
    assert kinds(f"card {wrong_first + _luhn_digit(wrong_first)} ok") == []  # cards start 3, 4, 5 or 6


def test_an_email_domain_may_end_in_two_letters():
    _pair("mail hans@example.de now", "mail hans@example.d now", "email address")
    _pair("mail dev@startup.io now", "mail dev@startup now", "email address")


# -- open-ended token rules at their shortest -------------------------------------


def _body(n: int) -> str:
    """n characters of letters of both cases and digits (every token rule's alphabet)."""
    return ("a1B2c3D4e5F6g7H8i9J0kLmN" * 12)[:n]


# kind, the text before the open-ended run, its least length, the text after it.
SHORTEST = [
    ("GitHub token", "ghp_", 36, ""),
    ("GitHub token", "github_pat_", 50, ""),
    ("GitLab token", "glpat-", 20, ""),
    ("PyPI token", "pypi-AgE", 50, ""),
    ("Slack token", "xoxb-2837465019-", 8, ""),
    ("Stripe key", "sk_live_", 16, ""),
    ("Stripe key", "whsec_", 32, ""),
    ("Azure storage key", "AccountKey=", 40, ""),
    ("Square token", "sq0atp-", 22, ""),
    ("Vault token", "hvs.", 24, ""),
    ("Doppler token", "dp.pt.", 40, ""),
    ("Grafana token", "glc_", 32, ""),
    ("Sentry token", "sntrys_", 30, ""),
    ("Groq API key", "gsk_", 48, ""),
    ("Notion token", "ntn_", 40, ""),
    ("Anthropic API key", "sk-ant-", 20, ""),
    ("OpenAI API key", "sk-", 20, ""),
    # (No bound on a JWT's signature: header.payload alone is a token, unsigned JWTs included; test_guard.py.)
    ("JSON Web Token", "eyJ", 8, ".eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fw"),
    ("SendGrid key", "SG.", 16, "." + "Q" * 30),
    ("authorization header", "Authorization: Bearer ", 8, ""),
]


@pytest.mark.parametrize(
    "kind, before, least, after", SHORTEST, ids=[f"{kind}:{before[:8]}" for kind, before, _, _ in SHORTEST]
)
def test_a_token_rule_flags_its_shortest_match_and_not_one_character_less(kind, before, least, after):
    _pair(
        f"the value is {before}{_body(least)}{after} here", f"the value is {before}{_body(least - 1)}{after} here", kind
    )
