"""A second Ansible controller: Debian 13's Python 3.13 with the newest ansible-core release from PyPI.

CI proves both ends of meta/runtime.yml's requires_ansible: this machine's .venv
runs the lowest supported ansible-core, this controller the newest release. It is
a cached Debian 13 root (``debroot``), a virtualenv beside it in the cache, and a
wheelhouse of what pip fetched. A checkout copied by ``copy_checkout`` is mounted
into it, so nothing there runs from this machine's paths.

Each command runs in mount and PID namespaces of its own: the root is an overlay
with a tmpfs upper layer (the cached root never changes), and every mount and
process (ssh's control masters included) ends with the command, even when killed.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from rocm_fleet.collection import checkout_path
from rocm_fleet.lab import debroot, paths

RECIPE = debroot.Recipe(
    name="controller-trixie",
    suite="trixie",  # Debian 13: Python 3.13
    # gpg and its agent: unit tests of the signing-key checks generate keys, as on the machine's own controller.
    packages=("python3", "python3-venv", "openssh-client", "ca-certificates", "gpg", "gpg-agent"),
    customize=("apt-get clean", "rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /var/log/*.log"),
)
VENV = "/opt/rocm-fleet/venv"
CHECKOUT = "/srv/rocm-fleet"
WHEELHOUSE = "/var/cache/pip-wheels"
STAMP = ".rocm-fleet-installed.json"  # what the virtualenv was last brought to
# The test tools the controller runs besides the project's own dependencies (pyproject.toml's [test] extra).
TEST_TOOLS = ("pytest", "ansible-lint")
# The community package carries the collections the roles use (ansible.posix, community.general);
# its pin of an ansible-core series may lag the newest core release, so it comes without it.
COLLECTIONS_PACKAGE = "ansible"
# What of this machine's environment reaches pip in the root (a site's package index or proxy).
PASSED_ENV = (
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)
# pip in the root trusts what this machine trusts (a site's proxy CA is in this bundle, not in the root's).
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


class ControllerError(RuntimeError):
    """The controller root or its virtualenv could not be made."""


def venv_dir() -> Path:
    """The controller's virtualenv in the cache, one per root (it links to the root's python3)."""
    return paths.cache_dir() / "controller" / f"venv-{RECIPE.digest()}"


def wheelhouse() -> Path:
    """Every distribution pip fetched for the controller, so a new virtualenv downloads only what is new.

    A directory of wheels rather than pip's HTTP cache, which keeps nothing that a
    proxy serves without caching headers.
    """
    return paths.cache_dir() / "pip" / "wheels"


def _mount_point() -> Path:
    """An empty directory each command mounts its own tmpfs on, inside its private mount namespace."""
    return paths.cache_dir() / "controller" / "mnt"


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower()


def requirements(pyproject: Path | None = None) -> list[str]:
    """pyproject.toml's dependencies and the test tools the controller runs, as pyproject states them.

    The collections package is left out: it is installed on its own (``Controller.install``).
    """
    pyproject = pyproject or checkout_path("pyproject.toml", "the project's dependencies")
    project = tomllib.loads(pyproject.read_text())["project"]
    tests = {_requirement_name(item): item for item in project["optional-dependencies"]["test"]}
    wanted = [item for item in project["dependencies"] if _requirement_name(item) != COLLECTIONS_PACKAGE]
    return wanted + [tests[name] for name in TEST_TOOLS]


def copy_checkout(repo: Path, target: Path) -> Path:
    """Copy the working tree as git sees it (tracked and untracked, not ignored) to ``target``; links stay links."""
    listing = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    target.mkdir(parents=True, exist_ok=True)
    for relative in sorted(set(filter(None, listing.split("\0")))):
        source, copy = repo / relative, target / relative
        if not source.is_symlink() and not source.exists():
            continue  # deleted in the working tree, not yet committed
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            copy.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, copy)
    return target


@dataclass(frozen=True)
class Bind:
    """A path of this machine mounted at ``inside`` in the root."""

    source: Path
    inside: str
    writable: bool = False


_VERSIONS = """
import importlib.metadata, json, sys
def version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
print(json.dumps({name: version(name) for name in sys.argv[1:]}))
"""
# Runs as PID 1 of the new namespaces: the overlay root, the kernel's file systems, the binds, then chroot.
_ENTER = r"""
set -eu
lower=$1 mnt=$2; shift 2
mount -t tmpfs -o mode=0755 tmpfs "$mnt"
mkdir "$mnt/upper" "$mnt/work" "$mnt/root"
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$mnt/upper,workdir=$mnt/work" "$mnt/root"
root=$mnt/root
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind -o ro /sys "$root/sys"
mount --bind /etc/resolv.conf "$root/etc/resolv.conf"
while [ "$1" != -- ]; do
  source=$1 inside=$2 mode=$3; shift 3
  if [ -d "$source" ]; then mkdir -p "$root$inside"; else mkdir -p "$(dirname "$root$inside")"; touch "$root$inside"; fi
  mount --bind "$source" "$root$inside"
  if [ "$mode" = ro ]; then mount -o remount,bind,ro "$root$inside"; fi
