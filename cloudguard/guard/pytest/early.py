"""The session's seal, decided before the suite declares anything of its own.

At `pytest_load_initial_conftests` (before pytest-env applies `env =` and
before the initial conftest.py files are imported) the plugin either joins
the seal this process runs under, when it verifiably holds (`cloudguard
run`, an xdist worker of a sealed controller: `seal.inherited_seal`), or
makes its own: a `GuardSession` whose sealed environment becomes
`os.environ`, with the in-process guards installed so a conftest that
reaches while it is imported is seen too. What the suite sets after that is
its own: kept, listed on the seal line, and recorded in the seal directory
so xdist workers verify the inherited seal against it. The session's witness
(ambient roots, tracked files) looks before the conftest files run, too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from cloudguard.documents import reach_log
from cloudguard.escape import one_line
from cloudguard.guard import alarm, inprocess, reach, seal, seal_registry
from cloudguard.guard.pytest import where
from cloudguard.guard.session import GuardSession


@dataclass
class EarlySeal:
    """The session's own seal, made before the suite's declarations (pytest-env, conftest)."""

    session: GuardSession
    original_environ: dict[str, str]
    sealed: dict[str, str]

    @classmethod
    def make(cls, config: pytest.Config, rules: seal_registry.Registry) -> EarlySeal:
        # Before pytest_configure only the early parse holds the options.
        requested = getattr(config.known_args_namespace, "cloudguard_log", None)
        log = alarm.arm_log(
            config.getoption("cloudguard_log") or requested, by="cloudguard pytest plugin"
        )
        session = GuardSession.start(rules, log, checkout=config.rootpath)
        env = session.sealed_environment(os.environ)
        # Inherited from an outer pytest (this session is some test's subprocess): they name
        # that test, not ours, and would attribute our reaches outside any test to it.
        for inherited in (reach.TEST_VARIABLE, "PYTEST_CURRENT_TEST"):
            env.pop(inherited, None)
        # The sentinels fill only what the suite leaves unset: set after pytest-env and the
        # conftest files, so a suite's own fake (pytest-env's `D:` defaults too) wins.
        for name in session.seal.sentinels():
            env.pop(name, None)
        original = dict(os.environ)
        os.environ.clear()
        os.environ.update(env)
        # Installed now, so a conftest that reaches while it is imported is seen too.
        config.stash[OUTER] = inprocess.saved()
        inprocess.install(log=log.path, policy=session.policy(), keepers=session.keepers)
        made = cls(session, original, env)
        config.stash[EARLY] = made
        return made

    def fill_sentinels(self) -> None:
        for name, value in self.session.seal.sentinels().items():
            os.environ.setdefault(name, value)

    def announce(self, *, keep: bool = True) -> None:
        """The suite has declared its own: keep it (`keep`), fill the sentinels, print the line.

        `keep`: name the suite's own for the processes it starts (`seal.keep_declared`), so
        the xdist workers, which inherit them, verify the seal all the same (False: sealed
        late, kept nothing).
        """
        kept = declared_since(self.sealed, self.session.registry) if keep else []
        seal.keep_declared(os.environ, kept)
        self.fill_sentinels()
        sys.stderr.write(self.session.seal_line(kept=kept) + "\n")
        for note in self.session.notes():
            sys.stderr.write(f"cloudguard: {one_line(note, 2000)}\n")
        sys.stderr.flush()

    def restore_environment(self) -> None:
        os.environ.clear()
        os.environ.update(self.original_environ)

    def abandon(self, config: pytest.Config) -> None:
        """The session will not run (pytest stops at configure): undo the early seal."""
        inprocess.restore(config.stash.get(OUTER, None))
        self.restore_environment()
        self.session.close(keep_log=False)


@dataclass
class JoinedSeal:
    """A seal this session runs under (`cloudguard run`, a sealed controller): the suite's
    own declarations are named for its workers all the same; the seal line was printed by
    whoever made the seal."""

    registry: seal_registry.Registry
    inherited: dict[str, str]

    def announce(self) -> None:
        seal.keep_declared(os.environ, declared_since(self.inherited, self.registry))


def declared_since(before: Mapping[str, str], rules: seal_registry.Registry) -> list[str]:
    """Seal-covered names the suite itself set or changed since `before`: its own."""
    return sorted(
        name
        for name, value in os.environ.items()
        if rules.covers(name) and before.get(name) != value
    )


EARLY = pytest.StashKey[EarlySeal]()
INHERITED = pytest.StashKey[seal.Seal]()  # a verified seal this session runs under
DECIDED = pytest.StashKey[bool]()  # the early hook ran: begin() does not decide again
ADMISSION = pytest.StashKey[Exception]()  # why the early hook refused (97 at configure)
OUTER = pytest.StashKey["inprocess.Binding | None"]()  # the guards' binding before the session
WHERE = pytest.StashKey[dict[str, str | None]]()  # where.VARIABLES before the session


def seal_before_the_suite(config: pytest.Config) -> EarlySeal | JoinedSeal | None:
    """Join the verified seal this process runs under, or make the session's own.

    What cannot be admitted (an invalid registry, a log that is not ours) is kept
    for `pytest_configure`, which refuses the session with 97.
    """
    config.stash[DECIDED] = True
    config.stash[WHERE] = where.start_collection()  # the initial conftests are imported next
    try:
        rules = seal_registry.load_registry(search_from=config.rootpath)
        # Verified here, on what the session inherited, before the suite adds its own.
        inherited = seal.inherited_seal(os.environ, rules)
        if inherited is not None:
            config.stash[INHERITED] = inherited
            return JoinedSeal(rules, dict(os.environ))
        return EarlySeal.make(config, rules)
    except (seal_registry.RegistryError, reach_log.ReachLogError, OSError) as error:
        config.stash[ADMISSION] = error
    return None


def raise_refusal(config: pytest.Config) -> None:
    """Raise what the early hook could not admit, if anything."""
    refused = config.stash.get(ADMISSION, None)
    if refused is not None:
        raise refused
