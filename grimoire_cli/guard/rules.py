"""What the guard looks for: one rule per kind of secret or personal data.

A rule is a regex, an optional check on its match, and a gate: a
necessary condition for a finding, read off the pattern and the check
(literals it cannot match without, a least number of the digits its `\\d`
matches, a short shape it must contain). Most text passes few gates, so
most regexes never run; tests/test_guard.py checks every positive sample
gives the same findings with and without the gates. No rule with a digit
gate matches a line break, so its digits lie on one line (guard.scan_fields
counts them per field).

When a pattern has groups, the secret itself (the value of an assignment,
the password of a URL) is group `v1` or `v2` when it names them, else
group 1: that is what a finding points at and what `redact` replaces. Patterns are specific (vendor prefixes and lengths,
checksums: Luhn for cards, mod-97 for IBANs), so ordinary engineering text
— SHAs, UUIDs, versions, URLs without credentials, code that names a
`token` — passes.
"""

from __future__ import annotations

import base64
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _iban_ok(text: str) -> bool:
    compact = text.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in moved)
    return int(number) % 97 == 1


def entropy(value: str) -> float:
    """Shannon entropy of a string's characters, in bits per character."""
    size = len(value)
    return -sum(c / size * math.log2(c / size) for c in Counter(value).values())


def _card_ok(text: str) -> bool:
    digits = re.sub(r"\D", "", text)
    return 13 <= len(digits) <= 19 and digits[0] in "3456" and _luhn(digits) and len(set(digits)) > 1


def _phone_ok(text: str) -> bool:
    digits = re.sub(r"\D", "", text)
    return 9 <= len(digits) <= 15 and len(set(digits)) > 1


# Values that stand for a secret without being one: `<password>`, `${VAR}`,
# `$VAR`, `{{ var }}`, `%(name)s`, `***`, `xxx`, `...`, and the usual words.
PLACEHOLDER = re.compile(
    r"^(<.*>|\$\{.*|\$\(.*|\$\w+|\{\{.*|%\(\w+\)s|\*+|x+|X+|\.\.\.|…|changeme|change-me|redacted|example|"
    r"none|null|nil|true|false|secret|password|token|your[_\-\w]*|my[_\-\w]*|some[_\-\w]*|dummy|test|placeholder|hidden)$",
    re.I,
)
# A value that is code, not a literal: a call, a subscript, a mapping, a
# tuple, an attribute path or a shell command's output (`get_token()`,
# `tokens[0]`, `self.password`, `{self.token!r}`, `(a, b)`, `` `vault read x` ``).
_CODE = re.compile(r"^[A-Za-z_][\w.]*[(\[{]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|^[(\[{`]")
# Punctuation that ordinary values are made of (dates, paths, versions, URLs).
_PLAIN_PUNCTUATION = set("-._/:@")


_OPENING = {")": "(", "]": "[", "}": "{"}


def _brackets_nest(value: str) -> bool:
    """Whether every closing bracket in `value` closes the last one opened
    (brackets left open are fine: a bare value ends at a space)."""
    opened: list[str] = []
    for char in value:
        if char in "([{":
            opened.append(char)
        elif char in _OPENING and (not opened or opened.pop() != _OPENING[char]):
            return False
    return True


def is_code(value: str) -> bool:
    """Whether an unquoted value is code: a call, subscript or attribute path
    whose brackets nest (`get_pw(user`, `tokens[0]`), not random text (`m{{h}o)p`)."""
    return bool(_CODE.match(value)) and _brackets_nest(value)


def secretish(value: str, quoted: bool = False) -> bool:
    """Whether the value given to a secret-meaning name looks like a real
    credential: at least 8 characters, no spaces (prose), not a placeholder,
    not code (unless quoted), and either two kinds of character beyond plain
    punctuation (letters and digits, say) or long and random-looking letters."""
    if len(value) < 8 or PLACEHOLDER.match(value) or (not quoted and is_code(value)) or any(c.isspace() for c in value):
        return False
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() and c not in _PLAIN_PUNCTUATION for c in value)
    if not (digit or symbol):  # letters only: a word or an identifier, unless random
        return len(value) >= 16 and entropy(value) >= 3.5 and lower and upper
    return lower + upper + digit + symbol >= 2


