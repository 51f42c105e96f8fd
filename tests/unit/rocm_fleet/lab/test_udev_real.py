"""The real udev judges the access role's rules on a rendered GPU, and the lab's stand-in agrees with it.

``udevadm test`` runs in each lab base (Debian 12: systemd 252, Debian 13: 257; both carry
the udev and systemd packages, so all of Debian's rules files are there) with the rendered
/sys of a Radeon workstation and the role's rules bound over /etc/udev/rules.d. Without
the role's masking copy of 70-uaccess.rules the render node is tagged uaccess (the seat's
user would get an ACL); with it neither the render node nor /dev/kfd is, and card0 still
is. The stand-in (rocm_fleet.lab.udev) reads the same files and must give the same group
and mode.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.udev_uaccess import masked_uaccess_rules
from fleet_testing.dev_setup import require_dev_package
from fleet_testing.udev_judge import udevadm_test

from rocm_fleet.hardware.profile import load_profile
from rocm_fleet.hardware.render import render_profile
from rocm_fleet.lab import base, debroot, hwsys, udev

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="udevadm test runs in a mount namespace: needs root")
UACCESS = "usr/lib/udev/rules.d/70-uaccess.rules"
# The access role's rules (roles/access/templates/70-rocm-fleet-gpu.rules.j2), rendered with modes
# that differ from Debian's defaults, so the role's := is what both judges must see.
ROLE_RULES = (
    'SUBSYSTEM=="kfd", KERNEL=="kfd", GROUP:="render", MODE:="0666"\n'
    'SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="0x1002", GROUP:="render", MODE:="0640"\n'
)
DEVICES = {"renderD128": ("drm", 0o640), "kfd": ("kfd", 0o666)}


@pytest.fixture(scope="module", params=sorted(base.SUITES.values()))
def udev_root(request) -> Path:
    # No debootstrap is the one case with nothing to judge with: the Debian 13 controller root that runs
    # tests/unit for test_newest_ansible_core.py has none. Where ./dev set the machine up (CI) it is there
    # (APT_PACKAGES), so its absence fails; and a root that does not build (debootstrap, Debian's archive,
    # the recipe) is an error, never a skip: it would silently switch the real-udev judge off.
    require_dev_package(shutil.which("debootstrap") is not None, "debootstrap", "debootstrap")
    return debroot.ensure_root(base.recipe(request.param), log=lambda *_: None)


@pytest.fixture(scope="module")
def sys_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("render")
    render_profile(load_profile("rx7900xtx-1"), root)
    return root / "sys"


def role_rules(folder: Path, root: Path, masked: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "70-rocm-fleet-gpu.rules").write_text(ROLE_RULES)
    if masked:
        (folder / "70-uaccess.rules").write_text(masked_uaccess_rules((root / UACCESS).read_text()))
    return folder


def stand_in(root: Path, rules: Path, sys_dir: Path, subsystem: str, name: str) -> tuple[int, int]:
    """(gid, mode) from the lab's stand-in over the root's own rules files and ``rules`` as /etc/udev/rules.d."""
    host = rules.parent / "host"
    shutil.copytree(root / "usr/lib/udev/rules.d", host / "usr/lib/udev/rules.d", dirs_exist_ok=True)
    shutil.copytree(rules, host / "etc/udev/rules.d", dirs_exist_ok=True)
    (host / "etc/group").write_text((root / "etc/group").read_text())
    permissions = udev.evaluate(udev.load_rules(host), udev.device_from_sys(sys_dir, subsystem, name))
    _uid, gid, mode = udev.node_ownership(host, permissions, hwsys.KERNEL_NODE_MODES.get(name))
    return gid, mode


def render_gid(root: Path) -> int:
    return next(
        int(line.split(":")[2]) for line in (root / "etc/group").read_text().splitlines() if line.startswith("render:")
    )


def test_without_the_mask_the_real_udev_tags_the_render_node_uaccess(udev_root, sys_dir, tmp_path):
    rules = role_rules(tmp_path / "rules", udev_root, masked=False)
    verdict = udevadm_test(udev_root, sys_dir, "/sys/class/drm/renderD128", rules)
    assert "uaccess" in verdict.tags and "uaccess" in verdict.run, verdict


def test_with_the_mask_no_gpu_node_is_tagged_and_both_judges_give_the_roles_group_and_mode(
    udev_root, sys_dir, tmp_path
):
    rules = role_rules(tmp_path / "rules", udev_root, masked=True)
    for name, (subsystem, mode) in DEVICES.items():
        verdict = udevadm_test(udev_root, sys_dir, f"/sys/class/{subsystem}/{name}", rules)
        assert not verdict.uaccess, (name, verdict)
        assert (verdict.group, verdict.mode) == (str(render_gid(udev_root)), mode), (name, verdict.applied)
        assert stand_in(udev_root, rules, sys_dir, subsystem, name) == (render_gid(udev_root), mode), name
    # The display node keeps the seat's access: the mask is about the AMD render nodes alone.
    card = udevadm_test(udev_root, sys_dir, "/sys/class/drm/card0", rules)
    assert "uaccess" in card.current_tags and "uaccess" in card.run, card
    video = next(
        line.split(":")[2] for line in (udev_root / "etc/group").read_text().splitlines() if line.startswith("video:")
    )
    assert card.group == video
    assert stand_in(udev_root, rules, sys_dir, "drm", "card0")[0] == int(video)


def test_the_stand_in_reads_every_rules_file_of_the_distribution(udev_root):
    names = [name for name, _rules in udev.load_rules(udev_root)]
    assert {"50-udev-default.rules", "70-uaccess.rules", "73-seat-late.rules"} <= set(names)
