"""Guard behaviour that mutants of guard/rules.py and guard/scan.py changed
and no test noticed (`make mutation`, benchmarks/mutation.md): each case
here fails on its mutant. Fake secrets are assembled at run time so this
file itself holds none.
"""

from __future__ import annotations

import base64

import pytest
from fakes import ALNUM, LOWER, UPPER_ALNUM, fake

from grimoire_cli.core.errors import BadInput
from grimoire_cli.guard.scan import Finding, redact, redact_all, scan, scan_fields, strip_private

ASSIGNED = "password or secret assignment"
HIGH_ENTROPY = "high-entropy value for a key-like name"


def kinds(text: str) -> list[str]:
    return [finding.kind for finding in scan(text)]


def exactly_three_and_a_half_bits(twice: str, once: str) -> str:
    """Four characters twice and eight once (or that, doubled): 3.5 bits a character, exactly."""
    assert len(set(twice)) == 4 and len(set(once)) == 8
    return "".join(c * 2 for c in twice) + once


# -- values assigned to a secret-meaning name ------------------------------------


def test_a_call_or_subscript_whose_brackets_nest_is_code_not_a_secret():
    # Nesting brackets around a capital letter: the value reads as code.
    assert kinds("token=items[X].value") == []
    assert kinds("password = vault(Xk)[0].text") == []


def test_lowercase_letters_with_symbols_are_two_kinds_of_character():
    assert ASSIGNED in kinds("DB_PASSWORD=correct#horse!")


def test_a_comparison_with_an_unquoted_name_is_not_a_secret_but_with_a_literal_is():
    assert kinds("if api_token == storedToken9:") == []
    assert ASSIGNED in kinds('if api_token == "storedToken9":')


def test_a_secret_word_in_an_exempt_name_yields_to_a_clearly_secret_value_of_twenty_characters():
    twenty, nineteen = fake(ALNUM, 17, 1) + "aZ9", fake(ALNUM, 16, 1) + "aZ9"
    assert ASSIGNED in kinds(f'client_secret_id = "{twenty}"')
    assert ASSIGNED not in kinds(f'client_secret_id = "{nineteen}"')  # gitleaks' generic rule reads it its own way


def test_an_exempt_name_given_as_a_call_argument_is_exempt():
    value = fake(ALNUM, 13, 2) + "aZ9"
    assert kinds(f'config.set("auth_token_url", "{value}")') == []
    assert ASSIGNED in kinds(f'config.set("auth_token", "{value}")')


def test_a_bare_spaced_value_of_one_case_and_digits_is_random_from_twenty_four_characters():
    value = "k3j9x2m7q8w4z1p5r6t0y8u2"
    assert ASSIGNED in kinds(f"auth_token {value}")
    assert kinds(f"auth_token {value[:23]}") == []


def test_a_bare_spaced_value_of_exactly_three_and_a_half_bits_is_random():
    value = exactly_three_and_a_half_bits("aB3x", "CdEf4g5h")
    assert ASSIGNED in kinds(f"auth_token {value}")


def test_a_key_like_name_needs_three_and_a_half_bits_not_more():
    value = exactly_three_and_a_half_bits("aB3x", "CdEf4g5h")
    value = "".join(c * 2 for c in value)  # 32 characters, still 3.5 bits
    assert HIGH_ENTROPY in kinds(f"signing_key = {value}")
    assert kinds(f"signing_key = {'aB3x' * 8}") == []  # 2 bits


def test_a_key_like_exempt_name_yields_to_a_clearly_secret_value():
    value = fake(ALNUM, 21, 3) + "aZ9"
    assert HIGH_ENTROPY in kinds(f"secret_id\n= {value}")  # a line break: only the key-like rule reads it
    assert kinds(f"signing_id\n= {value}") == []
    assert HIGH_ENTROPY not in kinds(f"Xsecret_id\n= {value}")  # its words are `Xsecret` and `id`: no secret word


# -- shapes with a check ---------------------------------------------------------


def _base64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_a_base64_jwt_is_read_to_its_last_whole_block():
    # 33 characters: the shortest header and payload the JWT check takes, in
    # exactly 44 base64 characters; its last character is an `X` (`W` encoded).
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOjEW"
    encoded = _base64(jwt)
    assert (len(encoded), encoded[-1]) == (44, "X")
    assert "base64-encoded JSON Web Token" in kinds(f"cookie {encoded}")


def test_base64_that_decodes_to_no_text_is_not_a_jwt():
    assert kinds("cookie ZXlK" + "/" * 40) == []


def test_a_discord_shaped_name_needs_digits_in_its_first_and_last_parts():
    first, middle, last = "M" + fake(ALNUM, 22, 4) + "7", fake(ALNUM, 6, 5), fake(LOWER, 30, 6)
    assert kinds(f"the bot is {first}.{middle}.{last}") == []
    assert kinds(f"the bot is {first}.{middle}.{last}7") == ["Discord bot token"]


def test_a_card_number_of_one_repeated_digit_is_not_a_card():
    # 13 sixes pass Luhn's check and start as a card does.
    assert kinds("card 6666666666666 ok") == []


def test_a_phone_number_of_two_different_digits_is_a_phone_number():
    assert kinds("call 555-555-5556") == ["phone number"]
    assert kinds("call 555-555-5555") == []


