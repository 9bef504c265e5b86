"""What the command writes under --hard lands only where the run may write.

Each test writes where a later program outside the seal would read (the home's
dotfiles, the interpreter's installation, a CI runner's files, the terminal's
input) and requires the real thing unchanged after the run; its control is a
mutant in tests/hard/test_hard_confinement_controls.py.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import sys
import sysconfig
import termios
import tty
from pathlib import Path

from hard_helpers import hard_env, hard_run, python_child
from named_checks import broken

import cloudguard

DOTFILES = {
    ".gitconfig": "[user]\n\tname = operator\n",
    ".bashrc": "# the operator's shell\n",
    ".ssh/config": "Host *\n",
    ".docker/config.json": "{}\n",
    ".kube/config": "apiVersion: v1\n",
    "cloudguard.toml": "# the operator's own\n",
}
PLANT = """
set -u
for name in {names}; do echo 'planted' >> "$HOME/$name" && echo "WROTE $name"; done
mkdir -p "$HOME/.cache/tool" && echo 'cached' > "$HOME/.cache/tool/data"
echo "CACHE $(cat "$HOME/.cache/tool/data")"
echo "GITCONFIG $(tail -n 1 "$HOME/.gitconfig")"
exit 0
"""


def test_writes_to_the_home_land_in_a_layer_thrown_away_after_the_run(tmp_path: Path) -> None:
    env = hard_env(tmp_path)
    home = Path(env["HOME"])
    for name, text in DOTFILES.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    script = PLANT.format(names=" ".join(DOTFILES))

    run = hard_run(tmp_path, "sh", "-c", script, env=env)

    assert "CACHE cached" in run.stdout, broken(
        "a-cache-written-under-home-reads-back", f"a cache under ~ did not work:\n{run.output}"
    )
    for name in DOTFILES:  # written inside: the suite sees its writes, as it would outside
        assert f"WROTE {name}" in run.stdout, run.output
    assert "GITCONFIG planted" in run.stdout, run.output
    changed = [name for name, text in DOTFILES.items() if (home / name).read_text() != text]
    assert not changed, broken(
        "the-real-home-is-unchanged", f"{changed} changed outside the seal:\n{run.output}"
    )
    assert not (home / ".cache").exists(), run.output
    assert run.returncode == 0, run.output


# The kernel refusing the homes' overlay (overlayfs not permitted in a user namespace: Linux
# before 5.11, or a distribution that turned it off), made in the test's own launcher: the
# seal's mount of the layer fails as such a kernel's does. Not a switch any user can set.
OVERLAY_REFUSED = (
    "-c",
    "import errno, runpy; from cloudguard.guard.hard import masks\n"
    "def refused(path, layer):\n"
    "    raise OSError(errno.EPERM, 'Operation not permitted')\n"
    "masks._overlay = refused\n"
    "runpy.run_module('cloudguard', run_name='__main__')",
)


def test_where_the_kernel_refuses_the_homes_layer_the_home_is_read_only_and_said(
    tmp_path: Path,
) -> None:
    env = hard_env(tmp_path)
    home = Path(env["HOME"])
    (home / ".gitconfig").write_text("[user]\n\tname = operator\n")
    script = (
        "cat ~/.gitconfig; (echo planted >> ~/.gitconfig) 2>/dev/null && echo WROTE-HOME; "
        "echo built > build.txt && echo WROTE-CHECKOUT; exit 0"
    )

    run = hard_run(tmp_path, "sh", "-c", script, env=env, cwd=tmp_path, launcher=OVERLAY_REFUSED)

    assert "name = operator" in run.stdout, run.output  # the home is still read
    assert "WROTE-HOME" not in run.stdout, broken(
        "a-refused-layer-leaves-the-home-read-only", f"the home was writable:\n{run.output}"
    )
    assert (home / ".gitconfig").read_text() == "[user]\n\tname = operator\n", run.output
    assert f"the kernel refused an overlay over {home}" in run.stderr, broken(
        "a-refused-layer-is-said", f"the fallback was silent:\n{run.output}"
    )
    assert "it is read-only inside instead of a layer" in run.stderr, run.output
    assert "WROTE-CHECKOUT" in run.stdout, run.output  # what the run may write still is
    assert run.returncode == 0, run.output


def test_the_checkout_inside_a_layered_home_is_written_for_real_its_git_is_not(
    tmp_path: Path,
) -> None:
    env = hard_env(tmp_path)
    checkout = Path(env["HOME"]) / "src" / "project"
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    head = (checkout / ".git" / "HEAD").read_text()
    script = (
        "echo built > build.txt && echo WROTE-CHECKOUT; "
        "(echo 'ref: refs/heads/planted' > .git/HEAD) 2>/dev/null && echo WROTE-GIT; exit 0"
    )

    run = hard_run(tmp_path, "sh", "-c", script, env=env, cwd=checkout)

    assert "WROTE-CHECKOUT" in run.stdout, run.output
    assert (checkout / "build.txt").is_file(), broken(
        "the-checkout-is-written-for-real", f"the checkout's write was thrown away:\n{run.output}"
    )
    assert "WROTE-GIT" not in run.stdout, broken(
        "the-git-metadata-is-read-only", f".git/HEAD was written inside:\n{run.output}"
    )
    assert (checkout / ".git" / "HEAD").read_text() == head, run.output


def test_the_interpreters_installation_and_cloudguards_package_are_read_only(
    tmp_path: Path,
) -> None:
    token = secrets.token_hex(4)
    planted = [
        # A comment line only: if it ever landed, it would run nothing.
        Path(sysconfig.get_paths()["purelib"]) / f"cloudguard-planted-{token}.pth",
        Path(cloudguard.__file__).parent / "__pycache__" / f"planted_{token}.cpython.pyc",
        Path(sys.prefix) / f"planted-{token}",
    ]
    code = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        open(path, 'w').write('# planted\\n')\n"
        "        print('WROTE', path)\n"
        "    except OSError as e:\n"
        "        print('REFUSED', path, e.strerror)\n"
    )
    try:
        run = hard_run(tmp_path, *python_child("-I", code=code), *map(str, planted))
        landed = [str(path) for path in planted if path.exists()]
    finally:
        for path in planted:
            path.unlink(missing_ok=True)

    assert run.stdout.count("REFUSED") + run.stdout.count("WROTE") == 3, run.output
    assert not landed, broken(
        "the-installation-is-unchanged", f"{landed} written from inside:\n{run.output}"
    )
    assert run.stdout.count("Read-only file system") == 3, run.output


CI_VARIABLES = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")


def test_the_ci_runners_files_are_read_only_inside(tmp_path: Path) -> None:
    files = tmp_path / "runner-file-commands"
    files.mkdir()
    named = {variable: files / variable.lower() for variable in CI_VARIABLES}
    for path in named.values():
        path.write_text("")
    env = hard_env(tmp_path, **{variable: str(path) for variable, path in named.items()})
    script = (
        "for v in " + " ".join(CI_VARIABLES) + "; do "
        'eval f=\\$$v; (echo "BASH_ENV=/tmp/planted" >> "$f") 2>/dev/null && echo "WROTE $v"; '
        "done; exit 0"
    )

    run = hard_run(tmp_path, "sh", "-c", script, env=env)

    written = [variable for variable, path in named.items() if path.read_text()]
    assert not written, broken(
        "the-ci-files-are-unchanged", f"{written} written from inside:\n{run.output}"
    )
    assert "WROTE" not in run.stdout, run.output
    assert run.returncode == 0, run.output


TERMINAL = """
import errno, fcntl, os, termios
try:
    os.close(os.open("/dev/tty", os.O_RDWR))
    print("CONTROLLING-TERMINAL yes")
