"""The lab's udev: host rules files -> owner, group and mode of the GPU device nodes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from fleet_testing.dev_setup import require_dev_package

from rocm_fleet.hardware.profile import load_profile
from rocm_fleet.hardware.render import render_profile
from rocm_fleet.lab import hwsys, udev

GROUPS = "root:x:0:\nvideo:x:44:\nrender:x:105:\nfleet:x:1000:\n"
PASSWD = "root:x:0:0:root:/root:/bin/bash\nfleet:x:1000:1000::/home/fleet:/bin/bash\n"
# The access role's rule (roles/access/templates/70-rocm-fleet-gpu.rules.j2), rendered.
ROLE_RULE = 'SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="0x1002", GROUP:="render", MODE:="0666"\n'
# Debian 12's udev package (./dev's APT_PACKAGES installs it, so CI always judges the stand-in against it).
DEBIAN_DEFAULT_RULES = Path("/lib/udev/rules.d/50-udev-default.rules")


@pytest.fixture
def host(tmp_path) -> Path:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "group").write_text(GROUPS)
    (root / "etc" / "passwd").write_text(PASSWD)
    return root


@pytest.fixture(scope="module")
def sys_dir(tmp_path_factory) -> Path:
    """The renderer's /sys of a one-GPU Radeon workstation, as the lab mounts it."""
    root = tmp_path_factory.mktemp("render")
    render_profile(load_profile("rx7900xtx-1"), root)
    return root / "sys"


def write_rules(root: Path, directory: str, name: str, text: str) -> None:
    folder = root / directory
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)


def ownership(root: Path, sys_dir: Path, subsystem: str, name: str) -> tuple[int, int, str]:
    permissions = udev.evaluate(udev.load_rules(root), udev.device_from_sys(sys_dir, subsystem, name))
    uid, gid, mode = udev.node_ownership(root, permissions, hwsys.KERNEL_NODE_MODES.get(name))
    return uid, gid, oct(mode)


def test_debian12_defaults_stand_in_when_the_host_has_no_udev_package(host, sys_dir):
    assert ownership(host, sys_dir, "kfd", "kfd") == (0, 105, "0o660")
    assert ownership(host, sys_dir, "drm", "renderD128") == (0, 105, "0o660")
    assert ownership(host, sys_dir, "drm", "card0") == (0, 44, "0o660")


def test_the_real_debian_default_rules_give_what_the_stand_in_gives(host, sys_dir):
    # Fails, not skips, where ./dev set the machine up (CI): a missing package must not switch this test off.
    require_dev_package(DEBIAN_DEFAULT_RULES.exists(), str(DEBIAN_DEFAULT_RULES), "udev")
    real = DEBIAN_DEFAULT_RULES.read_text()
    write_rules(host, "usr/lib/udev/rules.d", "50-udev-default.rules", real)
    assert [name for name, _ in udev.rules_files(host)] == ["50-udev-default.rules"]
    assert ownership(host, sys_dir, "kfd", "kfd") == (0, 105, "0o660")
    assert ownership(host, sys_dir, "drm", "renderD128") == (0, 105, "0o660")
    assert ownership(host, sys_dir, "drm", "card0") == (0, 44, "0o660")


def test_masked_default_rules_leave_the_kernel_modes(host, sys_dir):
    (host / "etc" / "udev" / "rules.d").mkdir(parents=True)
    (host / "etc" / "udev" / "rules.d" / "50-udev-default.rules").symlink_to("/dev/null")
    assert ownership(host, sys_dir, "kfd", "kfd") == (0, 0, "0o666")  # amdkfd's kfd_devnode()
    assert ownership(host, sys_dir, "drm", "renderD128") == (0, 0, "0o600")  # devtmpfs default


def test_the_access_roles_final_rule_wins_over_a_later_file(host, sys_dir):
    write_rules(host, "etc/udev/rules.d", "70-rocm-fleet-gpu.rules", ROLE_RULE)
    write_rules(host, "etc/udev/rules.d", "99-local.rules", 'KERNEL=="renderD*", GROUP="video", MODE="0600"\n')
    assert ownership(host, sys_dir, "drm", "renderD128") == (0, 105, "0o666")
    assert ownership(host, sys_dir, "drm", "card0") == (0, 44, "0o660")  # KERNEL=="renderD*" only


