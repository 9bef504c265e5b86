"""The ambient seal: a seal directory and a sealed environment, built from a registry.

A seal is three things:

1. the registry (`cloudguard.guard.seal_registry`: the shipped `registry.toml`
   plus an optional project file): exact names and prefixes to drop, exempt
   prefixes, the provider variables to rebind, the CLI shims to place first
   on PATH;
2. the seal directory: the refusing shims and provider, and empty, owned
   credential stores (Azure CLI config, AWS config/credentials, gcloud
   config) that the SDKs and CLIs are pointed at instead of the operator's;
3. the sealed environment: the input environment minus every registry
   match, plus the redirections, the armed reach log, the provider binding
   and the guard bin first on PATH.

HOME is left alone on purpose: suites use it for git config, caches and
fixtures. Every credential store with an override variable is redirected;
the stores without one (`~/.IdentityService`, the VS Code auth record) can
only be used over the network, where the in-process guards refuse them.
What the seal owns here (its prefix, its redirections) is what a registry
may never rebind: the registry's validation reads it from this module.
See docs/guard.md.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cloudguard import private_files
from cloudguard.documents import reach_log
from cloudguard.escape import one_line
from cloudguard.guard import reach
from cloudguard.guard.policy import (
    KEPT_VARIABLE,
    RUNNER_PREFIX,
    Policy,
    declared_by_the_suite,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cloudguard.guard.seal_registry import Registry

SEAL_DIR_VARIABLE = "CLOUDGUARD_SEAL_DIR"
PROVIDER_SHIM = "cloudguard-refusing-provider"
SEAL_LINE_PREFIX = "CLOUDGUARD_AMBIENT_SEAL"
NOTHING_DROPPED = "(none)"  # what the seal line says when no variable was dropped
# First on PYTHONPATH in a sealed environment: its sitecustomize installs the in-process
# guards (botocore, azure-core, sockets) in every Python child. See cloudguard/guard/inprocess.
SITECUSTOMIZE_DIR = Path(__file__).with_name("_sitecustomize")


@dataclass(frozen=True)
class Seal:
    """A live seal directory: guard bin, refusing provider and empty credential stores."""

    root: Path

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def provider(self) -> Path:
        return self.bin_dir / PROVIDER_SHIM

    def redirections(self) -> dict[str, str]:
        """Credential stores and metadata services, pointed at nothing the operator owns."""
        return {
            "AZURE_CONFIG_DIR": str(self.root / "azure"),
            "AWS_CONFIG_FILE": str(self.root / "aws" / "config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.root / "aws" / "credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "CLOUDSDK_CONFIG": str(self.root / "gcloud"),
            "NO_GCE_CHECK": "True",
        }

    def sentinels(self) -> dict[str, str]:
        """Fake AWS credentials and region, as moto's docs tell tests to set.

        With the ambient credentials dropped, botocore would raise NoCredentialsError
        before any request and a swallowing test would pass unseen. With these it goes
        on to the connection, where the socket guard records the call by service and
        operation and refuses it. They grant nothing anywhere. A test that wants
        NoCredentialsError on purpose removes them itself (`monkeypatch.delenv`).
        """
        return dict(SENTINELS)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


SENTINEL = "cloudguard-sentinel-not-a-credential"
SENTINELS = {
    "AWS_ACCESS_KEY_ID": SENTINEL,
    "AWS_SECRET_ACCESS_KEY": SENTINEL,
    "AWS_SESSION_TOKEN": SENTINEL,
    "AWS_DEFAULT_REGION": "us-east-1",
}


def create_seal(
    registry: Registry,
    *,
    python: str | None = None,
    log: str | None = None,
    keepers: Sequence[str] = (),
) -> Seal:
    """Make a seal directory with the refusing shims, the provider and empty stores.

    `log` and `keepers` (the record keepers' addresses), when given, are written
    into every refuser: a child that scrubs its environment still records there.
    """
    seal = Seal(Path(tempfile.mkdtemp(prefix="cloudguard-seal-")))
    for store in ("bin", "azure", "aws", "gcloud"):
        (seal.root / store).mkdir(mode=0o700)
    for empty in ("config", "credentials"):
        (seal.root / "aws" / empty).write_bytes(b"")
    rules = policy(registry, seal)
    for tool in registry.shims:
        _write_refuser(
            seal.bin_dir / tool,
            python,
            via=f"{tool}-shim",
            tool=tool,
            policy=rules,
            log=log,
            keepers=keepers,
        )
    _write_refuser(
        seal.provider,
        python,
        via="provider",
        tool="provider",
        policy=rules,
        log=log,
        keepers=keepers,
    )
    return seal


def policy(registry: Registry, seal: Seal) -> Policy:
    """The seal's rules as a refuser (and `doctor`) applies them, without parsing TOML."""
    return Policy(
        names=registry.names,
        prefixes=registry.prefixes,
        exempt=(RUNNER_PREFIX, *registry.exempt_prefixes),
        owned={**seal.redirections(), **seal.sentinels()},
        provider_variables=registry.provider_variables,
    )


def _write_refuser(
    path: Path,
    python: str | None,
    *,
    via: str,
    tool: str,
    policy: Policy,
    log: str | None = None,
    keepers: Sequence[str] = (),
) -> None:
    package_parent = str(Path(__file__).resolve().parents[2])
    # -I -S: no site, no user site, no PYTHON* variables; starts about as fast as bare python.
    script = (
        f"#!{python or sys.executable} -IS\n"
        "# cloudguard refusing "
        + ("provider" if via == "provider" else "shim")
        + ": records the attempt, then refuses (exit 98).\n"
        "import sys\n"
        f"sys.path.append({package_parent!r})\n"
        "from cloudguard.guard.policy import Policy\n"
        "from cloudguard.guard.refuse import main\n"
        f"main(via={via!r}, tool={tool!r}, policy={policy!r}, log={_absolute(log)!r}, "
        f"keepers={list(keepers)!r})\n"
    )
    path.write_text(script, encoding="utf-8")
    path.chmod(0o755)


def _absolute(log: str | None) -> str | None:
    return os.path.abspath(log) if log else None


def sealed_environment(
    environ: Mapping[str, str],
    registry: Registry,
    seal: Seal,
    log: str,
    keepers: Sequence[str] = (),
) -> tuple[dict[str, str], list[str]]:
    """The environment to run under, and the sorted names that were dropped."""
    dropped = sorted(name for name in environ if registry.covers(name))
    dropped_set = set(dropped)
    env = {name: value for name, value in environ.items() if name not in dropped_set}
    for variable in registry.provider_variables:
        env[variable] = str(seal.provider)
    env[reach.LOG_VARIABLE] = log
    if keepers:
        env[reach.KEEPER_VARIABLE] = " ".join(keepers)
    env[SEAL_DIR_VARIABLE] = str(seal.root)
    env["PATH"] = guard_first(seal, environ.get("PATH", ""))
    env["PYTHONPATH"] = guards_first(environ.get("PYTHONPATH", ""))
    env.update(seal.sentinels())
    env.update(seal.redirections())  # last: nothing above may rebind a credential store
    return env, dropped


def keep_declared(environ: MutableMapping[str, str], names: Iterable[str]) -> None:
    """Name `names` as the suite's own for the processes it starts (xdist workers, nested
    sessions), which verify the seal they inherit against them."""
    kept = sorted(declared_by_the_suite(environ) | set(names))
    if kept:
        environ[KEPT_VARIABLE] = ",".join(kept)


def inherited_seal(environ: Mapping[str, str], registry: Registry) -> Seal | None:
    """The seal this process says it runs under, when that is verifiably true; else None.

    `CLOUDGUARD_REACH_LOG` and `CLOUDGUARD_SEAL_DIR` are only a claim (a stale
    shell, a copied environment, a seal dir that was removed). The claim is
    trusted when the seal dir is a live directory of the caller's, its guard bin
    is first on PATH, no identity variable is set, and the log is an armed log
    of the caller's. Otherwise the caller seals again; the reasons go to stderr.
    """
    if not (environ.get(reach.LOG_VARIABLE) or environ.get(SEAL_DIR_VARIABLE)):
        return None
    problems = inherited_seal_problems(environ, registry)
    if problems:
        sys.stderr.write(
            "cloudguard: the inherited seal does not hold (" + "; ".join(problems) + "): "
            "sealing again\n"
        )
        return None
    return Seal(Path(environ[SEAL_DIR_VARIABLE]))


def inherited_seal_problems(environ: Mapping[str, str], registry: Registry) -> list[str]:
    """Why the environment's claim to be sealed cannot be trusted; [] when it can."""
    root = environ.get(SEAL_DIR_VARIABLE, "")
    log = environ.get(reach.LOG_VARIABLE, "")
    if not root or not log:
        return [f"{SEAL_DIR_VARIABLE} and {reach.LOG_VARIABLE} are not both set"]
    problems = []
    seal = Seal(Path(root))
    try:
        status = os.lstat(root)
    except OSError:
        return [f"seal dir {root} does not exist"]
    if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid():
        problems.append(f"seal dir {root} is not a directory of the caller's")
    if environ.get("PATH", "").split(os.pathsep)[0] != str(seal.bin_dir):
        problems.append(f"the guard bin {seal.bin_dir} is not first on PATH")
    identity = policy(registry, seal).identity_vars(environ)  # the suite's own fakes aside
    if identity:
        problems.append(f"identity variables are set: {', '.join(identity)}")
    try:
        os.close(private_files.open_own(log, os.O_RDONLY))
        reach_log.read(log)
    except (OSError, reach_log.ReachLogError) as error:
        problems.append(f"reach log: {error}")
    return problems


def guards_first(python_path: str) -> str:
    """PYTHONPATH with the in-process guards' sitecustomize first (once, however nested)."""
    site = str(SITECUSTOMIZE_DIR)
    rest = [p for p in python_path.split(os.pathsep) if p != site] if python_path else []
    return os.pathsep.join([site, *rest])


def guard_first(seal: Seal, path: str) -> str:
    """PATH with the guard bin first; a test's own fakebin prepended later still wins."""
    return os.pathsep.join(p for p in (str(seal.bin_dir), path) if p)


def seal_line(dropped: Iterable[str], *, kept: Iterable[str] = ()) -> str:
    """The one line a seal prints: names only, never values (escaped: names come from outside).

    `kept`: names the suite itself declared after the seal (pytest-env, conftest.py).
    Nothing dropped reads `dropped=(none)`: still one line, and never a variable's name.
    """
    names = ",".join(one_line(name, 200) for name in dropped) or NOTHING_DROPPED
    line = f"{SEAL_LINE_PREFIX} dropped={names}"
    kept = [one_line(name, 200) for name in kept]
    return line + (f" kept={','.join(kept)}" if kept else "")
