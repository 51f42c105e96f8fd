"""The holds and version locks a host keeps: apt's as the real dpkg records them, dnf's versionlock list as its
plugin reads it (the plugin's configuration decides whether a list counts), zypper's as the real zypper writes them."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import package_locks
from fleet_testing.dpkg_root import build_deb, dpkg, needs_dpkg, new_root


@pytest.fixture
def dpkg_root(tmp_path):
    return new_root(tmp_path)


@needs_dpkg
def test_apt_holds_are_read_as_dpkg_records_them(tmp_path, dpkg_root):
    dpkg(dpkg_root, "-i", str(build_deb(tmp_path, "amdgpu-dkms", "1:6.16.13.30300300-2327507.24.04")))
    dpkg(dpkg_root, "-i", str(build_deb(tmp_path, "rocm-core7.2.3", "7.2.3.70203-71~24.04")))
    dpkg(dpkg_root, "--record-avail", str(build_deb(tmp_path, "rocm-core10.1", "10.1.0-1")))
    dpkg(dpkg_root, "--set-selections", stdin="amdgpu-dkms hold\nrocm-core10.1 hold\n")
    assert package_locks.read_locks("apt", str(dpkg_root)) == [
        {"name": "amdgpu-dkms", "version": "1:6.16.13.30300300-2327507.24.04", "installed": True, "kind": "hold"},
        {"name": "rocm-core10.1", "version": None, "installed": False, "kind": "hold"},
    ]
    dpkg(dpkg_root, "--set-selections", stdin="amdgpu-dkms install\nrocm-core10.1 install\n")
    assert package_locks.read_locks("apt", str(dpkg_root)) == []


def test_a_host_without_dpkgs_status_has_no_holds(tmp_path):
    assert package_locks.read_locks("apt", str(tmp_path)) == []


# What `dnf versionlock add` writes (the plugin's pkgtup2spec: NAME-EPOCH:VERSION-RELEASE.*), a `!` exclusion,
# and a raw entry (`dnf versionlock add --raw`) that names no version.
LIST = (
    "# Added lock on Sat Dec  5 10:00:00 2026\namdgpu-dkms-1:6.16.13.30300300-2327507.el9.*\n"
    "\n!rocm-core-0:7.2.3-1.*\nhip*\n"
)
CONF = "[main]\nenabled = 1\nlocklist = /etc/dnf/plugins/versionlock.list\n"


def dnf_root(tmp_path, conf=CONF, dnf_conf=None):
    plugins = tmp_path / "etc/dnf/plugins"
    plugins.mkdir(parents=True)
    (plugins / "versionlock.list").write_text(LIST)
    if conf is not None:
        (plugins / "versionlock.conf").write_text(conf)
    if dnf_conf is not None:
        (tmp_path / "etc/dnf/dnf.conf").write_text(dnf_conf)
    return str(tmp_path)


def test_versionlock_entries_are_read_from_the_list_the_plugin_names(tmp_path):
    assert package_locks.read_locks("dnf", dnf_root(tmp_path)) == [
        {"name": "amdgpu-dkms", "version": "1:6.16.13.30300300-2327507.el9", "kind": "lock"},
        {"name": "rocm-core", "version": "0:7.2.3-1", "kind": "exclude"},
        {"name": "hip*", "version": None, "kind": "lock"},
    ]


@pytest.mark.parametrize(
    ("conf", "dnf_conf"),
    [
        (None, None),  # the plugin is not installed: its list binds nothing
        ("[main]\nenabled = 0\nlocklist = /etc/dnf/plugins/versionlock.list\n", None),
        ("[main]\nenabled = 1\n", None),  # no list named
        (CONF, "[main]\ngpgcheck=1\nplugins=0\n"),  # dnf loads no plugin
    ],
)
def test_a_list_the_plugin_does_not_read_locks_nothing(tmp_path, conf, dnf_conf):
    assert package_locks.read_locks("dnf", dnf_root(tmp_path, conf, dnf_conf)) == []


def test_a_manager_whose_locks_are_not_read_is_refused(tmp_path):
    with pytest.raises(ValueError, match="apt, dnf, zypper"):
        package_locks.read_locks("pacman", str(tmp_path))


needs_zypper = pytest.mark.skipif(not shutil.which("zypper"), reason="zypper is not installed")


def zypper_root(tmp_path, *locks, zypp_conf=None):
    """A root whose locks file the real zypper wrote (``zypper --root ROOT addlock LOCK...``)."""
    (tmp_path / "etc/zypp").mkdir(parents=True)
    if zypp_conf is not None:
        (tmp_path / "etc/zypp/zypp.conf").write_text(zypp_conf)
    for lock in locks:
        subprocess.run(["zypper", "--non-interactive", "--root", str(tmp_path), "addlock", lock], check=True,
                       capture_output=True)  # fmt: skip
    return str(tmp_path)


@needs_zypper
def test_zypper_locks_are_read_as_zypper_addlock_writes_them(tmp_path):
    root = zypper_root(tmp_path, "kernel-default", "amdgpu-dkms < 6.14", "rocm*")
    assert sorted(package_locks.read_locks("zypper", root), key=lambda lock: lock["name"]) == [
        {"name": "amdgpu-dkms", "version": "< 6.14", "kind": "zypper"},
        {"name": "kernel-default", "version": None, "kind": "zypper"},
        {"name": "rocm*", "version": None, "kind": "zypper"},
    ]


@needs_zypper
def test_zypper_locks_zypp_conf_does_not_apply_lock_nothing(tmp_path):
    root = zypper_root(tmp_path, "amdgpu-dkms", zypp_conf="[main]\nlocksfile.apply = false\n")
    assert package_locks.read_locks("zypper", root) == []


def test_a_host_without_a_locks_file_has_no_zypper_locks(tmp_path):
    assert package_locks.read_locks("zypper", str(tmp_path)) == []


def test_a_lock_by_summary_or_of_a_pattern_names_no_package_and_is_left_out():
    text = "\ntype: pattern\nmatch_type: glob\nsolvable_name: devel_basis\n\n\nsolvable_summary: kernel\n\n"
    assert package_locks.zypper_locks(lambda path: text if path.endswith("locks") else None) == []