def test_a_later_file_overrides_a_plain_assignment(host, sys_dir):
    write_rules(host, "etc/udev/rules.d", "99-local.rules", 'SUBSYSTEM=="kfd", GROUP="video", MODE="0640"\n')
    assert ownership(host, sys_dir, "kfd", "kfd") == (0, 44, "0o640")


def test_attrs_vendor_must_match_a_device_of_the_parent_chain(host, sys_dir):
    write_rules(host, "etc/udev/rules.d", "70-nvidia.rules", ROLE_RULE.replace("0x1002", "0x10de"))
    assert ownership(host, sys_dir, "drm", "renderD128") == (0, 105, "0o660")
    by_driver = ROLE_RULE.replace('ATTRS{vendor}=="0x1002"', 'DRIVERS=="amdgpu"')
    write_rules(host, "etc/udev/rules.d", "70-nvidia.rules", by_driver)
    assert ownership(host, sys_dir, "drm", "renderD128") == (0, 105, "0o666")


def test_an_etc_file_hides_the_same_name_in_lib(host, sys_dir):
    write_rules(host, "usr/lib/udev/rules.d", "60-gpu.rules", 'SUBSYSTEM=="kfd", MODE="0606"\n')
    write_rules(host, "etc/udev/rules.d", "60-gpu.rules", 'SUBSYSTEM=="kfd", MODE="0604"\n')
    assert ownership(host, sys_dir, "kfd", "kfd") == (0, 105, "0o604")


def test_goto_skips_to_its_label_and_undecidable_rules_are_skipped(host, sys_dir):
    rules = (
        'SUBSYSTEM=="kfd", GOTO="gpu_end"\n'
        'SUBSYSTEM=="kfd", MODE="0600"\n'
        'LABEL="gpu_end"\n'
        'SUBSYSTEM=="kfd", PROGRAM=="/bin/true", MODE="0000"\n'
        'SUBSYSTEM=="kfd", \\\n  OWNER="fleet"\n'
    )
    write_rules(host, "etc/udev/rules.d", "90-test.rules", rules)
    assert ownership(host, sys_dir, "kfd", "kfd") == (1000, 105, "0o660")


def test_unknown_group_is_ignored_and_mode_falls_back_like_udev(host, sys_dir):
    write_rules(host, "etc/udev/rules.d", "50-udev-default.rules", 'SUBSYSTEM=="drm", GROUP="nosuchgroup"\n')
    assert ownership(host, sys_dir, "drm", "renderD128") == (0, 0, "0o600")


def test_a_malformed_rule_names_file_and_line():
    with pytest.raises(udev.RulesError, match=r"bad\.rules:2"):
        udev.parse_rules('# fine\nSUBSYSTEM=="drm" GROUP=video\n', "bad.rules")


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_sync_gpu_nodes_applies_rules_to_new_nodes_and_keeps_existing_ones(tmp_path, host):
    run = tmp_path / "run"
    nodes = hwsys.render_sys("rx7900xtx-1", {}, {"version": None, "options": {}}, run / "sys")
    write_rules(host, "etc/udev/rules.d", "70-rocm-fleet-gpu.rules", ROLE_RULE)
    hwsys.sync_gpu_nodes(run / "dev", nodes, host, run / "sys")
    render = (run / "dev" / "dri" / "renderD128").stat()
    assert (stat.S_IMODE(render.st_mode), render.st_gid) == (0o666, 105)
    (run / "dev" / "dri" / "renderD128").chmod(0o600)  # a role's chmod survives a re-render
    hwsys.sync_gpu_nodes(run / "dev", nodes, host, run / "sys")
    assert stat.S_IMODE((run / "dev" / "dri" / "renderD128").stat().st_mode) == 0o600
    hwsys.sync_gpu_nodes(run / "dev", nodes, host, run / "sys", retrigger=True)  # udevadm trigger
    assert stat.S_IMODE((run / "dev" / "dri" / "renderD128").stat().st_mode) == 0o666
