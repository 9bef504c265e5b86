"""A listener on 127.0.0.1 never receives a real identity's token.

The attack (tracker issue "Trust nothing the run did not make"): another
local user plants `cloudguard.toml` in a shared parent directory naming
`credential = "cli"`, a loopback management endpoint and her own CA, and
listens there. A plain `cloudguard audit --provider azure` below it used to
send the victim's `az login` token to her listener. Two independent walls
now stop it, each proved here with a control showing the listener would
have received a bearer token:

1. the planted file is not read (outside the repository, and not the
   victim's own): exit 97 naming it;
2. even the victim's own file, trusted, cannot pair a real credential with
   a loopback endpoint: only `fake-arm` talks to loopback (the kernel's one
   rule for every cloud, cloudguard.cloud.endpoints; its negative control is
   tests/cloud/test_endpoint_rule_controls.py).

(An untrusted file of the victim's own may not name a credential, an
endpoint or a CA at all: tests/audit/test_audit_trust_keys.py.)
"""

from __future__ import annotations

import http.server
import os
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme
from named_checks import broken
from trusted_config import write_trusted

SUB = "0b1f6471-1bf0-4dda-aec3-111111111111"
# What the victim's `az account get-access-token` would print: a real-looking token.
FAKE_AZ = (
    "#!/bin/sh\n"
    """echo '{"accessToken": "VICTIM-REAL-TOKEN", "expiresOn": "2099-01-01 00:00:00.000000",'\n"""
    f"""echo '"expires_on": 4070908800, "subscription": "{SUB}", "tenant": "t"}}'\n"""
)


class Listener:
    """The attacker's HTTPS listener on loopback: records every Authorization header."""

    def __init__(self, tmp_path: Path) -> None:
        ca = trustme.CA()
        self.ca_pem = tmp_path / "attacker-ca.pem"
        ca.cert_pem.write_to_path(str(self.ca_pem))
        self.authorizations: list[str] = []
        seen = self.authorizations

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.headers.get("Authorization", ""))
                body = b'{"error": {"code": "NotFound", "message": "nothing here"}}'
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def bearers(self) -> list[str]:
        return [a for a in self.authorizations if a.lower().startswith("bearer ")]


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[Listener]:
    running = Listener(tmp_path)
    running.thread.start()
    try:
        yield running
    finally:
        running.server.shutdown()
        running.server.server_close()


def victim_env(tmp_path: Path) -> dict[str, str]:
    """The victim's shell: `az` logged in (a fake `az` that prints a token), her own HOME."""
    fakebin = tmp_path / "fakebin"
    fakebin.mkdir()
    (fakebin / "az").write_text(FAKE_AZ)
    (fakebin / "az").chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "IDENTITY_"))}
    env.update(PATH=f"{fakebin}:/usr/bin:/bin", HOME=str(home), COLUMNS="200")
    return env


def planted_config(
    directory: Path, listener: Listener, credential: str, *, trusted: bool = False
) -> Path:
    """The file naming the listener; `trusted`: the victim's own, which she trusted
    (`cloudguard trust`), so only the loopback rule stands between her token and it."""
    path = directory / "cloudguard.toml"
    text = (
        "[audit]\n"
        f'credential = "{credential}"\n'
        f'management-endpoint = "{listener.url}"\n'
        f'ca-bundle = "{listener.ca_pem}"\n'
    )
    if trusted:
        write_trusted(path, text)
    else:
        path.write_text(text)
    path.chmod(0o644)
    return path


def audit(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cloudguard", "audit", "--provider", "azure",
         "--subscription", SUB, "--format", "json"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_file_planted_in_a_shared_parent_is_refused_and_no_token_leaves(
    tmp_path: Path, listener: Listener
) -> None:
    shared = tmp_path / "shared"  # say /srv/builds, with a repository's .git at its top
    victim_dir = shared / "victim" / "work"
    victim_dir.mkdir(parents=True)
    (shared / ".git").mkdir()
    planted = planted_config(shared, listener, "cli")
    if os.geteuid() == 0:
        os.chown(planted, 65534, 65534)  # another user's file (nobody)
    else:
        planted.chmod(0o666)  # a file anyone could have rewritten

    result = audit(victim_dir, victim_env(tmp_path))

    assert result.returncode == 97, result.stderr
    reason = "owned by uid 65534" if os.geteuid() == 0 else "writable by group or others"
    assert f"{planted}: {reason}" in result.stderr
    assert listener.authorizations == [], "the planted endpoint was contacted"


def test_a_real_credential_never_gets_a_token_for_a_loopback_endpoint(
    tmp_path: Path, listener: Listener
) -> None:
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    # The victim's own file, say copied from a snippet, and trusted.
    planted_config(work, listener, "cli", trusted=True)

    result = audit(work, victim_env(tmp_path))

    assert listener.bearers() == [], broken(
        "no-real-token-to-a-loopback-endpoint", "a real token reached the loopback listener"
    )
    assert result.returncode == 75, result.stderr
    assert "answered only by the 'fake-arm' credential" in result.stderr


def test_control_the_listener_does_receive_a_bearer_token(
    tmp_path: Path, listener: Listener
) -> None:
    """Without that rule the same listener gets a token: fake-arm's, the one allowed there."""
    work = tmp_path / "repo"
    (work / ".git").mkdir(parents=True)
    planted_config(work, listener, "fake-arm", trusted=True)

    audit(work, victim_env(tmp_path))

    assert listener.bearers() == ["Bearer fake-arm-token"] * len(listener.bearers())
    assert listener.bearers(), "the listener never saw a bearer token: the proof above is empty"