class Rule(NamedTuple):
    kind: str
    pattern: str
    check: Callable[[re.Match], bool] | None
    literals: tuple[str, ...]  # the match holds one of them (a lowercase one: in any case)
    digits: int  # the text holds at least this many digits
    shape: str | None  # a regex the text must hold somewhere


# Names that mean a secret, in any spelling: snake, kebab, camel, dotted,
# upper, with words around them (`DB_PASSWORD`, `clientSecret`, `api-key`).
# `pass` and `pw` alone only as a word of their own (`REDIS_PASS`, `dbPass`,
# `MYSQL_PW`, not `bypass`, `passenger`, `compass_heading`).
_WORD_START = r"(?:(?<![A-Za-z])|(?<=[a-z])(?-i:(?=[A-Z])))"
_SECRET_NAME = (
    r"(?:[A-Za-z_][\w.\-]*)?(?:pass(?:word|wd|phrase|code)|"
    + _WORD_START
    + r"(?:pass|pw)(?![a-z])|pwd|pswd|secret|token|"
    r"api[_\-. ]?key|apikey|access[_\-.]?key|private[_\-.]?key|auth(?!or|en|ori)|credentials?)(?:[\w.\-]*)"
)
# A quoted value (`"…"`, `'…'`, `` `…` ``, C#'s `@"…"`) is group v1; a bare one
# is v2, up to a space, a quote or a delimiter, less the closing brackets
# that end it (`f(password=Xy7…)`), so `m{{h}o)p…` is read whole and
# `get_pw(user))` as the call it is.
_QUOTED = r"@?(?P<q>[\"'`])(?P<v1>[^\"'`\n]{1,200})(?P=q)"
_BARE = r"(?P<v2>[^\s\"'`,;]{1,200}?)(?=[)}\]]*(?:[\s\"'`,;]|$))"
_ASSIGNED = (
    # name (an index `[]`, `[25]` after it, or a string type: Go's
    # `token string`, TypeScript's `token: string`), an optional closing
    # quote, then an assignment in any language's syntax (`=`, `:`, `=>`,
    # `:=`, `::=`, `:::=`, `?=`, `.=`) or a comparison (`==`, `===`, `!=`,
    # `!==`: the checks take only a quoted value after one), then the value.
    r"(?i)(?<![\w-])(?P<n>"
    + _SECRET_NAME
    + r")(?:\[\d*\]|[ \t]*:?[ \t]*(?-i:string|String|str|&str|\[\]byte)\??)?[\"']?[ \t]*"
    r"(?P<op>=>|:{1,3}=|[?.]=|={1,3}|!==?|:(?![:=]))[ \t]*(?:" + _QUOTED + "|" + _BARE + ")"
)
# A quoted value compared with a secret's name: `if ("…" == password)`.
_COMPARED = r"(?i)" + _QUOTED + r"[ \t]*(?P<op>={2,3}|!==?)[ \t]*(?P<n>" + _SECRET_NAME + r")"
# A name and a value given to a call: `setProperty("X_TOKEN", "…")`.
_ARGUMENTS = r"(?i)[\"'](?P<n>" + _SECRET_NAME + r")[\"'][ \t]*,[ \t]*" + _QUOTED
# An XML element named like a secret: `<apiToken>…</apiToken>`.
_ELEMENT = r"(?i)<(?P<n>" + _SECRET_NAME + r")>\s*(?P<v1>[^<\s]{1,200})\s*</"
# A name, a space and the value (`auth_token Qm7f…`, `password "…"`): prose
# reads so too (`the auth token is rotated`), so a bare value must look random.
_SPACED = (
    r"(?i)(?<![\w-])(?P<n>"
    + _SECRET_NAME
    + r")[ \t]+(?:"
    + _QUOTED
    + r"|(?P<v2>[A-Za-z0-9+/=_\-]{16,200})(?![^\s,;.)]))"
)
_FLAG = (
    r"(?i)(?<![\w-])--(?P<n>"
    + _SECRET_NAME
    + r")(?:=|[ \t]+)(?:(?P<q>[\"'])(?P<v1>[^\"'\n]{1,200})(?P=q)|(?P<v2>[^\s\"'-][^\s\"']{0,199}))"
)


