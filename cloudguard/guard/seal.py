"""The ambient seal: a declared registry of identity variables, dropped before anything runs.

A seal is three things:

1. the registry (shipped `registry.toml` plus an optional project file):
   exact names and prefixes to drop, exempt prefixes, the provider
   variables to rebind, the CLI shims to place first on PATH;
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
See docs/guard.md.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cloudguard import private_files, project_file
from cloudguard.escape import one_line
from cloudguard.guard import reach
from cloudguard.guard.refuse import Policy

RUNNER_PREFIX = "CLOUDGUARD_"
SEAL_DIR_VARIABLE = "CLOUDGUARD_SEAL_DIR"
PROJECT_FILE = project_file.PROJECT_FILE
DEFAULT_REGISTRY = Path(__file__).with_name("registry.toml")
PROVIDER_SHIM = "cloudguard-refusing-provider"
SEAL_LINE_PREFIX = "CLOUDGUARD_AMBIENT_SEAL"
# First on PYTHONPATH in a sealed environment: its sitecustomize installs the in-process
# guards (botocore, azure-core, sockets) in every Python child. See cloudguard/inprocess.
SITECUSTOMIZE_DIR = Path(__file__).with_name("_sitecustomize")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHIM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_TOP_LEVEL = set(project_file.SECTIONS)  # [audit], [reap]: cloudguard.audit.config
_SEAL_KEYS = {"names", "prefixes", "exempt_prefixes"}
_PROVIDER_KEYS = {"variables"}
_HARD_KEYS = {"masked_homes", "forward"}
# A masked credential home: under the invoking user's HOME, no `..`, no trailing slash.
_HOME_ENTRY = re.compile(r"^~/(?!\.\.?(/|$))[A-Za-z0-9._-]+(/(?!\.\.?(/|$))[A-Za-z0-9._-]+)*$")


class RegistryError(Exception):
    """A registry file that cannot be admitted; the message names the file and line."""


@dataclass(frozen=True)
class Registry:
    names: frozenset[str]
    prefixes: tuple[str, ...]
    exempt_prefixes: tuple[str, ...]
    provider_variables: tuple[str, ...]
    shims: tuple[str, ...]
    files: tuple[str, ...] = ()
    masked_homes: tuple[str, ...] = ()  # [hard.masked_homes]: empty and read-only under --hard
    forward_ports: tuple[int, ...] = ()  # [hard] forward: host-loopback ports --hard relays

    def covers(self, name: str) -> bool:
        """True when `name` is sealed: listed or under a prefix, and not exempt."""
        if name.startswith(RUNNER_PREFIX) or name.startswith(self.exempt_prefixes):
            return False
        return name in self.names or name.startswith(self.prefixes)


@dataclass
class _Declared:
    """One file's declarations, with the line each came from."""

    path: str
    names: dict[str, int] = field(default_factory=dict)
    prefixes: dict[str, int] = field(default_factory=dict)
    exempt: dict[str, int] = field(default_factory=dict)
    provider_variables: dict[str, int] = field(default_factory=dict)
    shims: dict[str, int] = field(default_factory=dict)
    masked_homes: dict[str, int] = field(default_factory=dict)
    forward_ports: dict[int, int] = field(default_factory=dict)


def find_project_file(start: Path) -> Path | None:
    """The nearest trusted cloudguard.toml (cloudguard.project_file); RegistryError if not."""
    try:
        return project_file.find_project_file(start)
    except project_file.UntrustedFileError as error:
        raise RegistryError(f"registry {error.path}: {error.reason}") from None


def load_registry(project_file: Path | None = None, *, search_from: Path | None = None) -> Registry:
    """The shipped registry plus `project_file` (or the nearest cloudguard.toml)."""
    if project_file is None and search_from is not None:
        project_file = find_project_file(search_from)
    default = _parse(DEFAULT_REGISTRY)
    files = [default]
    if project_file is not None:
        project = _parse(project_file)
        _check_exemptions(project, default)
        _check_provider_variables(project, default)
        files.append(project)
    return Registry(
        names=frozenset(n for f in files for n in f.names),
        prefixes=tuple(dict.fromkeys(p for f in files for p in f.prefixes)),
        exempt_prefixes=tuple(dict.fromkeys(p for f in files for p in f.exempt)),
        provider_variables=tuple(dict.fromkeys(v for f in files for v in f.provider_variables)),
        shims=tuple(dict.fromkeys(s for f in files for s in f.shims)),
        files=tuple(f.path for f in files),
        masked_homes=tuple(dict.fromkeys(h for f in files for h in f.masked_homes)),
        forward_ports=tuple(dict.fromkeys(p for f in files for p in f.forward_ports)),
    )