# -- redacting many texts at once ------------------------------------------------


def test_redact_all_redacts_each_text_and_counts_the_secrets():
    secret = f'api_key = "{fake(ALNUM, 20, 7)}"'
    texts, count = redact_all(["plain", secret, "more plain"])
    assert texts == ["plain", 'api_key = "[redacted: password or secret assignment]"', "more plain"]
    assert count == 1
    assert redact_all([]) == ([], 0)


def test_redact_all_takes_texts_with_a_nul_one_by_one():
    # Each text holds the separator of the joined pass: joined, they would split apart.
    secret = f'api_key = "{fake(ALNUM, 20, 8)}"'
    texts, count = redact_all(["a\n\x00\nb", f"{secret}\n\x00\n"])
    assert texts == ["a\n\x00\nb", 'api_key = "[redacted: password or secret assignment]"\n\x00\n']
    assert count == 1


def test_findings_and_redactions_are_in_order_of_position_not_of_rule_or_kind():
    first, second = (f'api_key = "{fake(ALNUM, 20, seed)}"' for seed in (9, 10))
    text = f"{first}, mail bob@corp.de, {second}"
    assert kinds(text) == [ASSIGNED, "email address", ASSIGNED]
    redacted, findings = redact(text)
    assert [finding.kind for finding in findings] == [ASSIGNED, "email address", ASSIGNED]
    assert redacted == (
        'api_key = "[redacted: password or secret assignment]", mail [redacted: email address], '
        'api_key = "[redacted: password or secret assignment]"'
    )


# -- findings side by side ---------------------------------------------------------


def test_a_secret_right_after_another_is_found_too():
    header = "-----BEGIN EC PRIVATE KEY-----"
    assert kinds(header + "gho_" + fake(ALNUM, 36, 14)) == ["private key block", "GitHub token"]
    aws = "aws key AKIA" + fake(UPPER_ALNUM, 16, 15)
    openssh = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    assert kinds(aws + openssh) == ["AWS access key id", "private key block"]


def test_a_vendored_rule_s_secret_right_before_or_after_another_is_found_too():
    assert kinds("use ghp_" + fake(ALNUM, 36, 16) + "lin_api_" + fake(ALNUM, 40, 17)) == [
        "github-pat",
        "linear-api-key",
    ]
    rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    assert kinds("glpat-" + fake(ALNUM, 20, 18) + rsa) == ["gitlab-pat", "private key block"]


def test_every_match_of_a_rule_is_read_past_one_already_claimed_or_refused():
    value = "".join(c * 2 for c in exactly_three_and_a_half_bits("aB3x", "CdEf4g5h"))
    claimed = f'api_key = "{fake(ALNUM, 20, 19)}"'  # the key-like rule matches it too, after the assignment rule
    assert kinds(f"{claimed} and signing_key = {value}") == [ASSIGNED, HIGH_ENTROPY]
    assert kinds(f"password=changeme and password={fake(ALNUM, 12, 20)}Z9") == [ASSIGNED]


def test_vendored_rules_report_beside_grimoire_s_own_and_each_other_and_are_redacted():
    nineteen = fake(ALNUM, 16, 1) + "aZ9"
    text = f'mail bob@corp.de\nclient_secret_id = "{nineteen}"\nother_secret_id = "{nineteen[::-1]}"'
    assert kinds(text) == ["email address", "generic-api-key", "generic-api-key"]
    redacted, _ = redact(text)
    assert nineteen not in redacted and nineteen[::-1] not in redacted
    assert redacted.endswith('"[redacted: generic-api-key]"')


def test_an_entry_without_text_has_no_findings():
    assert scan_fields({}) == []
    assert scan_fields({"importance": 5}) == []


# -- where a finding is -----------------------------------------------------------


def test_a_finding_after_two_line_breaks_is_placed_from_the_last_one():
    secret = f'api_key = "{fake(ALNUM, 20, 11)}"'
    assert scan(f"one\ntwo\nthe {secret}") == [Finding(ASSIGNED, 3, 16)]


def test_an_entry_s_findings_are_placed_in_their_own_field_in_field_order():
    secret, other = (f'api_key = "{fake(ALNUM, 20, seed)}"' for seed in (12, 13))
    entry = {
        "summary": f"one\ntwo {secret}",
        "content": "mail bob@corp.de\nand " + secret,  # repeated: reported where it first appears
        "source": {"session_id": f"x\n{other}"},
    }
    assert scan_fields(entry) == [
        ("summary", Finding(ASSIGNED, 2, 16)),
        ("content", Finding("email address", 1, 6)),
        ("source.session_id", Finding(ASSIGNED, 2, 12)),
    ]


# -- private sections ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("one\ntwo </private> three", "</private> at line 2, col 5 has no <private>"),
        ("a <PRIVATE> b", "<private> at line 1, col 3 has no </private>"),
    ],
)
def test_an_unpaired_private_tag_is_refused_with_its_place_and_what_to_do(text, said):
    with pytest.raises(BadInput) as refused:
        strip_private(text)
    assert refused.value.message == said
    assert refused.value.hint == "close the private section (it is removed before writing), or remove the tag"


def test_a_private_section_between_a_space_and_a_tab_leaves_the_tab():
    assert strip_private("a <private>x</private>\tb") == "a\tb"
    assert strip_private("a <private>x</private> b") == "a b"