def _value(match: re.Match) -> str:
    """The value a match gives its name: the quoted one (group v1), else the bare one (v2)."""
    found = match.groupdict()
    return found["v1"] if found.get("v1") is not None else found["v2"]


def _quoted(match: re.Match) -> bool:
    return match.groupdict().get("v1") is not None


# A name that is a password's (it ends in the word: `DB_PASSWORD`, not
# `password_hint` or `PASSWORD_FILE`), and a value made of dictionary words:
# one run of 16+ letters (`correcthorsebatterystaple`, a capital first at
# most) or three or more words joined by `-` or `_`. Tokens and keys are
# never plain words, so only passwords get this reading.
_PASSWORD_NAME = re.compile(r"(?i)(?:pass(?:word|wd|phrase|code)?|pwd|pswd|(?<![a-z])pw)$")
_PASSPHRASE = re.compile(r"[A-Za-z][a-z]{15,63}|[A-Za-z]{2,}(?:[-_][A-Za-z]{2,}){2,}")


# A secret-sounding name that holds no secret: what names one (`credentialsId`,
# `LLM_SECRET_NAME`, `issuerKeyHash`, `KeySize`), a public or database key
# (`public_key`, `primaryKey`), or a collection (`keyVaultToStoreSecrets`).
_NOT_SECRET_LAST = frozenset(
    "id ids name names url uri hash size len length chars str type file path format meshing secrets tokens keys".split()
)
# The last word of a setting about secrets (`token_budget`, `password_policy`,
# `auth_mode`, `refresh_token_ttl`): its values (`us-east-1`, `argon2id`,
# `oauth2-pkce`, `P30DT12H`) have a secret's two kinds of character, but only
# a clearly random one is a secret there.
_SETTING_LAST = frozenset(
    "policy budget limit quota ttl expiry expiration lifetime rotation days minute timeout rate "
    "mode method provider backend manager store hashing algorithm region version".split()
)
_NOT_SECRET_WORD = frozenset("public pub pubkey primary foreign".split())
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
# A run of the alphabet or the digits in order: a character set, not a secret.
_ALPHABET = re.compile(r"(?i)abcdefghij|0123456789")


# A Maven coordinate (`io.jsonwebtoken:jjwt-jackson:0.11.2`): a package, a colon, an artifact.
_COORDINATE = re.compile(r"[a-z][a-z0-9]*(?:\.[a-z][a-z0-9]*)+:[a-z]")


# Words that make a name a secret's whatever follows them: `client_secret_id`
# given 40 random characters holds the secret, not an id of it.
_SECRET_WORD = frozenset("secret password passwd passphrase pwd pswd pass pw private".split())


def clearly_secret(value: str) -> bool:
    """Whether a value is a credential whatever its name says: 20+ random
    characters of both cases and digits (not a UUID or a hex digest, which ids are)."""
    return (
        len(value) >= 20
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and random_looking(value)
    )


def names_a_setting(name: str, value: str) -> bool:
    """Whether `name` is a setting about secrets (`password_policy`, `auth_mode`) and `value` not clearly a secret."""
    words = _WORDS.findall(name)
    return bool(words) and words[-1].lower() in _SETTING_LAST and not clearly_secret(value)


def names_no_secret(name: str, value: str = "") -> bool:
    """Whether a secret-sounding name (`credentialsId`, `public_key`) is one
    that never holds a secret — unless it names a secret outright
    (`client_secret_id`) and `value` is clearly one; or a setting about
    secrets (`token_ttl`), whose `value` is not clearly one."""
    if names_a_setting(name, value):
        return True
    words = [word.lower() for word in _WORDS.findall(name)]
    exempt = bool(words) and (words[-1] in _NOT_SECRET_LAST or any(word in _NOT_SECRET_WORD for word in words))
    return exempt and not (_SECRET_WORD.intersection(words) and clearly_secret(value))


