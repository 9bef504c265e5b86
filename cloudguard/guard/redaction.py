"""What in a command line is a secret, judged by what each argument IS, not by an exact list.

Stdlib only, no `re`, and cheap: the refusing shims import it on their fast
path. Over-redaction costs a diagnostic; under-redaction writes a password
into a log and onto a terminal, so every rule leans to hiding.

- an option whose name contains a secret word (`--admin-password`,
  `--master-user-password`, `--sas-token`, `--account-key`, `--client-secret`,
  `--federated-token`, ...), in both spellings (`--opt X`, `--opt=X`);
- a positional setting name of that kind followed by its value
  (`aws configure set aws_secret_access_key X`);
- `NAME=VALUE` with a secret-like name, or any secret word in a shorthand or
  JSON structure (`ParameterKey=DBPassword,ParameterValue=X`, `{"Password": X}`);
- URL user-info (`https://user:X@host`) and query strings carrying a
  signature, a credential or a token (SAS, presigned URLs);
- values that look like secrets wherever they stand: connection strings,
  JWTs, AWS access key ids, PEM private keys, bearer tokens.

`redact_argv` applies these rules to a whole command line, bounded so that
a huge argv cannot make a huge record: the reach log's records carry its
result (cloudguard.guard.reach).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

REDACTED = "<redacted>"
# Bounds so that a huge argv cannot make a huge record (or a slow write).
MAX_ARG_CHARS = 2048
MAX_ARGS = 256

# A name containing one of these (lower-cased) names a secret. Substrings on purpose:
# `--admin-password`, `--windows-admin-password`, `--master-user-password`, `--sse-c-key`.
SECRET_WORDS = (
    "pass",  # password, passwd, passphrase, password-stdin
    "pwd",
    "secret",
    "token",
    "key",
    "sas",
    "signature",
    "cred",  # credential(s), cred-file
    "connection-string",
    "connectionstring",
    "connstr",
    "auth",  # authorization headers, auth tokens
    "bearer",
    "private",
    "cookie",
    "certificate",
)
# Whole names that are secrets although they contain no secret word.
SECRET_NAMES = frozenset({"p", "sig", "value", "values", "plaintext", "sv"})
# Fragments that mark a value as secret-bearing whatever option (if any) precedes it.
SECRET_FRAGMENTS = (
    "accountkey=",
    "sharedaccesskey=",
    "sharedaccesssignature=",
    "?sig=",
    "&sig=",
    "password=",
    "pwd=",
    "secret=",
    "token=",
    "private key-----",
    "bearer ",
    "basic ",
)
_ALNUM_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_SETTING_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_./-")


def is_secret_name(name: str) -> bool:
    """An option, setting or key name that holds a secret (`--admin-password`, `sig`)."""
    lowered = name.lstrip("-").lower()
    return lowered in SECRET_NAMES or any(word in lowered for word in SECRET_WORDS)


def is_secret_value(text: str) -> bool:
    """A value that carries a secret: connection strings, SAS, JWTs, AWS key ids, PEM keys."""
    lowered = text.lower()
    if any(fragment in lowered for fragment in SECRET_FRAGMENTS):
        return True
    for word in text.replace("=", " ").replace(":", " ").split():
        if word.startswith("eyJ") and word.count(".") == 2:  # a JWT: header.payload.signature
            return True
    for marker in ("AKIA", "ASIA"):  # an AWS access key id: marker + 16 upper-case alphanumerics
        at = text.find(marker)
        while at != -1:
            if len(text) >= at + 20 and set(text[at + 4 : at + 20]) <= _ALNUM_UPPER:
                return True
            at = text.find(marker, at + 1)
    return False


def is_option(text: str) -> bool:
    """`--name`, `-p`, `--name=value`; not `-1`, not a PEM armour line."""
    return len(text) > 1 and text[0] == "-" and not text[1:2].isdigit() and " " not in text


def names_a_secret_setting(text: str) -> bool:
    """A positional setting name whose value follows: `aws_secret_access_key`, `auth/token`."""
    lowered = text.lower()
    return (
        bool(lowered)
        and lowered[0] not in "./"
        and set(lowered) <= _SETTING_CHARS
        and ("_" in lowered or "/" in lowered)
        and is_secret_name(lowered)
    )


def redact_value(text: str) -> str:
    """One argument that is not an option name, made safe to record."""
    if is_secret_value(text):
        return REDACTED
    if "://" in text:
        return _redact_url(text)
    lowered = text.lower()
    if text[:1] in "{[":
        return REDACTED if any(word in lowered for word in SECRET_WORDS) else text
    name, eq, value = text.partition("=")
    if eq and name:
        # NAME=VALUE, or a shorthand (`ParameterKey=DBPassword,ParameterValue=X`) that names
        # a secret anywhere: keep the first name, hide the rest.
        if (
            any(word in lowered for word in SECRET_WORDS)
            or lowered.partition("=")[0] in SECRET_NAMES
        ):
            return f"{name}={REDACTED}"
        if "://" in value:
            return f"{name}={_redact_url(value)}"
    return text


def _redact_url(text: str) -> str:
    scheme, sep, rest = text.partition("://")
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        userinfo, _, host = authority.rpartition("@")
        user = userinfo.partition(":")[0]
        authority = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{REDACTED}@{host}"
    path, question, query = tail.partition("?")
    if not question and "?" in authority:  # `https://host?sig=...` without a path
        authority, question, query = authority.partition("?")
    if question:
        keys = [pair.partition("=")[0] for pair in query.split("&")]
        if any(is_secret_name(key) for key in keys):
            query = REDACTED
    return f"{scheme}{sep}{authority}{slash}{path}{question}{query}"


def printable(arg: str | bytes) -> str:
    """An argv element as text; bytes that are not UTF-8 become backslash escapes."""
    # os.fsencode, without importing `os` on the refusers' path.
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    raw = arg if isinstance(arg, bytes) else arg.encode(encoding, errors)
    text = raw.decode("utf-8", "backslashreplace")
    if len(text) > MAX_ARG_CHARS:
        text = text[:MAX_ARG_CHARS] + f"...<{len(text) - MAX_ARG_CHARS} more chars>"
    return text


def redact_argv(argv: Sequence[str | bytes]) -> list[str]:
    """argv made safe to record: every secret hidden by what it is, bounded in size."""
    out: list[str] = []
    hide_next = False
    for arg in list(argv)[:MAX_ARGS]:
        text = printable(arg)
        if hide_next:
            hide_next = False
            if not text.startswith("--"):  # a flag-like secret option is followed by an option
                out.append(REDACTED)
                continue
        if is_option(text):
            option, eq, value = text.partition("=")
            if is_secret_name(option):
                out.append(f"{option}={REDACTED}" if eq else text)
                hide_next = not eq
            else:
                out.append(f"{option}={redact_value(value)}" if eq else text)
            continue
        if names_a_secret_setting(text):  # `aws configure set aws_secret_access_key VALUE`
            hide_next = True
        out.append(redact_value(text))
    if len(argv) > MAX_ARGS:
        out.append(f"...<{len(argv) - MAX_ARGS} more args>")
    return out
