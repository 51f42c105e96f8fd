"""What a failed apt install brought, read from the states the real dpkg leaves on a private root."""

from __future__ import annotations

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.take_back import (
    package_states,
    packages_to_take_back,
)
from fleet_testing.dpkg_root import build_deb, dpkg, dpkg_query, needs_dpkg, new_root

FAILING = {"postinst": "#!/bin/sh\nexit 1\n"}
PAIR = ["amdgpu-dkms", "amdgpu-dkms-firmware"]


@pytest.fixture
def states_after(tmp_path):
    """The host's states after installing ``before`` and then running ``step`` ({name: how}) on it."""

    def make(before=(), step=None):
        root = new_root(tmp_path)
        for name in before:
            dpkg(root, "-i", str(build_deb(tmp_path, name, "1")))
        for name, how in (step or {}).items():
            if how == "unpack":
                dpkg(root, "--unpack", str(build_deb(tmp_path, name, "2")))
            elif how == "fail":
                dpkg(root, "-i", str(build_deb(tmp_path, name, "2", scripts=FAILING)), check=False)
            elif how == "remove-keeping-config":
                dpkg(root, "-i", str(build_deb(tmp_path, name, "2", {"/etc/x.conf": "x"}, conffiles=("/etc/x.conf",))))
                dpkg(root, "-r", name)
            else:
                dpkg(root, "-i", str(build_deb(tmp_path, name, "2")))
        return dpkg_query(root, "-W", "-f", "${db:Status-Abbrev} ${Package}\n").stdout.splitlines()

    return make


@needs_dpkg
def test_each_state_is_read_as_dpkg_query_prints_it(states_after):
    lines = states_after(["ssh"], {"unpacked": "unpack", "failing": "fail", "gone": "remove-keeping-config"})
    assert package_states(lines) == {"gone": "c", "failing": "F", "ssh": "i", "unpacked": "U"}


@needs_dpkg
def test_what_dpkg_left_unconfigured_goes_and_what_was_there_before_stays(states_after):
    lines = states_after(["ssh", "rocm-core7.2.3"], {"hip7.2.3": "unpack", "rocm-llvm7.2.3": "fail"})
    assert packages_to_take_back(package_states(lines), installed_before=["ssh", "rocm-core7.2.3"]) == [
        "hip7.2.3", "rocm-llvm7.2.3"]


@needs_dpkg
def test_an_asked_package_installed_by_the_failed_step_goes_and_an_asked_one_installed_before_stays(states_after):
    lines = states_after(["rocm-core10.1"], {"rocm10.1": "install", "amdrocm-llvm10.1": "unpack"})
    taken = packages_to_take_back(package_states(lines), asked=["rocm10.1", "rocm-core10.1"],
                                  installed_before=["rocm-core10.1"])
    assert taken == ["amdrocm-llvm10.1", "rocm10.1"]


@needs_dpkg
def test_a_removed_package_with_its_configuration_left_is_not_taken_back(states_after):
    lines = states_after(step={"rocm-core7.2.3": "remove-keeping-config"})
    assert packages_to_take_back(package_states(lines), asked=["rocm-core7.2.3"]) == []


@needs_dpkg
def test_a_pair_that_moves_together_goes_whole_when_one_of_it_goes(states_after):
    # The firmware configured at the new line, amdgpu-dkms left unpacked: both go, the firmware too.
    lines = states_after(["ssh"], {"amdgpu-dkms-firmware": "install", "amdgpu-dkms": "unpack"})
    states = package_states(lines)
    assert packages_to_take_back(states, asked=PAIR, installed_before=PAIR + ["ssh"], whole=PAIR) == PAIR


@needs_dpkg
def test_a_pair_all_installed_goes_whole_only_where_apt_finds_dependencies_broken(states_after):
    states = package_states(states_after(PAIR))
    assert packages_to_take_back(states, asked=PAIR, installed_before=PAIR, whole=PAIR) == []
    broken = packages_to_take_back(states, asked=PAIR, installed_before=PAIR, whole=PAIR, dependencies_broken=True)
    assert broken == PAIR


@needs_dpkg
def test_a_pair_member_not_present_is_not_named(states_after):
    states = package_states(states_after(["amdgpu-dkms-firmware"]))
    assert packages_to_take_back(states, whole=PAIR, dependencies_broken=True) == ["amdgpu-dkms-firmware"]


@pytest.mark.parametrize("line", ["ii", "", "ii  two names", "ii ", "garbage", "iX  name"])
def test_a_line_that_is_not_dpkg_querys_is_refused(line):
    with pytest.raises(ValueError, match="not a dpkg-query status line"):
        package_states([line])