def _name(match: re.Match) -> str:
    """The name assigned to in a match: its group `n`, else what precedes the first quote, space or operator."""
    if "n" in match.re.groupindex:
        return match.group("n")
    return re.split(r"[\"'\s=:>]", match.group(), maxsplit=1)[0].lstrip("-")


_COMPARISONS = frozenset(("==", "===", "!=", "!=="))


def _assigned_ok(match: re.Match) -> bool:
    value, name = _value(match), _name(match)
    if names_no_secret(name, value) or _ALPHABET.search(value) or _COORDINATE.match(match.group()):
        return False
    if match.groupdict().get("op") in _COMPARISONS and not _quoted(match):
        return False  # `token == expected`: a comparison of two names, not a literal
    if secretish(value, quoted=_quoted(match)):
        return True
    return bool(_PASSWORD_NAME.search(name) and _PASSPHRASE.fullmatch(value) and not PLACEHOLDER.match(value))


def random_looking(value: str) -> bool:
    """Whether a bare value reads as random, not a word or a name: letters and
    digits mixed (with both cases, or 24+ characters long) at a high entropy."""
    lower = any(c.islower() for c in value)
    upper = any(c.isupper() for c in value)
    digit = any(c.isdigit() for c in value)
    mixed = digit and ((lower and upper) or (len(value) >= 24 and (lower or upper)))
    return mixed and entropy(value) >= 3.5 and not PLACEHOLDER.match(value)


def _spaced_ok(match: re.Match) -> bool:
    """A name, a space, a value: a quoted value as after `=`; a bare one only when random (prose reads so too)."""
    return _assigned_ok(match) and (_quoted(match) or random_looking(_value(match)))


def _high_entropy_ok(match: re.Match) -> bool:
    value = match.group(1)
    return entropy(value) >= 3.5 and not names_no_secret(_name(match), value) and not _ALPHABET.search(value)


# What every secret-meaning name holds (in any case): the gate of the assignment rules.
_NAME_LITERALS = ("pass", "pw", "pswd", "secret", "token", "key", "auth", "credential")
_JWT_START = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}")


