"""One lab host seen from the controller: its root, its first-boot setup, its supervisor."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from rocm_fleet.lab import base, bls, paths, systems
from rocm_fleet.lab.mounts import is_mount_point, unmount_all_under

SUPERVISOR_MODULE = "rocm_fleet.lab.supervisor"


def write_pid_file(path: Path, pid: int) -> None:
    """Replace ``path`` with ``pid`` in one step: a reader never sees the file empty.

    The launcher and the supervisor both write it while ``lab up`` polls it; an in-place write
    (truncate, then write) read between its two steps read as "no supervisor", and failed a boot.
    """
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(f"{pid}\n")
    temporary.rename(path)


def recorded_system(host_json: dict) -> str:
    """The system of a host.json; lab versions before lab_os recorded the Debian release, all before it Debian 12."""
    if "system" in host_json:
        return str(host_json["system"])
    return f"debian{host_json.get('debian', '12')}"


@dataclass(frozen=True)
class HostSpec:
    name: str
    profile: str
    port: int
    groups: tuple[str, ...] = ()
    generated: bool = False
    system: str = systems.DEFAULT  # the operating system (systems.SYSTEMS key, lab_os) the host is installed with

    @property
    def suite(self) -> str:
        """The Debian suite of the host's userland."""
        return systems.system(self.system).suite


