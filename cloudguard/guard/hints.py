"""How to make a test hermetic: one text per channel, wherever the reach was caught.

The refusing shims and provider (`refuse`), the in-process guards' exception
(`inprocess.refusal`) and the pytest plugin's failure message all show these
texts, so a test author reads the same advice whichever layer refused.

Imports nothing: the shims load it on their `python3 -I -S` fast path, and
every sealed Python child may load it when a guard refuses.
"""

from __future__ import annotations

# Each text follows "To make the test hermetic:". Lines carry no indentation:
# `for_channel` indents them for the message they go in.
_BY_CHANNEL: dict[str, str] = {
    "botocore": (
        "mock AWS in process (moto's @mock_aws, botocore's Stubber, a vcrpy cassette),\n"
        "or point the client at a loopback endpoint_url (moto's ThreadedMotoServer(port=0))."
    ),
    "azure-core": (
        "mock Azure above the socket (responses, requests-mock, a vcrpy cassette;\n"
        "aioresponses for .aio clients), give the client an in-process transport\n"
        "(transport=...) and a fake credential, or point it at a local fake on loopback\n"
        "over HTTPS (base_url='https://127.0.0.1:PORT', a trustme certificate)."
    ),
    "socket": (
        "connect to a local fake on loopback instead of the cloud host. Instance metadata\n"
        "(169.254.169.254 and friends) is never reachable from a test: pass the test's\n"
        "own fake credentials explicitly."
    ),
    "provider": (
        "name the test's own fake provider in the environment it gives its subprocess\n"
        "({variable}=/path/to/fake-provider on the test's own command line)."
    ),
    "shim": (
        "put a fake `{tool}` of the test's own on PATH ahead of the guard\n"
        "(a fakebin directory the test prepends to its subprocess's PATH)."
    ),
    "hard": (
        "point the program at a local fake on loopback (a forwarded port for a fake\n"
        "outside the seal): nothing else leaves the hard seal's network namespace."
    ),
}
_OTHERWISE = "point it at a local fake on loopback."
SHIM_SUFFIX = "-shim"  # az-shim, aws-shim, ...: the refusing CLI shims' `via`
HARD_PREFIX = "hard-"  # hard-tcp, hard-udp, hard-ip: the hard seal's sink


def for_channel(via: str, *, variable: str = "PROVIDER_VARIABLE", indent: str = "") -> str:
    """The advice for a reach recorded `via` this channel, lines after the first indented.

    `variable`: the provider variable to name (the registry's), for the provider's advice.
    """
    if via.endswith(SHIM_SUFFIX):
        text = _BY_CHANNEL["shim"].format(tool=via.removesuffix(SHIM_SUFFIX))
    elif via.startswith(HARD_PREFIX):
        text = _BY_CHANNEL["hard"]
    else:
        text = _BY_CHANNEL.get(via, _OTHERWISE).format(variable=variable)
    return text.replace("\n", "\n" + indent)