except OSError as e:
    print("CONTROLLING-TERMINAL", errno.errorcode[e.errno])
print("SESSION-LEADER", os.getsid(0) == os.getpid())
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"Z")
    print("TIOCSTI pushed")
except OSError as e:
    print("TIOCSTI", errno.errorcode[e.errno])
"""


def _controlling_terminal(slave: int) -> None:
    """The run's session, with the pty as its controlling terminal: the operator's shell."""
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)


def test_the_command_has_a_session_of_its_own_and_cannot_push_terminal_input(
    tmp_path: Path,
) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)  # a byte pushed into the input queue is readable at once, unechoed
    log = tmp_path / "reach.jsonl"
    argv = [
        *("unshare", "-rn", sys.executable, "-m", "cloudguard", "run", "--hard"),
        *("--log", str(log), "--", sys.executable, "-I", "-c", TERMINAL),
    ]
    try:
        result = subprocess.run(
            argv,
            env=hard_env(tmp_path),
            stdin=slave,
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=lambda: _controlling_terminal(slave),
            check=False,
        )
        os.set_blocking(slave, False)
        try:
            pushed = os.read(slave, 64)  # what the operator's shell would read next
        except BlockingIOError:
            pushed = b""
    finally:
        os.close(master)
        os.close(slave)
    output = f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"

    assert "SESSION-LEADER" in result.stdout, broken("its-output-streams", output)
    assert pushed == b"", broken(
        "tiocsti-never-reaches-the-terminal", f"{pushed!r} was pushed into its input:\n{output}"
    )
    assert "TIOCSTI EPERM" in result.stdout, output
    assert "CONTROLLING-TERMINAL ENXIO" in result.stdout, broken(
        "no-controlling-terminal-inside", f"the operator's terminal is the command's:\n{output}"
    )
    assert "SESSION-LEADER True" in result.stdout, output
    assert result.returncode == 0, output


def test_files_named_by_sealed_variables_and_linked_credentials_read_empty(
    tmp_path: Path,
) -> None:
    key = tmp_path / "keys" / "service-account.json"
    key.parent.mkdir()
    key.write_text('{"type": "service_account", "private_key": "SECRET-KEY"}')
    config = tmp_path / "azure-config"
    config.mkdir()
    (config / "msal_token_cache.json").write_text("SECRET-TOKEN")
    env = hard_env(tmp_path, GOOGLE_APPLICATION_CREDENTIALS=str(key), AZURE_CONFIG_DIR=str(config))
    home = Path(env["HOME"])
    stowed = home / "dotfiles" / "aws" / "credentials"  # a stow layout: the home links there
    stowed.parent.mkdir(parents=True)
    stowed.write_text("[default]\naws_secret_access_key = SECRET-LINKED\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").symlink_to(stowed)
    script = f"cat {key} {stowed} {config}/msal_token_cache.json 2>&1; echo READ; exit 0"

    run = hard_run(tmp_path, "sh", "-c", script, env=env)

    assert "READ" in run.stdout, run.output
    assert "SECRET-KEY" not in run.stdout, broken(
        "the-file-a-sealed-variable-names-is-masked",
        f"GOOGLE_APPLICATION_CREDENTIALS's file was readable inside:\n{run.output}",
    )
    assert "SECRET-TOKEN" not in run.stdout, run.output
    assert "SECRET-LINKED" not in run.stdout, broken(
        "a-link-target-inside-a-masked-home-is-masked",
        f"the target of ~/.aws/credentials was readable inside:\n{run.output}",
    )
    assert key.read_text().endswith('"SECRET-KEY"}'), run.output  # the real one untouched


# Inside, google-auth is handed every path the operator's ADC was at, as a child that rebuilt
# them would: the key file, the CLOUDSDK_CONFIG directory, then ~/.config/gcloud (no variable).
ADC_PROBE = """
import os, sys
import google.auth, google.auth.exceptions
sys.stdout.write("ADC-READ\\n")
key, config = sys.argv[1:]
for names in ({"GOOGLE_APPLICATION_CREDENTIALS": key}, {"CLOUDSDK_CONFIG": config}, {}):
    os.environ.pop("GOOGLE_APPLICATION_CREDENTIALS", None)
    os.environ.pop("CLOUDSDK_CONFIG", None)
    os.environ.update(names)
    try:
        credentials, _ = google.auth.default()
        sys.stdout.write(f"FOUND {sorted(names)} {credentials.refresh_token}\\n")
    except google.auth.exceptions.GoogleAuthError as error:
        sys.stdout.write(f"NONE {sorted(names)} {type(error).__name__}\\n")
    except Exception as error:  # the metadata ping after no file: refused, not found
        sys.stdout.write(f"NONE {sorted(names)} {type(error).__name__}\\n")
