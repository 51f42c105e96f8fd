"""Environment faults: what another admin leaves on a GPU server behind the roles' back.

``foreign-env`` writes an /etc/profile.d file exporting HSA_OVERRIDE_GFX_VERSION (root-owned,
0644, as an admin's editor leaves it); ``unlisted-member`` adds a user the inventory does not
list to a GPU group with the host's own useradd and gpasswd. Both are recorded in faults.json
and undone by ``clear`` (the file removed; the user taken out of the group, and deleted
when the fault created it).
"""

from __future__ import annotations

import os

from rocm_fleet.lab.faults import FaultError, load_faults, save_faults
from rocm_fleet.lab.faults_boot import run_in_host
from rocm_fleet.lab.host import LabHost

FOREIGN_ENV_FILE = "etc/profile.d/gfx-override.sh"


def foreign_env(host: LabHost, value: str = "11.0.0", relative: str = FOREIGN_ENV_FILE) -> str:
    path = host.root / relative
    if not relative.startswith("etc/profile.d/") or not relative.endswith(".sh"):
        raise FaultError("the file goes to /etc/profile.d/*.sh (what login shells source)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"export HSA_OVERRIDE_GFX_VERSION={value}\n")
    os.chown(path, 0, 0)
    path.chmod(0o644)
    faults = load_faults(host)
    if relative not in faults.setdefault("foreign_env", []):
        faults["foreign_env"].append(relative)
    save_faults(host, faults)
    return "/" + relative


def _has_user(host: LabHost, user: str) -> bool:
    return any(line.split(":", 1)[0] == user for line in (host.root / "etc/passwd").read_text().splitlines())


def unlisted_member(host: LabHost, user: str, group: str = "render") -> None:
    created = not _has_user(host, user)
    if created:
        run_in_host(host, "useradd", "--create-home", "--shell", "/bin/bash", user)
    run_in_host(host, "gpasswd", "--add", user, group)
    faults = load_faults(host)
    faults.setdefault("unlisted_members", []).append({"user": user, "group": group, "created": created})
    save_faults(host, faults)


def undo(host: LabHost, faults: dict) -> None:
    for relative in faults.get("foreign_env", []):
        (host.root / relative).unlink(missing_ok=True)
    for member in reversed(faults.get("unlisted_members", [])):
        if not _has_user(host, member["user"]):
            continue
        run_in_host(host, "gpasswd", "--delete", member["user"], member["group"])
        if member["created"]:
            run_in_host(host, "userdel", "--remove", member["user"])