done
shift
exec chroot "$root" "$@"
"""


class Controller:
    """The root, its virtualenv and how to run a command in them."""

    def __init__(self, root: Path, venv: Path):
        self.root, self.venv = root, venv

    def _binds(self, extra: tuple[Bind, ...]) -> list[Bind]:
        wheelhouse().mkdir(parents=True, exist_ok=True)
        found = [Bind(self.venv, VENV, writable=True), Bind(wheelhouse(), WHEELHOUSE, writable=True)]
        if HOST_CA_BUNDLE.is_file():
            found.append(Bind(HOST_CA_BUNDLE, str(HOST_CA_BUNDLE)))
        return found + list(extra)

    def command(
        self, argv: list[str], cwd: str = "/", env: dict | None = None, binds: tuple[Bind, ...] = ()
    ) -> list[str]:
        """The command line that runs ``argv`` in the root, in ``cwd``, with only ``env`` and a basic environment."""
        environment = {"HOME": "/root", "LANG": "C.UTF-8", "PATH": f"{VENV}/bin:/usr/bin:/bin:/usr/sbin:/sbin"}
        environment.update({name: os.environ[name] for name in PASSED_ENV if name in os.environ})
        environment.update(env or {})
        mounts = []
        for bind in self._binds(binds):
            mounts += [str(bind.source), bind.inside, "rw" if bind.writable else "ro"]
        _mount_point().mkdir(parents=True, exist_ok=True)
        return [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--pid",
            "--fork",
            "--kill-child",
            "sh",
            "-c",
            _ENTER,
            "enter",
            str(self.root),
            str(_mount_point()),
            *mounts,
            "--",
            "/usr/bin/env",
            "-i",
            *(f"{key}={value}" for key, value in environment.items()),
            "/bin/sh",
            "-c",
            'cd "$0" && exec "$@"',
            cwd,
            *argv,
        ]

    def run(
        self,
        argv: list[str],
        cwd: str = "/",
        env: dict | None = None,
        binds: tuple[Bind, ...] = (),
        timeout: float = 900,
    ) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(argv, cwd, env, binds), capture_output=True, text=True, timeout=timeout)

    def pip(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
        result = self.run([f"{VENV}/bin/python", "-m", "pip", "--disable-pip-version-check", *args], timeout=timeout)
        if result.returncode != 0:
            raise ControllerError(
                f"pip {' '.join(args)} failed in the controller root ({result.returncode}):\n"
                f"{(result.stdout + result.stderr)[-3000:]}"
            )
        return result

    def versions(self, *distributions: str) -> dict[str, str | None]:
        """The installed version of each of ``distributions`` in the virtualenv (None: not installed)."""
        result = self.run([f"{VENV}/bin/python", "-c", _VERSIONS, *distributions])
        if result.returncode != 0:
            raise ControllerError(f"the controller's virtualenv does not run: {result.stderr.strip()[-2000:]}")
        return json.loads(result.stdout)

    def newest(self, *names: str) -> dict[str, str]:
        """The version pip would install of each of ``names`` on the root's Python: its newest release."""
        report = self.pip("install", "--dry-run", "--quiet", "--ignore-installed", "--no-deps", "--report", "-", *names)
        return {
            item["metadata"]["name"].lower(): item["metadata"]["version"]
            for item in json.loads(report.stdout)["install"]
        }

    def _fetch_and_install(self, *args: str) -> None:
        """pip download into the wheelhouse (only what it lacks), then install from the wheelhouse alone."""
        self.pip("download", "--quiet", "--dest", WHEELHOUSE, *args)
        # --no-compile: most of what it installs (the ansible package's collections) is never imported; what is gets
        # its bytecode cached at its first import (dev's venv, likewise).
        self.pip("install", "--quiet", "--no-compile", "--no-index", "--find-links", WHEELHOUSE, "--upgrade", *args)

    def install(self, pyproject: Path | None = None, log=print) -> dict:
        """Bring the virtualenv to the newest ansible-core release; return what pip offers and what is installed.

        The newest releases are asked for alone, so nothing else holds ansible-core
        back; the project's dependencies and test tools are then resolved with it
        pinned. While the newest releases are the ones installed, this only asks the index.
        """
        if not (self.venv / "bin" / "python").exists():
            created = self.run(["/usr/bin/python3", "-m", "venv", VENV])
            if created.returncode != 0:
                raise ControllerError(f"python3 -m venv failed in the controller root: {created.stderr.strip()}")
        wanted = {"newest": self.newest("ansible-core", COLLECTIONS_PACKAGE), "requirements": requirements(pyproject)}
        stamp = self.venv / STAMP
        if not stamp.exists() or json.loads(stamp.read_text()) != wanted:
            core, collections = wanted["newest"]["ansible-core"], wanted["newest"][COLLECTIONS_PACKAGE]
            log(f"controller: installing ansible-core {core} and the collections of ansible {collections}")
            stamp.unlink(missing_ok=True)
            (self.venv / "constraints.txt").write_text(f"ansible-core=={core}\n")
            self._fetch_and_install("--constraint", f"{VENV}/constraints.txt", *wanted["requirements"])
            self._fetch_and_install("--no-deps", f"{COLLECTIONS_PACKAGE}=={collections}")
            stamp.write_text(json.dumps(wanted))
        return {
            "newest": wanted["newest"],
            "installed": self.versions("ansible-core", COLLECTIONS_PACKAGE, "ansible-lint", "pytest"),
        }

    def python_version(self) -> str:
        result = self.run(["/usr/bin/python3", "-c", "import platform; print(platform.python_version())"])
        return result.stdout.strip()


def prepare(pyproject: Path | None = None, log=print) -> tuple[Controller, dict]:
    """The controller, its root built and its virtualenv at the newest release; and ``Controller.install``'s answer.

    One preparation at a time per cache: tests/run-all starts one in the background
    while the quality gates run, and the test that needs it waits here for it.
    """
    if os.geteuid() != 0:
        raise ControllerError("the controller root needs root (debootstrap, mounts)")
    for tool in ("debootstrap", "unshare", "chroot", "git"):
        if not shutil.which(tool):
            raise ControllerError(f"the controller root needs {tool} on this machine")
    venv = venv_dir()
    venv.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        controller = Controller(debroot.ensure_root(RECIPE, log=log), venv)
        return controller, controller.install(pyproject, log=log)


if __name__ == "__main__":
    controller, versions = prepare()
    print(f"controller root {controller.root}, Python {controller.python_version()}: {json.dumps(versions)}")
    sys.exit(0)
