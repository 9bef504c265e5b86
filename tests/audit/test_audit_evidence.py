"""Evidence sources against real directories and real git repositories."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
from pathlib import Path

import pytest
from audit_helpers import (
    azure_vm,
    by_name,
    controller_home,
    git,
    make_repo,
    run_audit_cli,
    write_json,
)
from named_checks import broken

from cloudguard.audit.evidence import repository_generations
from cloudguard.audit.evidence.controller_records import (
    controller_home_tasks,
    exported_controller_tasks,
)
from cloudguard.audit.evidence.fixture_ids import load_fixture_corpus
from cloudguard.audit.evidence.interface import EvidenceError, GenerationStatus
from cloudguard.audit.evidence.repository_generations import check_generations

# --- controller records ------------------------------------------------------


def test_any_of_meta_queue_or_worker_is_a_record(tmp_path):
    home = controller_home(
        tmp_path / "home", meta=["a"], queued=["b"], workers={"w1": "c", "idle": None}
    )
    (home / "state" / "notes.txt").write_text("not a record")
    assert controller_home_tasks(home) == {"a", "b", "c"}


def test_missing_controller_home_is_a_failure_not_an_empty_record_set(tmp_path):
    with pytest.raises(EvidenceError, match="does not exist"):
        controller_home_tasks(tmp_path / "nowhere")


def test_a_directory_without_the_layout_is_not_a_controller_home(tmp_path):
    (tmp_path / "home").mkdir()
    with pytest.raises(EvidenceError, match="not a controller home"):
        controller_home_tasks(tmp_path / "home")


def test_an_unreadable_worker_record_fails_closed(tmp_path):
    home = controller_home(tmp_path / "home", meta=["a"])
    (home / "workers" / "w9.json").write_text("{broken")
    with pytest.raises(EvidenceError, match=r"w9\.json"):
        controller_home_tasks(home)


def test_exported_records_accept_strings_objects_and_workers(tmp_path):
    document = {"tasks": ["t1", {"id": "t2"}], "workers": [{"task": "t3"}, {"task": None}]}
    assert exported_controller_tasks("-", io.StringIO(json.dumps(document))) == {"t1", "t2", "t3"}


@pytest.mark.parametrize(
    "document",
    ["[1, 2]", '{"other": []}', '{"tasks": [42]}', '{"workers": ["w"]}', "not json"],
)
def test_malformed_exported_records_are_failures(tmp_path, document):
    path = tmp_path / "records.json"
    path.write_text(document)
    with pytest.raises(EvidenceError):
        exported_controller_tasks(str(path))


# --- repository generations --------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, list[str]]:
    return make_repo(tmp_path / "repo", {"tests/test_x.py": "X = 1\n"}, commits=3)


def test_commits_full_and_short_are_commits_and_others_are_not(repo):
    root, shas = repo
    tree = git(root, "rev-parse", "HEAD^{tree}")
    results = check_generations(
        root, [shas[0], shas[-1][:8], "f" * 40, tree, "HEAD", "--batch", "ab\ncd", ""]
    )
    assert results[shas[0]].status is GenerationStatus.COMMIT
    assert results[shas[-1][:8]].status is GenerationStatus.COMMIT
    assert results["f" * 40].detail == "no such commit"
    assert results[tree].detail == "names a tree, not a commit"
    # Refs, options and multi-line values never reach git: a generation is an object id.
    for hostile in ("HEAD", "--batch", "ab\ncd", ""):
        assert results[hostile].status is GenerationStatus.NOT_A_COMMIT
        assert results[hostile].detail == "not a hexadecimal commit id"


def _colliding_blobs() -> tuple[bytes, bytes, str]:
    seen: dict[str, bytes] = {}
    for i in range(100_000):
        content = f"blob {i}\n".encode()
        prefix = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()[:4]
        if prefix in seen:
            return seen[prefix], content, prefix
        seen[prefix] = content
    raise AssertionError("no collision")


def test_an_ambiguous_short_hash_is_not_a_commit(repo, tmp_path):
    root, _ = repo
    first, second, prefix = _colliding_blobs()
    for name, content in (("a.bin", first), ("b.bin", second)):
        (tmp_path / name).write_bytes(content)
        git(root, "hash-object", "-w", str(tmp_path / name))
    result = check_generations(root, [prefix])[prefix]
    assert (result.status, result.detail) == (GenerationStatus.NOT_A_COMMIT, "ambiguous short hash")


def test_a_generation_missing_from_a_shallow_clone_is_unverifiable(repo, tmp_path):
    root, shas = repo
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{root}", str(shallow)],
        check=True,
        capture_output=True,
    )
    results = check_generations(shallow, [shas[0], shas[-1]])
    assert results[shas[-1]].status is GenerationStatus.COMMIT
    assert results[shas[0]].status is GenerationStatus.UNVERIFIABLE
    assert "shallow clone" in results[shas[0]].detail


def test_a_generation_missing_from_a_partial_clone_is_unverifiable(repo):
    root, _ = repo
    # What `git clone --filter=...` leaves behind: a promisor remote.
    git(root, "remote", "add", "origin", "https://example.invalid/repo.git")
    git(root, "config", "remote.origin.promisor", "true")
    result = check_generations(root, ["e" * 40])["e" * 40]
    assert result.status is GenerationStatus.UNVERIFIABLE
    assert "partial clone" in result.detail


def _blob_none_clone(root: Path, tmp_path: Path) -> Path:
    """A real `git clone --filter=blob:none` of `root`, served by a local bare repository."""
    bare = tmp_path / "upstream.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(bare)], check=True)
    git(bare, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{bare}", str(clone)],
        check=True,
        capture_output=True,
    )
    return clone


def test_an_object_promised_to_a_partial_clone_is_unverifiable_for_that_vm_only(repo, tmp_path):
    root, shas = repo
    clone = _blob_none_clone(root, tmp_path)
    blob = git(root, "rev-parse", "HEAD:CHANGES")  # the clone has its id, not its content
    # Control: asked about the promised blob, cat-file itself dies (lazy fetch forbidden),
    # which used to make the whole audit exit 75 with no generation checked.
    died = subprocess.run(
        ["git", "-C", str(clone), "cat-file", "--batch-check"],
        input=f"{shas[0]}\n{blob}\n",
        capture_output=True,
        text=True,
        env={**repository_generations._git_env(), "HOME": str(tmp_path)},
    )
    assert died.returncode != 0 and "promisor remote" in died.stderr

    vms = write_json(
        tmp_path / "az.json",
        [
            azure_vm("vm-blob", tags={"task-id": "t-1", "repository-generation": blob}),
            azure_vm("vm-commit", tags={"task-id": "t-2", "repository-generation": shas[0]}),
            azure_vm("vm-bogus", tags={"task-id": "t-3", "repository-generation": "f" * 40}),
            azure_vm("vm-last", tags={"task-id": "t-4", "repository-generation": shas[-1]}),
        ],
    )
    home = controller_home(tmp_path / "home", meta=["t-1", "t-2", "t-3", "t-4"])
    result = run_audit_cli(
        "--inventory", str(vms), "--controller-home", str(home), "--repo", str(clone),
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, broken(
        "one-promised-object-fails-one-vm", f"the audit did not run: {result.stderr}"
    )
    found = by_name(json.loads(result.stdout))
    assert found["vm-blob"]["reasons"] == ["unverifiable-generation"]
    assert (
        "promised by the partial clone's remote" in found["vm-blob"]["checks"]["generation_detail"]
    )
    # The generations after it in the same batch are still checked.
    for name in ("vm-commit", "vm-last"):
        assert (found[name]["verdict"], found[name]["reasons"]) == ("ok", [])
        assert found[name]["checks"]["generation"] == "commit"
    # (An id the clone never heard of is unverifiable as before: it may exist upstream.)
    assert found["vm-bogus"]["checks"]["generation"] == "unverifiable"


def test_a_plain_directory_is_not_a_repository_even_inside_one(repo):
    root, shas = repo
    inside = root / "tests"
    with pytest.raises(EvidenceError, match="not a git repository"):
        check_generations(inside, [shas[0]])


def test_a_missing_repository_path_is_a_failure(tmp_path):
    with pytest.raises(EvidenceError, match="not a git repository"):
        check_generations(tmp_path / "nope", ["abcd"])


def test_all_generations_are_checked_by_one_git_cat_file(repo, monkeypatch):
    root, shas = repo
    calls: list[list[str]] = []
    real_run = subprocess.run

    def counting_run(argv, *args, **kwargs):
        calls.append(list(argv))
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(repository_generations.subprocess, "run", counting_run)
    generations = [*shas, *(f"{i:040x}" for i in range(500))]
    results = check_generations(root, generations)
    assert len(results) == len(set(generations))
    assert sum(1 for argv in calls if "cat-file" in argv) == 1
    assert len(calls) <= 3  # plus the constant shallow / partial probes


# --- fixture ids -------------------------------------------------------------


def test_fixture_ids_are_whole_word_literals_in_the_corpus(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text('TASK = "cloud-noenv-c7"\nOTHER = "x.y:z"\n')
    (tests / "blob.bin").write_bytes(b"\0task-in-binary")
    (tests / "__pycache__").mkdir()
    (tests / "__pycache__" / "t.pyc").write_text("task-in-cache")
    ids = tmp_path / "ids.txt"
    ids.write_text("# known fixtures\nexplicit-1\n\n")
    corpus = load_fixture_corpus([tests], [ids])
    found = corpus.fixture_ids(
        [
            "cloud-noenv-c7",
            "cloud-noenv-c77",  # longer: not the literal
            "noenv",  # part of a word, not the id
            "x.y:z",  # non-simple ids use the substring search
            "explicit-1",
            "task-in-binary",
            "task-in-cache",
            "",
        ]
    )
    assert found == {"cloud-noenv-c7", "x.y:z", "explicit-1"}


def test_a_missing_fixture_path_is_a_failure(tmp_path):
    with pytest.raises(EvidenceError, match="does not exist"):
        load_fixture_corpus([tmp_path / "nope"])