class LabHost:
    def __init__(self, spec: HostSpec):
        self.spec = spec
        self.dir = paths.host_dir(spec.name)
        self.root = self.dir / "root"

    # -- filesystem ---------------------------------------------------------
    def installed_system(self) -> str | None:
        """The operating system the host's disk was installed with; None before its first boot."""
        try:
            data = json.loads((self.dir / "host.json").read_text())
        except (OSError, ValueError):
            return None
        return recorded_system(data)

    def erase_disk(self) -> None:
        """Forget the host's disk, as reinstalling a server does; it must be stopped and unmounted."""
        if unmount_all_under(self.dir):
            raise RuntimeError(f"{self.spec.name}: cannot unmount everything under {self.dir}")
        shutil.rmtree(self.dir)

    def mount_root(self, base_dir: Path, layer_dir: Path) -> None:
        if is_mount_point(self.root):
            return
        for sub in ("upper", "work", "root"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        options = f"lowerdir={layer_dir}:{base_dir},upperdir={self.dir / 'upper'},workdir={self.dir / 'work'}"
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o", options, str(self.root)], check=True)

    def configure(self, public_key: str) -> None:
        """First boot setup as cloud-init does it, plus what may change between runs (port, key)."""
        etc = self.root / "etc"
        marker = etc / "rocm-fleet-lab" / "root-uuid"
        if not marker.exists():
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(f"{uuid.uuid4()}\n")
            (etc / "machine-id").write_text(uuid.uuid4().hex + "\n")
            (etc / "hostname").write_text(self.spec.name + "\n")
            (etc / "hosts").write_text(
                f"127.0.0.1\tlocalhost\n127.0.1.1\t{self.spec.name}\n::1\tlocalhost ip6-localhost ip6-loopback\n"
            )
            key = etc / "ssh" / "ssh_host_ed25519_key"
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{self.spec.name}", "-f", str(key)],
                check=True,
            )
            if systems.system(self.spec.system).boot_loader == "bls":
                bls.install(self.root, os.uname().release)  # the installer's entry, grubenv and /etc/kernel/cmdline
            else:  # the installer's grub.cfg: Debian's update-grub, SUSE's grub2-mkconfig
                command = {"grub2": ["/usr/sbin/grub2-mkconfig", "-o", "/boot/grub2/grub.cfg"]}.get(
                    systems.system(self.spec.system).boot_loader, ["/usr/sbin/update-grub"])
                subprocess.run(["chroot", str(self.root), *command], check=True, capture_output=True)
        (etc / "ssh" / "sshd_config.d" / "20-lab-listen.conf").write_text(
            f"# Written by the rocm-fleet lab: this host's sshd on the machine's loopback.\n"
            f"ListenAddress 127.0.0.1:{self.spec.port}\n"
        )
        user_ids = self._login_user_ids()
        ssh_dir = self.root / "home" / base.LOGIN_USER / ".ssh"
        authorized = ssh_dir / "authorized_keys"
        authorized.write_text(public_key.strip() + "\n")
        for path in (ssh_dir, authorized):
            os.chown(path, *user_ids)
        authorized.chmod(0o600)
        spec = self.spec
        (self.dir / "host.json").write_text(
            json.dumps({"name": spec.name, "profile": spec.profile, "port": spec.port, "system": spec.system})
        )

    def _login_user_ids(self) -> tuple[int, int]:
        for line in (self.root / "etc" / "passwd").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == base.LOGIN_USER:
                return int(fields[2]), int(fields[3])
        raise RuntimeError(f"{self.spec.name}: no user {base.LOGIN_USER} in the host's /etc/passwd")

    def host_key_line(self) -> str:
        key_type, key = (self.root / "etc/ssh/ssh_host_ed25519_key.pub").read_text().split()[:2]
        return f"[127.0.0.1]:{self.spec.port} {key_type} {key}"

    # -- supervisor ---------------------------------------------------------
    def supervisor_pid(self) -> int | None:
        try:
            pid = int((self.dir / "supervisor.pid").read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            return None
        return pid if SUPERVISOR_MODULE.encode() in cmdline and self.spec.name.encode() in cmdline else None

    def _supervisor_alive(self) -> bool:
        # By pid only: a supervisor just forked still shows its parent's command line.
        try:
            return _alive(int((self.dir / "supervisor.pid").read_text()))
        except (OSError, ValueError):
            return False

    def is_running(self) -> bool:
        return self.supervisor_pid() is not None

    def start(self) -> None:
        if self.is_running():
            return
        (self.dir / "status.json").unlink(missing_ok=True)
        env = {**os.environ, "ROCM_FLEET_LAB_DIR": str(paths.state_dir()), "PYTHONUNBUFFERED": "1"}
        with open(self.dir / "supervisor.log", "ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", SUPERVISOR_MODULE, self.spec.name],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                env=env,
                close_fds=True,
            )
        write_pid_file(self.dir / "supervisor.pid", process.pid)

    def stop(self, timeout: float = 10) -> None:
        self.wait_stopped(self.request_stop(), time.monotonic() + timeout)

    def request_stop(self) -> int | None:
        """Ask the supervisor to power the host off (it kills the host's pid 1); return its pid."""
        pid = self.supervisor_pid()
        if pid is not None:
            os.kill(pid, signal.SIGTERM)
        return pid

    @staticmethod
    def wait_stopped(pid: int | None, deadline: float) -> None:
        if pid is None:
            return
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)  # the host's pid 1 dies with it (parent-death signals)
            _alive(pid)

    def status(self) -> dict:
        try:
            status = json.loads((self.dir / "status.json").read_text())
        except (OSError, ValueError):
            status = {}
        status["state"] = status.get("state", "down") if self.is_running() else "down"
        return status

    def wait_ready(self, deadline: float) -> bool:
        """True once sshd answers with an SSH banner on the host's port."""
        import socket

        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.spec.port), timeout=1) as connection:
                    if connection.recv(64).startswith(b"SSH-"):
                        return True
            except OSError:
                pass
            if not self._supervisor_alive():
                return False
            time.sleep(0.1)
        return False

    def system_state(self, wait: float = 0) -> str:
        """``systemctl is-system-running`` inside the host, with its failed units when degraded ("degraded: a, b").

        Asked through the host's pid 1 (nsenter): machinectl would need machined, which the machine lacks.
        ``wait``: seconds to let a booting host reach its state (``--wait``). "down" without a running host.
        """
        init_pid = self.status().get("init_pid") if self.is_running() else None
        if not init_pid:
            return "down"
        enter = ["nsenter", f"--target={init_pid}", "--all", "systemctl"]
        try:
            answer = (
                subprocess.run(
                    [*enter, "is-system-running", *(["--wait"] if wait else [])],
                    capture_output=True,
                    text=True,
                    timeout=wait or 10,
                ).stdout.strip()
                or "unknown"
            )
            if answer == "degraded":
                failed = subprocess.run(
                    [*enter, "list-units", "--failed", "--plain", "--no-legend"],
                    capture_output=True,
                    text=True,
                    timeout=10,
                ).stdout.split("\n")
                answer += ": " + ", ".join(line.split()[0] for line in failed if line.strip())
        except (OSError, subprocess.TimeoutExpired):
            answer = "starting" if wait else "unknown"
        return answer

    def unmount(self) -> list[str]:
        return unmount_all_under(self.dir)


def _alive(pid: int) -> bool:
    """True while ``pid`` runs; reaps it when it is our child, and a zombie counts as gone."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False
