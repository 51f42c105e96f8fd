"""The base images of the lab hosts, one per operating system (rocm_fleet.lab.systems), built once and cached.

A base is a debootstrap minbase plus what a cloud image brings (sshd, python3,
sudo, a login user with passwordless sudo). A Debian system's base is its suite's;
another system's is a copy of the suite's base underneath it with the system's packages
installed and its identity written over it. The lab runs Debian 12 and 13 and Ubuntu hosts side by side, as a site does.
"""

from __future__ import annotations

import shlex
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rocm_fleet.lab import debroot, systems

# Debian release -> its suite: the userlands every lab system runs on.
SUITES = {system.version: system.suite for system in systems.SYSTEMS.values() if system.family == "debian"}
SUITE = systems.system(systems.DEFAULT).suite
LOGIN_USER = "fleet"
PACKAGES = (
    "openssh-server",
    "python3",
    "python3-apt",  # ansible.builtin.apt needs it and cannot install it without a repository
    "sudo",
    "procps",
    "iproute2",
    "pciutils",
    "kmod",
    "ca-certificates",
    "less",
    # Every real Debian machine has both (Priority important): the hosts carry the
    # distribution's own udev rules, which the lab applies (rocm_fleet.lab.udev) and the
    # real udevadm test judges. Debian 12 ships 70-uaccess.rules and the seat rules in
    # systemd, not udev. systemd boots the host (rocm_fleet.lab.nspawn); udevd does not run.
    "udev",
    "systemd",
    # /sbin/init, shutdown, reboot, poweroff, halt: what a server's systemd is booted and stopped with.
    "systemd-sysv",
    # A server's login sessions (logind, on the system bus); systemd 252's `shutdown -r 0`, which
    # ansible.builtin.reboot runs, schedules the reboot through logind.
    "dbus",
    "libpam-systemd",
)
# Commands run inside the new root after debootstrap (chroot, no network needed).
CUSTOMIZE = (
    f"useradd --create-home --shell /bin/bash --user-group {LOGIN_USER}",
    f"install -d -m 0700 -o {LOGIN_USER} -g {LOGIN_USER} /home/{LOGIN_USER}/.ssh",
    # Debian's cloud images grant the default user sudo this way (cloud-init users file).
    f"printf '%s\\n' '{LOGIN_USER} ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/90-cloud-init-users",
    "chmod 0440 /etc/sudoers.d/90-cloud-init-users",
    # Each host generates its own host keys; the base must not share any.
    "rm -f /etc/ssh/ssh_host_*",
    "printf '%s\\n' 'PermitRootLogin no' 'PasswordAuthentication no' 'UseDNS no'"
    " 'HostKey /etc/ssh/ssh_host_ed25519_key' > /etc/ssh/sshd_config.d/10-lab.conf",
    # The base trusts no repository: the roles add the lab mirror and its key.
    "rm -f /etc/apt/sources.list && : > /etc/apt/sources.list",
    "apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/*.log",
    "groupadd --system --force render",
)


def recipe(suite: str = SUITE) -> debroot.Recipe:
    # Named by the suite alone, so a cached Debian 12 base of earlier versions is reused.
    return debroot.Recipe(name=suite, suite=suite, packages=PACKAGES, customize=CUSTOMIZE)


def system_recipe(key: str) -> debroot.Recipe:
    """The base of a lab system: its suite's, with the system's packages and identity files where it has them (a copy
    of the suite's base they are installed and written in)."""
    system = systems.system(key)
    debian = recipe(system.suite)
    if not system.identity and not system.packages:
        return debian
    writes = tuple(f"printf %s {shlex.quote(content)} > /{path}" for path, content in sorted(system.identity.items()))
    return debroot.Recipe(
        name=system.key,
        suite=system.suite,
        packages=system.packages,
        customize=writes + system.setup,
        parent=debian,
    )


def base_path(suite: str = SUITE) -> Path:
    return recipe(suite).path()


def ensure_base(suite: str = SUITE, log=print) -> Path:
    """Return the cached Debian base of ``suite``, building it first if needed."""
    return debroot.ensure_root(recipe(suite), log=log)


def ensure_system_base(key: str, log=print) -> Path:
    """Return the cached base of the lab system ``key``, building it first if needed."""
    return debroot.ensure_root(system_recipe(key), log=log)


def ensure_bases(keys, log=print) -> dict[str, Path]:
    """The cached base of each lab system; missing ones are built side by side (debootstrap mostly waits on I/O)."""
    keys = sorted(set(keys))
    with ThreadPoolExecutor(max_workers=max(1, len(keys))) as pool:
        futures = {key: pool.submit(ensure_system_base, key, log) for key in keys}
    return {key: future.result() for key, future in futures.items()}


if __name__ == "__main__":
    print(ensure_base(sys.argv[1] if len(sys.argv) > 1 else SUITE))
    sys.exit(0)