"""


def test_application_default_credentials_are_found_nowhere_inside(tmp_path: Path) -> None:
    adc = (
        '{{"type": "authorized_user", "client_id": "c", "client_secret": "s", '
        '"refresh_token": "{}"}}'
    )
    key = tmp_path / "keys" / "adc.json"
    key.parent.mkdir()
    key.write_text(adc.format("SECRET-KEYFILE"))
    config = tmp_path / "gcloud-config"
    config.mkdir()
    (config / "application_default_credentials.json").write_text(adc.format("SECRET-CONFIG"))
    env = hard_env(tmp_path, GOOGLE_APPLICATION_CREDENTIALS=str(key), CLOUDSDK_CONFIG=str(config))
    default = Path(env["HOME"]) / ".config" / "gcloud" / "application_default_credentials.json"
    default.parent.mkdir(parents=True)
    default.write_text(adc.format("SECRET-HOME"))

    run = hard_run(tmp_path, sys.executable, "-I", "-c", ADC_PROBE, str(key), str(config), env=env)

    assert "ADC-READ" in run.stdout, run.output
    assert "SECRET-CONFIG" not in run.stdout, broken(
        "the-cloudsdk-config-directory-is-masked",
        f"the ADC in the directory CLOUDSDK_CONFIG named was found inside:\n{run.output}",
    )
    assert "SECRET-KEYFILE" not in run.stdout, run.output
    assert "SECRET-HOME" not in run.stdout, run.output
    assert run.stdout.count("NONE ") == 3, run.output  # the control: each was asked for
    assert (config / "application_default_credentials.json").read_text().count("SECRET") == 1


def test_the_files_kubeconfig_names_read_empty_and_the_variable_is_dropped(tmp_path: Path) -> None:
    # KUBECONFIG is a `:`-separated list; each file holds cluster credentials, and its exec
    # plugin (`aws eks get-token`) runs a cloud login.
    clusters = tmp_path / "clusters"
    clusters.mkdir()
    first, second = clusters / "prod.yaml", clusters / "eks.yaml"
    first.write_text("users:\n- user: {token: SECRET-KUBE-TOKEN}\n")
    second.write_text("users:\n- user: {exec: {command: aws, args: [SECRET-EKS-EXEC]}}\n")
    env = hard_env(tmp_path, KUBECONFIG=f"{first}:{second}")
    script = f'cat {first} {second} 2>&1; echo "KUBECONFIG=${{KUBECONFIG-unset}}"; exit 0'

    run = hard_run(tmp_path, "sh", "-c", script, env=env)

    assert "KUBECONFIG=unset" in run.stdout, broken(
        "kubeconfig-is-sealed", f"KUBECONFIG reached the command:\n{run.output}"
    )
    assert "SECRET-KUBE-TOKEN" not in run.stdout, broken(
        "the-files-kubeconfig-names-are-masked", f"a kubeconfig was readable:\n{run.output}"
    )
    assert "SECRET-EKS-EXEC" not in run.stdout, run.output
    assert run.returncode == 0, run.output
    assert "SECRET-KUBE-TOKEN" in first.read_text(), run.output  # the real one untouched


INTERRUPTIBLE = """
import os, signal, sys, time
def interrupted(*_):  # os.write: the signal may come while print("READY") still holds stdout
    os.write(1, b"GOT-INT\\n")
    os._exit(3)