def _parse(path: Path) -> _Declared:
    try:  # read and parsed once, for every section, by cloudguard.project_file
        document = project_file.read_project_file(path)
    except project_file.ProjectFileError as error:
        raise RegistryError(f"registry {error}") from None
    return _RegistryFile(str(path), document.text.splitlines()).declarations(document.data)


class _RegistryFile:
    """Validates one parsed registry file; every error names the line it came from."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines

    def fail(self, section: str, key: str | None, message: str) -> RegistryError:
        return RegistryError(f"registry {self.path} line {self.line(section, key)}: {message}")

    def line(self, section: str, key: str | None) -> int:
        return _line_of(self.lines, section, key)

    def table(self, data: Mapping[str, object], key: str, section: str = "") -> dict[str, object]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(section, key, f"{key!r} must be a table")
        return value

    def known_keys(self, table: Mapping[str, object], section: str, allowed: set[str]) -> None:
        for key in table:
            if key not in allowed:
                where = f" in [{section}]" if section else ""
                raise self.fail(
                    section, key, f"unknown key {key!r}{where} (expected {sorted(allowed)})"
                )

    def entries(
        self, table: Mapping[str, object], section: str, pattern: re.Pattern[str]
    ) -> dict[str, int]:
        found: dict[str, int] = {}
        for entry, why in table.items():
            if not pattern.match(entry):
                raise self.fail(section, entry, f"malformed entry {entry!r} in [{section}]")
            if not isinstance(why, str) or not why.strip():
                raise self.fail(
                    section,
                    entry,
                    f"entry {entry!r} in [{section}] needs a reason (a non-empty string)",
                )
            found[entry] = self.line(section, entry)
        return found

    def declarations(self, data: Mapping[str, object]) -> _Declared:
        declared = _Declared(path=self.path)
        self.known_keys(data, "", _TOP_LEVEL)
        seal = self.table(data, "seal")
        self.known_keys(seal, "seal", _SEAL_KEYS)
        for key, target in (("names", declared.names), ("prefixes", declared.prefixes)):
            section = f"seal.{key}"
            for entry, line in self.entries(self.table(seal, key, "seal"), section, _NAME).items():
                if entry.startswith(RUNNER_PREFIX) or RUNNER_PREFIX.startswith(entry):
                    raise self.fail(
                        section, entry, f"{entry!r}: the CLOUDGUARD_ prefix is never sealed"
                    )
                target[entry] = line
        declared.exempt = self.entries(
            self.table(seal, "exempt_prefixes", "seal"), "seal.exempt_prefixes", _NAME
        )
        self.no_duplicates(declared)
        provider = self.table(data, "provider")
        self.known_keys(provider, "provider", _PROVIDER_KEYS)
        variables = provider.get("variables", [])
        if not isinstance(variables, list):
            raise self.fail("provider", "variables", "[provider] variables must be a list of names")
        for variable in variables:
            if not isinstance(variable, str) or not _NAME.match(variable):
                raise self.fail(
                    "provider", "variables", f"malformed provider variable {variable!r}"
                )
            if variable in declared.provider_variables:
                raise self.fail(
                    "provider", "variables", f"duplicate provider variable {variable!r}"
                )
            declared.provider_variables[variable] = self.line("provider", "variables")
        declared.shims = self.entries(self.table(data, "shims"), "shims", _SHIM)
        self.hard(data, declared)
        return declared

    def hard(self, data: Mapping[str, object], declared: _Declared) -> None:
        """[hard]: credential homes to mask (each with a reason) and host ports to forward."""
        hard = self.table(data, "hard")
        self.known_keys(hard, "hard", _HARD_KEYS)
        homes = self.table(hard, "masked_homes", "hard")
        declared.masked_homes = self.entries(homes, "hard.masked_homes", _HOME_ENTRY)
        ports = hard.get("forward", [])
        if not isinstance(ports, list):
            raise self.fail("hard", "forward", "[hard] forward must be a list of port numbers")
        for port in ports:
            if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
                raise self.fail("hard", "forward", f"[hard] forward: {port!r} is not a port number")
            declared.forward_ports[port] = self.line("hard", "forward")

    def no_duplicates(self, declared: _Declared) -> None:
        """A name under a prefix of the same file, or a prefix under another, is a duplicate."""
        for name in declared.names:
            for prefix, line in declared.prefixes.items():
                if name.startswith(prefix):
                    raise self.fail(
                        "seal.names",
                        name,
                        f"duplicate: {name!r} is already sealed by prefix {prefix!r} (line {line})",
                    )
        for prefix in declared.prefixes:
            for other, line in declared.prefixes.items():
                if other != prefix and prefix.startswith(other):
                    message = (
                        f"duplicate: prefix {prefix!r} is already sealed by {other!r} (line {line})"
                    )
                    raise self.fail("seal.prefixes", prefix, message)


def _check_exemptions(project: _Declared, default: _Declared) -> None:
    """An exempt prefix may carve out of the project's own prefixes, never the shipped ones."""
    for exempt, line in project.exempt.items():
        where = f"registry {project.path} line {line}"
        for prefix in default.prefixes:
            if exempt.startswith(prefix) or prefix.startswith(exempt):
                raise RegistryError(
                    f"{where}: exempt prefix {exempt!r} would unseal the shipped prefix {prefix!r}"
                )
        for name in (*default.names, *project.names):
            if name.startswith(exempt):
                raise RegistryError(f"{where}: exempt prefix {exempt!r} would unseal {name!r}")