def _base64_jwt_ok(match: re.Match) -> bool:
    """Whether base64 text (`ZXlK…` is `eyJ` encoded) decodes to a JWT's header and payload."""
    text = match.group()
    whole = text.rstrip("=")[: len(text.rstrip("=")) // 4 * 4]  # whole 4-character blocks decode on their own
    try:
        decoded = base64.b64decode(whole, validate=True).decode("ascii")
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return False
    return _JWT_START.match(decoded) is not None


def _discord_ok(match: re.Match) -> bool:
    first, _, last = match.group().split(".")
    return any(c.isdigit() for c in first) and any(c.isdigit() for c in last)


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

# Order matters: the first kind that matches a span claims it.
RULES: list[Rule] = [
    Rule("private key block", r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY(?: BLOCK)?-----", None, ("-----BEGIN ",), 0, None),
    Rule("age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b", None, ("AGE-SECRET-KEY-",), 0, None),
    Rule(
        "AWS access key id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
        None,
        ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA"),
        0,
        None,
    ),
    Rule(
        "AWS secret access key",
        r"(?i)aws.{0,24}?(?:secret|private)?.{0,8}?key.{0,6}?[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        None,
        ("aws",),
        0,
        r"[A-Za-z0-9/+]{40}",
    ),
    Rule("GCP API key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", None, ("AIza",), 0, None),
    Rule(
        "Azure storage key",
        r"(?i)(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})",
        None,
        ("accountkey=", "sharedaccesskey="),
        0,
        None,
    ),
    Rule(
        "GitHub token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})\b",
        None,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        0,
        None,
    ),
    Rule(
        "GitLab token",
        r"\bgl(?:pat|dt|ptt|rt|cbt|imt|agent|oas|ft|soat)-[A-Za-z0-9_\-]{20,}",
        None,
        ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glimt-", "glagent-", "gloas-", "glft-", "glsoat-"),
        0,
        None,
    ),
    Rule("npm token", r"\bnpm_[A-Za-z0-9]{36}\b", None, ("npm_",), 0, None),
    Rule("PyPI token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}", None, ("pypi-AgE",), 0, None),
    Rule(
        "Slack token",
        r"\bxox[abposr]-\d+-[A-Za-z0-9\-]{8,}|https://hooks\.slack\.com/services/T[A-Za-z0-9]+/B[A-Za-z0-9]+/[A-Za-z0-9]+",
        None,
        ("xox", "https://hooks.slack.com/services/T"),
        0,
        None,
    ),
    Rule(
        "Stripe key",
        r"\b(?:sk|rk|pk|whsec)_(?:live|test)_[A-Za-z0-9]{16,}\b|\bwhsec_[A-Za-z0-9]{32,}\b",
        None,
        ("_live_", "_test_", "whsec_"),
        0,
        None,
    ),
    Rule("Twilio key", r"\bSK[0-9a-f]{32}\b", None, ("SK",), 0, None),
    Rule("SendGrid key", r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}\b", None, ("SG.",), 0, None),
    Rule("Mailgun key", r"\bkey-[0-9a-zA-Z]{32}\b", None, ("key-",), 0, None),
    Rule("Mailchimp API key", r"\b[0-9a-f]{32}-us\d{1,2}\b", None, ("-us",), 1, r"[0-9a-f]{32}-us"),
    Rule("Heroku API key", r"(?i)\bheroku[^\n]{0,40}?\b(" + _UUID + r")\b", None, ("heroku",), 0, None),
    Rule("Shopify token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", None, ("shp",), 0, None),
    Rule("Square token", r"\bsq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}", None, ("sq0",), 0, None),
    Rule("DigitalOcean token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", None, ("_v1_",), 0, None),
    Rule("Databricks token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", None, ("dapi",), 0, None),
    Rule("Vault token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", None, ("hvs.", "hvb.", "hvr."), 0, None),
    Rule("Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", None, ("dp.",), 0, None),
    Rule("Hugging Face token", r"\bhf_[A-Za-z]{34}\b", None, ("hf_",), 0, None),
    Rule("Linear API key", r"\blin_api_[A-Za-z0-9]{40}\b", None, ("lin_api_",), 0, None),
    Rule("Postman API key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", None, ("PMAK-",), 0, None),
    Rule(
        "Grafana token",
        r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|\bglc_[A-Za-z0-9+/]{32,}={0,2}",
        None,
        ("glsa_", "glc_"),
        0,
        None,
    ),
    Rule("Sentry token", r"\bsntry[su]_[A-Za-z0-9+/=_\-]{30,}", None, ("sntr",), 0, None),
    Rule("New Relic key", r"\bNRAK-[A-Z0-9]{27}\b", None, ("NRAK-",), 0, None),
    Rule("Groq API key", r"\bgsk_[A-Za-z0-9]{48,}\b", None, ("gsk_",), 0, None),
    Rule("Replicate token", r"\br8_[A-Za-z0-9]{37}\b", None, ("r8_",), 0, None),
    Rule("Notion token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})\b", None, ("secret_", "ntn_"), 0, None),
    Rule("Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{33}\b", None, (":AA",), 8, None),
    Rule("Anthropic API key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", None, ("sk-ant-",), 0, None),
    Rule(
        "OpenAI API key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        lambda m: bool(re.search(r"\d", m.group(0))),
        ("sk-",),
        1,
        None,
    ),
    # SoftLayer (IBM Cloud classic): a 64-character key after a SoftLayer key's name, or in its API's URL.
    Rule(
        "SoftLayer API key",
        r"(?i)(?:\b(?:softlayer|sl)[_\-]?(?:api[_\-]?)?key[\"']?[ \t]*(?::?=|:)[ \t]*[\"']?|api\.softlayer\.com/(?:soap|rest)/v3(?:\.1)?/)"
        r"([a-z0-9]{64})\b",
        None,
        ("softlayer", "sl_", "sl-", "slkey", "slapi"),
        0,
        r"[a-zA-Z0-9]{64}",
    ),
    # A Discord bot token: a user id in base64, a timestamp, an HMAC; digits in the first and last parts tell it from a dotted name.
    Rule(
        "Discord bot token",
        r"(?<![\w\-.])[MNO][A-Za-z\d_\-]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,38}(?![\w\-.])",
        _discord_ok,
        (),
        0,
        r"\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27}",
    ),
    # Signed or not: an unsigned token (`alg: none`, or its signature cut off) still carries its claims.
    Rule(
        "JSON Web Token",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]{8,})?",
        None,
        ("eyJ",),
        0,
        None,
    ),
    Rule(
        "base64-encoded JSON Web Token",
        r"(?<![A-Za-z0-9+/])ZXlK[A-Za-z0-9+/]{40,}={0,2}",
        _base64_jwt_ok,
        ("ZXlK",),
        0,
        None,
    ),
    Rule(
        "authorization header",
        r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest|apikey)\s+([A-Za-z0-9._~+/=\-]{8,})",
        lambda m: not PLACEHOLDER.match(m.group(1)),
        ("authorization",),
        0,
        None,
    ),
    Rule(
        "credentials in a URL",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s/:@\"'`]*:([^\s/@\"'`]+)@[^\s/@]+",
        lambda m: not PLACEHOLDER.match(m.group(1)),
        ("://",),
        0,
        None,
    ),
    Rule(
        "secret on a command line",
        _FLAG,
        _assigned_ok,
        ("--",),
        0,
        r"(?i)--[\w.\-]*(?:pass|pw|pswd|secret|token|key|auth|credential)",
    ),
    Rule(
        "password or secret assignment",
        _ASSIGNED,
        _assigned_ok,
        _NAME_LITERALS,
        0,
        r"(?:=>?|:)[ \t]*@?[\"'`]?[^\s\"'`]{8}",
    ),
    Rule("password or secret assignment", _COMPARED, _assigned_ok, _NAME_LITERALS, 0, r"[\"'`][ \t]*[=!]="),
    Rule(
        "password or secret assignment",
        _ARGUMENTS,
        _assigned_ok,
        _NAME_LITERALS,
        0,
        r"[\"'][ \t]*,[ \t]*@?[\"'`][^\"'`\n]{8}",
    ),
    Rule("password or secret assignment", _ELEMENT, _assigned_ok, _NAME_LITERALS, 0, r"</"),
    Rule(
        "password or secret assignment",
        _SPACED,
        _spaced_ok,
        _NAME_LITERALS,
        0,
        r"[ \t](?:@?[\"'`][^\"'`\n]{8}|[A-Za-z0-9+/=_\-]{16})",
    ),
    Rule(
        "high-entropy value for a key-like name",
        r"(?i)\b[\w.\-]*(?:key|secret|token|passw\w*|credential|auth)[\w.\-]*[\"']?\s*(?:=|:|=>)\s*[\"']?([A-Za-z0-9+/=_\-]{20,})(?![\w+/=\-(.])",
        _high_entropy_ok,
        ("key", "secret", "token", "passw", "credential", "auth"),
        0,
        r"[A-Za-z0-9+/=_\-]{20}",
    ),
    Rule(
        "email address",
        r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b(?!:)",
        None,
        ("@",),
        0,
        None,
    ),
    # Not inside a word: a hex digest or file name (`condensed 3e41…`, `9f4111….png`) holds digit runs that pass Luhn.
    Rule(
        "payment card number",
        r"(?<![\d\-.A-Za-z_])(?:\d[ \-]?){12,18}\d(?![\d\-.A-Za-z_])",
        lambda m: _card_ok(m.group(0)),
        (),
        13,
        None,
    ),
    Rule(
        "US social security number",
        r"(?<![\d\-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d\-])",
        None,
        ("-",),
        9,
        None,
    ),
    Rule(
        "IBAN",
        r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b",
        lambda m: _iban_ok(m.group(0)),
        (),
        2,
        r"[A-Z]{2}\d{2}",
    ),
    Rule(
        "phone number",
        r"(?<![\w.\-+])(?:\+\d{1,3}[ .\-]?(?:\(\d{1,4}\)[ .\-]?)?\d{1,4}(?:[ .\-]\d{2,8}){1,4}|\(\d{3}\) ?\d{3}[ .\-]\d{4}|"
        r"\d{3}[ .\-]\d{3}[ .\-]\d{4})(?![\w.\-])",
        lambda m: _phone_ok(m.group(0)),
        (),
        9,
        None,
    ),
]
