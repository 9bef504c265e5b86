"""The seal registry: which variables a seal drops, loaded and validated.

The shipped `registry.toml` plus an optional project file (`cloudguard.toml`,
or `--registry FILE`): exact names and prefixes to drop, exempt prefixes, the
provider variables to rebind, the CLI shims to place first on PATH, the
hard seal's masked homes and forwarded ports, the ambient roots a run must
leave byte-identical and the outputs it may write. Every entry needs a
reason; a file that cannot be admitted is a `RegistryError` naming its line
(exit 97).

A project file adds to the shipped registry and can never take anything away
from it or from the seal: no exemption of a shipped entry, no provider
variable that would rebind what the seal drops, redirects or sets
(`cloudguard.guard.seal` builds the seal from a `Registry`).

Every key but two only adds to what is sealed, refused, masked or watched,
so any project file may set it. Two widen what a run may do, so a
discovered file the operator has not trusted (cloudguard.trust_store) does not
get them: the key is ignored, and `Registry.ignored` says so for the command
to tell (`ignored_forward` under --hard, `ignored_outputs` always). Ignoring
is the stricter seal; refusing instead would stop every sealed run of the
project until the file is trusted. The two:

- `[hard] forward` opens the hard seal;
- an `[outputs]` entry outside the checkout (`~/...`, `$VAR/...`, `/...`)
  lets a run write where the operator lives unnoticed. One inside the
  checkout is harmless from any file: the repository's own `.gitignore`
  exempts its paths just the same.

See docs/guard.md and docs/reference.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cloudguard import project_file
from cloudguard.guard.policy import REDIRECTED, RUNNER_PREFIX
from cloudguard.trust_store import NeedsTrust

PROJECT_FILE = project_file.PROJECT_FILE
DEFAULT_REGISTRY = Path(__file__).with_name("registry.toml")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHIM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_TOP_LEVEL = set(project_file.SECTIONS)  # [audit], [reap]: cloudguard.settings.resolve
_SEAL_KEYS = {"names", "prefixes", "exempt_prefixes"}
_PROVIDER_KEYS = {"variables"}
_HARD_KEYS = {"masked_homes", "forward"}
# The registry keys a discovered file may set only once the operator trusted it.
NEEDS_TRUST = {
    "hard.forward": NeedsTrust(
        "opens the hard seal: relays these host ports into its namespaces", ignored=True
    ),
    "outputs": NeedsTrust(
        "outside the checkout: lets a run write into your home unnoticed", ignored=True
    ),
}
_AMBIENT_KEYS = {"roots"}
# A masked credential home: under the invoking user's HOME, no `..`, no trailing slash.
_HOME_ENTRY = re.compile(r"^~/(?!\.\.?(/|$))[A-Za-z0-9._-]+(/(?!\.\.?(/|$))[A-Za-z0-9._-]+)*$")
# A path segment: anything but `/` and NUL, never `.` or `..`.
_SEGMENT = r"(?!\.\.?(/|$))[^/\x00]+"
_VARIABLE = r"\$([A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})"
# An ambient path: under HOME (`~/x`), under a variable's value (`$XDG_DATA_HOME/app`, `$APP_DIR`)
# or absolute (`/srv/app`). No `..`, no empty segment, no trailing slash.
_AMBIENT_PATH = re.compile(rf"^(~|{_VARIABLE})(/{_SEGMENT})*$|^(/{_SEGMENT})+$")
# An output: an ambient path, or a path inside the checkout, relative to its root (globs allowed).
_OUTPUT = re.compile(rf"{_AMBIENT_PATH.pattern}|^(?![~$]|\.git(/|$)){_SEGMENT}(/{_SEGMENT})*$")


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
    # [ambient.roots]: left byte-identical by every run (the masked homes are roots too).
    ambient_roots: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()  # [outputs]: where a run may write (checkout-relative or ambient)
    # What an untrusted discovered file declared that does not count, and why (to tell).
    ignored_forward: tuple[str, ...] = ()
    ignored_outputs: tuple[str, ...] = ()

    @property
    def ignored(self) -> tuple[str, ...]:
        return (*self.ignored_forward, *self.ignored_outputs)

    @property
    def roots(self) -> tuple[str, ...]:
        """Every ambient root a run must leave byte-identical: declared, and every masked home."""
        return tuple(dict.fromkeys((*self.ambient_roots, *self.masked_homes)))

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
    ambient_roots: dict[str, int] = field(default_factory=dict)
    outputs: dict[str, int] = field(default_factory=dict)
    ignored_forward: tuple[str, ...] = ()
    ignored_outputs: tuple[str, ...] = ()


def find_project_file(start: Path) -> Path | None:
    """The nearest cloudguard.toml (cloudguard.project_file); RegistryError if it cannot be
    looked at."""
    try:
        return project_file.find_project_file(start)
    except project_file.UntrustedFileError as error:
        raise RegistryError(f"registry {error.path}: {error.reason}") from None


def load_registry(project_file: Path | None = None, *, search_from: Path | None = None) -> Registry:
    """The shipped registry plus `project_file` (or the nearest cloudguard.toml)."""
    discovered = project_file is None and search_from is not None
    if project_file is None and search_from is not None:
        project_file = find_project_file(search_from)
    default = _parse(DEFAULT_REGISTRY)
    files = [default]
    if project_file is not None:
        project = _parse(project_file, discovered=discovered)
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
        ambient_roots=tuple(dict.fromkeys(r for f in files for r in f.ambient_roots)),
        outputs=tuple(dict.fromkeys(o for f in files for o in f.outputs)),
        ignored_forward=tuple(i for f in files for i in f.ignored_forward),
        ignored_outputs=tuple(i for f in files for i in f.ignored_outputs),
    )


def is_ambient(entry: str) -> bool:
    """An ambient path (`~/x`, `$VAR/x`, `/x`), as against a path inside the checkout."""
    return entry.startswith(("~", "$", "/"))


def _parse(path: Path, *, discovered: bool = False) -> _Declared:
    try:  # read and parsed once, for every section, by cloudguard.project_file
        document = project_file.read_project_file(path, discovered=discovered)
        declared = _RegistryFile(str(path), document.text.splitlines()).declarations(document.data)
        outside = [entry for entry in declared.outputs if is_ambient(entry)]
        if (declared.forward_ports or outside) and not document.trusted:
            _ignore_untrusted(declared, outside)
    except project_file.ProjectFileError as error:
        raise RegistryError(f"registry {error}") from None
    return declared


def _ignore_untrusted(declared: _Declared, outside: list[str]) -> None:
    """Drop what an untrusted file may not widen (see the module's docstring), and say so."""
    path = Path(declared.path)
    if declared.forward_ports:
        declared.forward_ports = {}  # a closed door
        why = project_file.untrusted_message(path, {"hard.forward": NEEDS_TRUST["hard.forward"]})
        declared.ignored_forward = (f"{path}: ignored hard.forward: {why}",)
    if outside:
        for entry in outside:  # the writes there stay findings
            del declared.outputs[entry]
        why = project_file.untrusted_message(path, {"outputs": NEEDS_TRUST["outputs"]})
        declared.ignored_outputs = (f"{path}: ignored [outputs] {', '.join(outside)}: {why}",)


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
        ambient = self.table(data, "ambient")
        self.known_keys(ambient, "ambient", _AMBIENT_KEYS)
        roots = self.table(ambient, "roots", "ambient")
        declared.ambient_roots = self.entries(roots, "ambient.roots", _AMBIENT_PATH)
        declared.outputs = self.entries(self.table(data, "outputs"), "outputs", _OUTPUT)
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