_NEVER_PROVIDERS = ("PATH", "PYTHONPATH")


def _check_provider_variables(project: _Declared, default: _Declared) -> None:
    """A project's provider variable may not rebind what the seal drops, redirects or sets.

    Binding `AWS_EC2_METADATA_DISABLED` or `NO_GCE_CHECK` to the provider's path
    would turn instance metadata back on; binding an identity variable, PATH,
    PYTHONPATH or a CLOUDGUARD_ variable would undo the seal some other way.
    """
    # Sealed by the shipped registry: identity channels. A project may still bind a name
    # under its own prefixes (drop the ambient provider, bind the refuser: FM_ does so).
    sealed = Registry(
        names=frozenset(default.names),
        prefixes=tuple(default.prefixes),
        exempt_prefixes=(),
        provider_variables=(),
        shims=(),
    )
    for variable, line in project.provider_variables.items():
        if variable in default.provider_variables:
            continue  # the shipped registry binds it already
        why = None
        if variable.startswith(RUNNER_PREFIX):
            why = "the CLOUDGUARD_ prefix is the runner's own"
        elif variable in _NEVER_PROVIDERS:
            why = f"{variable} is set by the seal (the guard first)"
        elif variable in REDIRECTED:
            why = "the seal redirects it to an empty, owned store or turns a metadata service off"
        elif sealed.covers(variable):
            why = "it is a sealed identity variable"
        if why:
            raise RegistryError(
                f"registry {project.path} line {line}: provider variable {variable!r} "
                f"cannot be bound to the provider: {why}"
            )


def _line_of(lines: list[str], section: str, key: str | None) -> int:
    """The 1-based line declaring `key` in table `section` ("" = top level); 1 if not found."""
    current = ""
    header_line = 1
    key_pattern = re.compile(rf"""^\s*["']?{re.escape(key)}["']?\s*=""") if key else None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        header = re.match(r"^\[+\s*([^\]]+?)\s*\]+", stripped)
        if header:
            current = header.group(1).replace('"', "").replace("'", "")
            path = f"{section}.{key}".lstrip(".")
            if key and (current == path or current.startswith(path + ".")):
                return number
            if current == section:
                header_line = number
            continue
        if current == section and key_pattern is not None and key_pattern.match(line):
            return number
    return header_line