signal.signal(signal.SIGINT, interrupted)
print("READY", flush=True)
time.sleep(30)
"""


def test_ctrl_c_at_the_terminal_still_reaches_the_command_once(tmp_path: Path) -> None:
    argv = [
        *("unshare", "-rn", sys.executable, "-m", "cloudguard", "run", "--hard"),
        *("--log", str(tmp_path / "reach.jsonl"), "--", sys.executable, "-I", "-c"),
        INTERRUPTIBLE,
    ]
    with subprocess.Popen(
        argv,
        env=hard_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the terminal's foreground one
    ) as run:
        assert run.stdout is not None
        ready = run.stdout.readline()
        if ready.strip() == "READY":
            os.killpg(run.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        try:
            out, err = run.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            run.kill()
            out, err = run.communicate()
    output = f"exit {run.returncode}\n{ready}{out}\n{err}"

    assert ready.strip() == "READY", output
    assert out.count("GOT-INT") == 1, broken(
        "ctrl-c-reaches-the-command-once", f"the command got {out.count('GOT-INT')}:\n{output}"
    )
    assert run.returncode == 3, output


def test_the_rest_of_the_filesystem_is_read_only_even_to_root(tmp_path: Path) -> None:
    token = secrets.token_hex(4)
    # Where a program run later outside looks first: a `git` early on the PATH, the system's
    # git config directory. Writable by root (a CI container), and by the suite run as root.
    planted = [
        Path("/usr/local/bin") / f"cloudguard-planted-{token}",
        Path(f"/etc/planted-{token}"),
    ]
    script = " ".join(f"(echo planted > {p}) 2>/dev/null && echo WROTE {p};" for p in planted)
    try:
        control = hard_run(tmp_path, "sh", "-c", script + " exit 0", options=())
        could = [str(p) for p in planted if p.exists()]
        for path in planted:
            path.unlink(missing_ok=True)
        run = hard_run(tmp_path, "sh", "-c", script + " exit 0")
        landed = [str(p) for p in planted if p.exists()]
    finally:
        for path in planted:
            path.unlink(missing_ok=True)

    assert could == [str(p) for p in planted], (
        f"the control could not write them:\n{control.output}"
    )
    assert not landed, broken(
        "the-rest-is-read-only", f"{landed} written from inside the seal:\n{run.output}"
    )
    assert "WROTE" not in run.stdout, run.output
    assert run.returncode == 0, run.output


def test_a_home_kept_in_git_is_still_a_layer_and_the_working_directory_real(
    tmp_path: Path,
) -> None:
    env = hard_env(tmp_path)
    home = Path(env["HOME"])
    subprocess.run(["git", "init", "-q", str(home)], check=True)  # dotfiles kept in git at ~
    (home / ".bashrc").write_text("# the operator's shell\n")
    project = home / "src" / "project"
    project.mkdir(parents=True)
    script = "echo planted >> ~/.bashrc; echo built > build.txt; exit 0"

    run = hard_run(tmp_path, "sh", "-c", script, env=env, cwd=project)

    assert (project / "build.txt").is_file(), f"the working directory was not real:\n{run.output}"
    assert (home / ".bashrc").read_text() == "# the operator's shell\n", broken(
        "a-home-in-git-is-a-layer", f"~/.bashrc changed outside the seal:\n{run.output}"
    )
    # Not asserted: the exit code. The tracked-files check takes the home's repository for the
    # checkout and names build.txt as added there (its own judgement, cloudguard.guard.tracked).


def test_as_an_ordinary_user_the_home_is_a_layer_too() -> None:
    # The kernel lets an ordinary user mount the overlay only in a user namespace of its own
    # (Linux 5.11+): the layer is made as the suite's own uid, not only as root.
    from second_uid import package_copy, world_readable_dir

    second_user = package_copy(world_readable_dir())
    try:
        _home_layer_as_the_second_user(second_user)
    finally:
        shutil.rmtree(second_user, ignore_errors=True)


def _home_layer_as_the_second_user(second_user: Path) -> None:
    from second_uid import OTHER_UID, guard_run_script, run_guard

    home = second_user / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = operator\n")
    if os.geteuid() == 0:
        for path in (home, home / ".gitconfig"):
            os.chown(path, OTHER_UID, OTHER_UID)
    work = second_user / "work"
    work.mkdir()
    work.chmod(0o777)  # the second user's working directory (mkdir's mode is under the umask)
    script = (
        'echo planted >> "$HOME/.gitconfig" && mkdir -p "$HOME/.cache" && '
        'echo cached > "$HOME/.cache/data" && echo "READ $(cat "$HOME/.cache/data")"; '
        "echo built > built.txt; id -u"
    )
    code = f"import os\nos.environ['HOME'] = {str(home)!r}\nos.chdir({str(work)!r})\n"
    code += guard_run_script(["sh", "-c", script], second_user / "reach.jsonl", hard=True)

    run = run_guard(second_user, code, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    output = f"exit {run.returncode}\n{run.stdout}\n{run.stderr}"

    assert "READ cached" in run.stdout, broken("a-cache-written-under-home-reads-back", output)
    assert (home / ".gitconfig").read_text() == "[user]\n\tname = operator\n", broken(
        "the-real-home-is-unchanged", f"~/.gitconfig changed outside the seal:\n{output}"
    )
    assert not (home / ".cache").exists(), output
    assert (work / "built.txt").is_file(), output
    assert run.returncode == 0, output


def test_a_declared_output_inside_the_home_is_written_for_real(tmp_path: Path) -> None:
    env = hard_env(tmp_path)
    cache = Path(env["HOME"]) / ".cache" / "myapp"
    cache.mkdir(parents=True)
    registry = tmp_path / "registry.toml"
    registry.write_text('[outputs]\n"~/.cache/myapp" = "the suite\'s download cache"\n')
    script = 'echo kept > "$HOME/.cache/myapp/data"; echo lost > "$HOME/.cache/other"; exit 0'

    run = hard_run(
        tmp_path, "sh", "-c", script, env=env, options=("--hard", "--registry", str(registry))
    )

    assert (cache / "data").is_file(), broken(
        "a-declared-output-is-written-for-real", f"the output's write was lost:\n{run.output}"
    )
    assert not (cache.parent / "other").exists(), run.output  # the rest of ~: the layer's
    assert run.returncode == 0, run.output
