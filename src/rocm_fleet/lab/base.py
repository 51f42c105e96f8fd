"""The shared Debian 12 base image of every lab host, built once and cached.

The base is a debootstrap minbase plus what a cloud image brings (sshd, python3,
sudo, a login user with passwordless sudo). It is built into a temporary
directory and renamed into the cache only when complete, so an interrupted build
never leaves a half image behind. The stamp is a hash of the recipe below: any
change to it builds a new base next to the old one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rocm_fleet.lab import paths
from rocm_fleet.lab.mounts import unmount_all_under

SUITE = "bookworm"
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


def recipe_hash() -> str:
    recipe = {"suite": SUITE, "variant": "minbase", "packages": PACKAGES, "customize": CUSTOMIZE}
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


def base_path() -> Path:
    return paths.cache_dir() / "base" / f"{SUITE}-{recipe_hash()}"


def debian_mirror() -> str | None:
    """The Debian archive this machine's own apt uses, so the lab needs no extra configuration.

    None lets debootstrap use its built-in default.
    """
    sources = sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))
    for source in sources:
        stanza_uris: list[str] = []
        for line in source.read_text().splitlines() + [""]:
            if line.startswith("URIs:"):
                stanza_uris = line.split(":", 1)[1].split()
            elif line.startswith("Suites:") and SUITE in line.split():
                for uri in stanza_uris:
                    if "security" not in uri:
                        return uri
    legacy = Path("/etc/apt/sources.list")
    if legacy.exists():
        for line in legacy.read_text().splitlines():
            fields = line.split()
            if len(fields) >= 3 and fields[0] == "deb" and fields[2] == SUITE:
                return fields[1]
    return None


def ensure_base(log=print) -> Path:
    """Return the cached base for the current recipe, building it first if needed."""
    target = base_path()
    if (target / ".rocm-fleet-base").exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    debs = paths.cache_dir() / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    building = target.parent / f".build-{target.name}-{time.time_ns()}"
    log(f"lab: building the Debian {SUITE} base image in {target} (first use; cached afterwards)")
    started = time.monotonic()
    try:
        command = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            f"--cache-dir={debs}",
            SUITE,
            str(building),
        ]
        mirror = debian_mirror()
        if mirror:
            command.append(mirror)
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            tail = (result.stdout + result.stderr)[-3000:]
            raise RuntimeError(f"debootstrap failed ({result.returncode}):\n{tail}")
        for step in CUSTOMIZE:
            subprocess.run(["chroot", str(building), "/bin/sh", "-ec", step], check=True, capture_output=True)
        (building / ".rocm-fleet-base").write_text(json.dumps({"recipe": recipe_hash(), "built": time.time()}))
        building.rename(target)
    finally:
        if building.exists():
            # debootstrap mounts /proc and /sys in the new root; never delete through a mount.
            if unmount_all_under(building):
                raise RuntimeError(f"cannot unmount everything under {building}; remove it by hand")
            shutil.rmtree(building, ignore_errors=True)
    log(f"lab: base image built in {time.monotonic() - started:.0f} s")
    return target


if __name__ == "__main__":
    print(ensure_base())
    sys.exit(0)
