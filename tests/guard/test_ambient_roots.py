"""Ambient roots: where each entry is on this machine, and what the fingerprint sees change."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from named_checks import broken

from cloudguard.guard import roots
from cloudguard.guard.roots import Root, Snapshot
from cloudguard.guard.watch import Watcher


@pytest.mark.parametrize(
    ("entry", "environ", "expected"),
    [
        ("~/.azure", {"HOME": "/h"}, "/h/.azure"),
        ("$XDG_DATA_HOME/myapp", {"HOME": "/h"}, "/h/.local/share/myapp"),
        ("$XDG_DATA_HOME/myapp", {"HOME": "/h", "XDG_DATA_HOME": "/data"}, "/data/myapp"),
        # A relative XDG value is invalid by the spec: the default stands.
        ("$XDG_STATE_HOME/myapp", {"HOME": "/h", "XDG_STATE_HOME": "rel"}, "/h/.local/state/myapp"),
        ("${MYAPP_DATA_DIR}", {"MYAPP_DATA_DIR": "/srv/app/"}, "/srv/app"),
        ("$MYAPP_DATA_DIR/state", {"MYAPP_DATA_DIR": "/srv/app"}, "/srv/app/state"),
        ("$MYAPP_DATA_DIR", {"HOME": "/h"}, None),  # unset: no such root here
        ("/srv/myapp", {}, "/srv/myapp"),
    ],
)
def test_an_entry_is_expanded_in_the_environment_the_run_started_from(
    entry: str, environ: dict[str, str], expected: str | None
) -> None:
    assert roots.expand(entry, environ) == expected


def tree(base: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)


def test_each_kind_of_change_is_named_under_its_root(tmp_path: Path) -> None:
    tree(tmp_path, {".azure/config": "a", ".azure/gone": "g", "data/state": "s"})
    found = roots.resolve(
        ["~/.azure", "$APP_DIR"], {"HOME": str(tmp_path), "APP_DIR": str(tmp_path / "data")}
    )
    before = Snapshot.take(found)

    (tmp_path / ".azure" / "config").write_text("b")  # same size: the hash and ctime see it
    (tmp_path / ".azure" / "gone").unlink()
    (tmp_path / "data" / "new").write_text("n")

    changes = {(c.path, c.change, c.root) for c in before.changes(before.again())}
    azure, data = tmp_path / ".azure", tmp_path / "data"
    assert changes == {
        (str(azure), "modified", "~/.azure"),
        (str(azure / "config"), "modified", "~/.azure"),
        (str(azure / "gone"), "deleted", "~/.azure"),
        (str(data), "modified", "$APP_DIR"),
        (str(data / "new"), "created", "$APP_DIR"),
    }


def test_a_rewrite_with_its_mtime_put_back_is_still_a_change(tmp_path: Path) -> None:
    tree(tmp_path, {".aws/config": "region = us-east-1\n"})
    config = tmp_path / ".aws" / "config"
    status = config.stat()
    before = Snapshot.take([Root("~/.aws", str(tmp_path / ".aws"))])

    config.write_text("region = eu-west-9\n")
    os.utime(config, ns=(status.st_atime_ns, status.st_mtime_ns))

    assert [(c.path, c.change) for c in before.changes(before.again())] == [
        (str(config), "modified")
    ]


def test_an_untouched_root_and_outputs_inside_one_show_no_change(tmp_path: Path) -> None:
    tree(tmp_path, {".aws/config": "x", ".aws/cli/cache/a.json": "{}"})
    cache = str(tmp_path / ".aws" / "cli" / "cache")
    before = Snapshot.take([Root("~/.aws", str(tmp_path / ".aws"))], skip=[cache])

    (tmp_path / ".aws" / "config").read_text()
    (tmp_path / ".aws" / "cli" / "cache" / "b.json").write_text("{}")

    # The cache directory's own timestamps moved (an output); its parents are not blamed.
    assert before.changes(before.again()) == []


def test_a_symlink_below_a_root_is_followed_and_its_target_compared(tmp_path: Path) -> None:
    """Issue 31: a write through a link inside a root was unseen when links were not followed."""
    elsewhere = tmp_path / "elsewhere"
    tree(tmp_path, {"elsewhere/big": "outside", ".azure/x": "x"})
    (tmp_path / ".azure" / "link").symlink_to(elsewhere)
    before = Snapshot.take([Root("~/.azure", str(tmp_path / ".azure"))])

    (elsewhere / "big").write_text("changed through the root")

    link = str(tmp_path / ".azure" / "link" / "big")
    assert [(c.path, c.change) for c in before.changes(before.again())] == [(link, "modified")]


def test_a_root_over_the_bound_is_compared_up_to_where_its_first_walk_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(roots, "MAX_ENTRIES", 5)
    tree(tmp_path, {f"big/f{i}": "x" for i in range(2, 10)})
    root = Root("$BIG", str(tmp_path / "big"))
    before = Snapshot.take([root])
    assert before.partial == ["$BIG"]  # the root itself and f2..f5

    (tmp_path / "big" / "f0").write_text("before the cut")
    (tmp_path / "big" / "f9").write_text("after the cut: not compared")

    names = {Path(c.path).name: c.change for c in before.changes(before.again())}
    assert names == {"big": "modified", "f0": "created"}


def test_the_watch_names_writes_into_a_root_and_a_missing_roots_appearance_only(
    tmp_path: Path,
) -> None:
    tree(tmp_path, {".azure/config": "a"})
    env = {"HOME": str(tmp_path)}
    watcher = Watcher(roots.resolve(["~/.azure", "$XDG_DATA_HOME/myapp"], env))
    try:
        assert watcher.poll() == []
        (tmp_path / ".azure" / "config").write_text("b")
        (tmp_path / ".local" / "bin").mkdir(parents=True)  # on the way to the missing root
        (tmp_path / ".local" / "share" / "other").mkdir(parents=True)
        seen = watcher.poll()
        (tmp_path / ".local" / "share" / "myapp" / "x").mkdir(parents=True)
        appeared = watcher.poll()
    finally:
        watcher.close()

    assert seen == [(str(tmp_path / ".azure" / "config"), "modified", "~/.azure")]
    myapp = str(tmp_path / ".local" / "share" / "myapp")
    assert appeared == [(myapp, "created", "$XDG_DATA_HOME/myapp")]


def test_a_file_changed_lately_is_hashed_and_an_older_one_judged_by_its_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any write moves ctime past what it was, except within the tick the file last changed
    in: only a file changed lately needs its content compared."""
    tree(tmp_path, {"root/old": "o", "root/recent": "r"})
    root = [Root("$ROOT", str(tmp_path / "root"))]
    monkeypatch.setattr(roots, "RECENT_NS", 0)  # everything written so far is "old"
    old = Snapshot.take(root)
    monkeypatch.setattr(roots, "RECENT_NS", 60_000_000_000)
    recent = Snapshot.take(root)

    assert old.entries[str(tmp_path / "root" / "old")][-1] is None
    assert recent.entries[str(tmp_path / "root" / "recent")][-1] is not None
    (tmp_path / "root" / "old").write_text("O")  # same length: its ctime moved
    assert [Path(c.path).name for c in old.changes(old.again())] == ["old"]


