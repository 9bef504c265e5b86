"""How to make a test hermetic: one text per channel, wherever the reach (or write) was caught.

The refusing shims and provider (`refuse`), the in-process guards' exception
(`inprocess.refusal`) and the pytest plugin's failure message all show these
texts, so a test author reads the same advice whichever layer refused. The
refusers' and the hard seal's texts are here; each in-process guard declares
its own (`inprocess.declaration`), and `for_channel` finds either.

Imports nothing at module scope: the shims load it on their `python3 -I -S`
fast path, and their channels never need the in-process guards' texts.
"""

from __future__ import annotations

# Each text follows "To make the test hermetic:". Lines carry no indentation:
# `for_channel` indents them for the message they go in.
_BY_CHANNEL: dict[str, str] = {
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
    "ambient-write": (
        "point the code at a directory of the test's own (tmp_path: HOME, XDG_DATA_HOME or the\n"
        "application's own variable set in the environment the test gives it); a path the suite\n"
        "must write goes under [outputs] in cloudguard.toml, with a reason."
    ),
    "tracked-write": (
        "write into tmp_path, not into the checkout; a file the suite regenerates on purpose\n"
        "goes under [outputs] in cloudguard.toml, with a reason (or into .gitignore)."
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
    elif via in _BY_CHANNEL:
        text = _BY_CHANNEL[via].format(variable=variable)
    else:
        from cloudguard.guard import inprocess  # not on the refusers' channels: the shims skip it

        text = inprocess.hint(via) or _OTHERWISE
    return text.replace("\n", "\n" + indent)