# -- the seal directory and environment ---------------------------------------------------


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

    @property
    def kept_file(self) -> Path:
        return self.root / "kept"

    def keep(self, names: Iterable[str]) -> None:
        """Record the sealed names a pytest session's suite declared itself (pytest-env,
        conftest), so its xdist workers, which inherit them, verify the seal all the same."""
        private_files.write_private(self.kept_file, "".join(f"{name}\n" for name in names))

    def kept(self) -> frozenset[str]:
        try:
            fd = private_files.open_own(self.kept_file, os.O_RDONLY)
        except FileNotFoundError:
            return frozenset()
        with os.fdopen(fd, encoding="utf-8") as names:
            return frozenset(line.strip() for line in names if line.strip())

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


# The variables the seal sets to its own values: a provider binding never replaces one.
REDIRECTED = tuple(Seal(Path()).redirections())


SENTINEL = "cloudguard-sentinel-not-a-credential"
SENTINELS = {
    "AWS_ACCESS_KEY_ID": SENTINEL,
    "AWS_SECRET_ACCESS_KEY": SENTINEL,
    "AWS_SESSION_TOKEN": SENTINEL,
    "AWS_DEFAULT_REGION": "us-east-1",
}


def create_seal(registry: Registry, *, python: str | None = None, log: str | None = None) -> Seal:
    """Make a seal directory with the refusing shims, the provider and empty stores.

    `log`, when given, is written into every refuser: a child that scrubs its
    environment still records there.
    """
    seal = Seal(Path(tempfile.mkdtemp(prefix="cloudguard-seal-")))
    for store in ("bin", "azure", "aws", "gcloud"):
        (seal.root / store).mkdir(mode=0o700)
    for empty in ("config", "credentials"):
        (seal.root / "aws" / empty).write_bytes(b"")
    rules = policy(registry, seal)
    for tool in registry.shims:
        _write_refuser(
            seal.bin_dir / tool, python, via=f"{tool}-shim", tool=tool, policy=rules, log=log
        )
    _write_refuser(seal.provider, python, via="provider", tool="provider", policy=rules, log=log)
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
    path: Path, python: str | None, *, via: str, tool: str, policy: Policy, log: str | None = None
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
        "from cloudguard.guard.refuse import Policy, main\n"
        f"main(via={via!r}, tool={tool!r}, policy={policy!r}, log={_absolute(log)!r})\n"
    )
    path.write_text(script, encoding="utf-8")
    path.chmod(0o755)


def _absolute(log: str | None) -> str | None:
    return os.path.abspath(log) if log else None


def sealed_environment(
    environ: Mapping[str, str], registry: Registry, seal: Seal, log: str
) -> tuple[dict[str, str], list[str]]:
    """The environment to run under, and the sorted names that were dropped."""
    dropped = sorted(name for name in environ if registry.covers(name))
    dropped_set = set(dropped)
    env = {name: value for name, value in environ.items() if name not in dropped_set}
    for variable in registry.provider_variables:
        env[variable] = str(seal.provider)
    env[reach.LOG_VARIABLE] = log
    env[SEAL_DIR_VARIABLE] = str(seal.root)
    env["PATH"] = guard_first(seal, environ.get("PATH", ""))
    env["PYTHONPATH"] = guards_first(environ.get("PYTHONPATH", ""))
    env.update(seal.sentinels())
    env.update(seal.redirections())  # last: nothing above may rebind a credential store
    return env, dropped


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
    try:  # a suite's own declared settings, kept by the session that made this seal
        kept = seal.kept()
    except OSError as error:
        return [f"seal dir {root}: kept names unreadable: {error}"]
    identity = [n for n in policy(registry, seal).identity_vars(environ) if n not in kept]
    if identity:
        problems.append(f"identity variables are set: {', '.join(identity)}")
    try:
        os.close(private_files.open_own(log, os.O_RDONLY))
        reach.read(log)
    except (OSError, reach.ReachLogError) as error:
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
    """
    line = f"{SEAL_LINE_PREFIX} dropped={','.join(one_line(name, 200) for name in dropped)}"
    kept = [one_line(name, 200) for name in kept]
    return line + (f" kept={','.join(kept)}" if kept else "")