def test_a_write_through_a_link_inside_a_root_is_judged_where_it_points(tmp_path: Path) -> None:
    """A stow-style home: `~/.azure/config` and `~/.azure/profiles` are links into dotfiles."""
    tree(tmp_path, {"dotfiles/azure/config": "a", "dotfiles/azure/profiles/p1": "p"})
    azure = tmp_path / ".azure"
    azure.mkdir()
    (azure / "config").symlink_to(tmp_path / "dotfiles" / "azure" / "config")
    (azure / "profiles").symlink_to(tmp_path / "dotfiles" / "azure" / "profiles")
    (azure / "loop").symlink_to(azure)  # a loop of links ends where it began
    before = Snapshot.take(roots.resolve(["~/.azure"], {"HOME": str(tmp_path)}))

    (tmp_path / "dotfiles" / "azure" / "config").write_text("b")  # same length
    (tmp_path / "dotfiles" / "azure" / "profiles" / "p2").write_text("new")

    changes = {(c.path, c.change) for c in before.changes(before.again())}
    expected = {(str(azure / "config"), "modified"), (str(azure / "profiles" / "p2"), "created")}
    assert expected <= changes, broken(
        "a-write-through-a-link-in-a-root-is-named", f"not named: {expected - changes}"
    )
    assert not any("loop/" in path for path, _ in changes)


def test_a_link_unchanged_and_its_target_unchanged_are_no_change(tmp_path: Path) -> None:
    tree(tmp_path, {"dotfiles/config": "a"})
    (tmp_path / ".azure").mkdir()
    (tmp_path / ".azure" / "config").symlink_to(tmp_path / "dotfiles" / "config")
    (tmp_path / ".azure" / "dangling").symlink_to(tmp_path / "nowhere")
    before = Snapshot.take(roots.resolve(["~/.azure"], {"HOME": str(tmp_path)}))
    assert before.changes(before.again()) == []


def test_the_watch_names_a_write_through_a_link_inside_a_root(tmp_path: Path) -> None:
    tree(tmp_path, {"dotfiles/config": "a", "dotfiles/profiles/p1": "p"})
    (tmp_path / ".azure").mkdir()
    (tmp_path / ".azure" / "config").symlink_to(tmp_path / "dotfiles" / "config")
    (tmp_path / ".azure" / "profiles").symlink_to(tmp_path / "dotfiles" / "profiles")
    (tmp_path / ".azure" / "loop").symlink_to(tmp_path / ".azure")
    watcher = Watcher(roots.resolve(["~/.azure"], {"HOME": str(tmp_path)}))
    try:
        (tmp_path / "dotfiles" / "config").write_text("b")
        (tmp_path / "dotfiles" / "profiles" / "p2").write_text("n")
        seen = {(path, change) for path, change, _ in watcher.poll()}
    finally:
        watcher.close()

    azure = tmp_path / ".azure"
    expected = {(str(azure / "config"), "modified"), (str(azure / "profiles" / "p2"), "created")}
    assert expected <= seen, broken(
        "the-watch-names-a-write-through-a-link", f"not seen: {expected - seen} in {seen}"
    )
