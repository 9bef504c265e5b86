"""A listener on 127.0.0.1 never receives the operator's AWS keys or session token.

The attack (issue 20): with the operator's keys in the environment,
`cloudguard audit --provider aws --management-endpoint http://127.0.0.1:PORT`
sent a SigV4 Authorization naming the operator's access key id, and the
session token, to whoever listened there (any local user can). The rule
every adapter asks (cloudguard.cloud.endpoints): a loopback endpoint gets the
fake's fixed keys (`--credential fake`) and nothing else. The listener is
real and records every request's headers; the control shows it does.
tests/cloud/test_endpoint_rule_controls.py breaks the rule in a copy and
requires the first test to go red for that reason.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from named_checks import broken

OPERATOR_KEY = "AKIAOPERATORREALKEY7"
OPERATOR_SECRET = "operator-real-secret-key-0123456789abcdef"
OPERATOR_TOKEN = "OPERATOR-REAL-SESSION-TOKEN"


class Listener:
    """Plain HTTP on loopback: records every request's headers, answers an EC2 error."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        seen = self.headers

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                seen.append(dict(self.headers.items()))
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                body = (
                    b"<Response><Errors><Error><Code>AuthFailure</Code>"
                    b"<Message>nothing here</Message></Error></Errors></Response>"
                )
                self.send_response(401)
                self.send_header("Content-Type", "text/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def carrying(self, secret: str) -> list[dict[str, str]]:
        """The requests any header of which carries `secret`."""
        return [h for h in self.headers if any(secret in value for value in h.values())]


@pytest.fixture
def listener() -> Iterator[Listener]:
    running = Listener()
    running.thread.start()
    try:
        yield running
    finally:
        running.server.shutdown()
        running.server.server_close()


def operator_env(tmp_path: Path) -> dict[str, str]:
    """The operator's shell: real-looking keys and a session token, no other AWS state."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    (tmp_path / "aws-config").write_text("")
    env.update(
        AWS_ACCESS_KEY_ID=OPERATOR_KEY,
        AWS_SECRET_ACCESS_KEY=OPERATOR_SECRET,
        AWS_SESSION_TOKEN=OPERATOR_TOKEN,
        AWS_CONFIG_FILE=str(tmp_path / "aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "aws-config"),
        AWS_EC2_METADATA_DISABLED="true",
        COLUMNS="200",
    )
    return env


def audit(listener: Listener, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cloudguard", "audit", "--provider", "aws", "--region",
         "us-east-1", "--management-endpoint", listener.url, "--retries", "1",
         "--format", "json", *extra],
        cwd=tmp_path, env=operator_env(tmp_path), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


def test_the_operators_keys_never_reach_a_loopback_endpoint(
    tmp_path: Path, listener: Listener
) -> None:
    result = audit(listener, tmp_path)

    leaked = listener.carrying(OPERATOR_KEY) + listener.carrying(OPERATOR_TOKEN)
    assert leaked == [], broken(
        "no-real-key-to-a-loopback-endpoint",
        f"the operator's AWS key reached the loopback listener: {leaked}",
    )
    assert result.returncode == 75, result.stderr
    assert "answered only by the 'fake' credential" in result.stderr, result.stderr


def test_control_the_listener_records_the_fake_keys_it_is_sent(
    tmp_path: Path, listener: Listener
) -> None:
    """The listener does see what is sent it: the fake's keys, and never the operator's."""
    audit(listener, tmp_path, "--credential", "fake")

    assert listener.carrying("Credential=cloudguard-fake/"), (
        f"the listener saw no SigV4 request: the proof above is empty ({listener.headers})"
    )
    assert listener.carrying(OPERATOR_KEY) == [] and listener.carrying(OPERATOR_TOKEN) == []
    assert not any("X-Amz-Security-Token" in h for h in listener.headers)


def test_real_keys_go_only_to_the_clouds_own_endpoints_over_https() -> None:
    from cloudguard_aws.session import ENDPOINTS

    from cloudguard.cloud.endpoints import EndpointRefused, credential_for

    for endpoint in (
        "https://attacker.example",
        "http://ec2.us-east-1.amazonaws.com",  # the real host, but in clear text
        "https://my-api.execute-api.us-east-1.amazonaws.com",  # anyone's API Gateway
        "https://ec2.us-east-1.amazonaws.com@attacker.example",
    ):
        with pytest.raises(EndpointRefused, match="not one of AWS's own endpoints"):
            credential_for(ENDPOINTS, endpoint, None)
            pytest.fail(
                broken("real-keys-only-to-the-clouds-own", f"real keys may go to {endpoint}")
            )
    for known in (
        "https://ec2.us-east-1.amazonaws.com",
        "https://ec2-fips.us-gov-west-1.amazonaws.com",
        "https://sts.amazonaws.com",
        "https://ec2.cn-north-1.amazonaws.com.cn",
        "https://ec2.eu-west-1.api.aws",
        "https://vpce-0a1b2c3d-xyz.ec2.us-east-1.vpce.amazonaws.com",
        # the other services the sweep, the reaper and the price list call
        "https://tagging.eu-west-1.amazonaws.com",
        "https://resource-explorer-2.us-east-1.api.aws",
        "https://elasticloadbalancing.us-east-1.amazonaws.com",
        "https://api.pricing.us-east-1.amazonaws.com",
    ):
        assert credential_for(ENDPOINTS, known, "prod") is False
    for other in (
        "https://s3.us-east-1.amazonaws.com",  # a service cloudguard never calls
        "https://apixpricing.us-east-1.amazonaws.com",  # the dot is a dot
    ):
        with pytest.raises(EndpointRefused, match="not one of AWS's own endpoints"):
            credential_for(ENDPOINTS, other, "prod")
            pytest.fail(f"real keys may go to {other}")


def operator_session(_request: object) -> object:
    import boto3

    return boto3.Session(
        aws_access_key_id=OPERATOR_KEY,
        aws_secret_access_key=OPERATOR_SECRET,
        aws_session_token=OPERATOR_TOKEN,
        region_name="us-east-1",
    )


def ask_for_a_price(listener: Listener, credential: str | None) -> str:
    """The price list and Resource Explorer at the listener's address, asked as the sweep
    asks them with the operator's keys in its chain; what each said."""
    from cloudguard_aws import explorer, prices
    from cloudguard_aws.session import open_session

    from cloudguard.cloud.endpoints import EndpointRefused
    from cloudguard.cloud.pricing import PriceListError, PriceQuery
    from cloudguard.cloud.records import SweepRequest

    settings = {"price_list_endpoint": listener.url, "resource_explorer_endpoint": listener.url}
    # The fake keys sweep only a loopback management endpoint; the operator's, AWS's own.
    endpoint = listener.url if credential == "fake" else None
    request = SweepRequest(endpoint=endpoint, credential=credential, retries=0, settings=settings)
    said = []
    price_list = prices.price_list(request, operator_session)
    assert price_list is not None
    try:
        price_list.prices([PriceQuery("vm", "m5.large", "us-east-1")])
    except PriceListError as error:
        said.append(str(error))
    try:  # the sweep's session, as the adapter makes it
        explorer.aggregator_region(open_session(request, operator_session), request, "us-east-1")
    except EndpointRefused as refused:
        said.append(str(refused))
    except Exception as error:  # the listener's 401 (the control)
        said.append(repr(error))
    return " | ".join(said)


def test_the_operators_keys_never_reach_a_loopback_price_list_or_explorer(
    listener: Listener,
) -> None:
    """--price-list-endpoint and --resource-explorer-endpoint are judged by the rule that
    judges --management-endpoint: a loopback one is never sent the operator's session."""
    said = ask_for_a_price(listener, credential=None)

    leaked = listener.carrying(OPERATOR_KEY) + listener.carrying(OPERATOR_TOKEN)
    assert leaked == [], broken(
        "no-operator-key-at-a-loopback-endpoint",
        f"the operator's AWS key reached the loopback listener: {leaked}",
    )
    assert listener.headers == [], listener.headers
    assert said.count("answered only by the 'fake' credential") == 2, said


def test_control_a_loopback_price_list_and_explorer_are_asked_with_the_fake_keys(
    listener: Listener,
) -> None:
    """The listener sees both questions when they may go there: the proof above is not
    empty because nothing was ever asked."""
    said = ask_for_a_price(listener, credential="fake")

    asked = listener.carrying("Credential=cloudguard-fake/")
    assert len(asked) >= 2, f"the listener was not asked twice with the fake keys: {said}"
    assert listener.carrying(OPERATOR_KEY) == [] and listener.carrying(OPERATOR_TOKEN) == []
