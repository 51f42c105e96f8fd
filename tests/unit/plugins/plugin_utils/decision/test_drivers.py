"""amdgpu driver lines: the table, the choice of a line, amdgpu-dkms per package manager, the loaded module."""

import copy
import re
from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.drivers import (
    choose_driver,
    dkms_move,
    dkms_outdated,
    dkms_package,
    driver_table_problems,
    loaded_driver,
    series_covers,
)
from fleet_testing.rocm_preflight_data import DRIVERS, MATRIX

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"


def capture(name):
    return (CAPTURES / name).read_text()


def test_the_builtin_table_and_the_matrix_references_are_usable():
    assert driver_table_problems(DRIVERS, MATRIX) == []
    assert all(line["source"] for line in DRIVERS.values())


def test_every_legacy_7x_release_names_a_30x_line_with_its_module_and_kernel():
    releases = [version for version in MATRIX if version.startswith("7.") and not MATRIX[version].get("stream")]
    assert releases == ["7.0.0", "7.0.1", "7.0.2", "7.1.0", "7.1.1", "7.2.0", "7.2.1", "7.2.2", "7.2.3", "7.2.4"]
    own = dict((version, MATRIX[version]["amdgpu_driver"]) for version in releases)
    assert own == {"7.0.0": "30.10", "7.0.1": "30.10.1", "7.0.2": "30.10.2", "7.1.0": "30.20", "7.1.1": "30.20.1",
                   "7.2.0": "30.30", "7.2.1": "30.30.1", "7.2.2": "30.30.2", "7.2.3": "30.30.3", "7.2.4": "30.30.4"}
    modules = dict((line, DRIVERS[line]["kernel_module"]) for line in own.values())
    assert set(modules[line] for line in ("30.10", "30.10.1", "30.10.2")) == {"6.14.14"}
    assert set(modules[line] for line in ("30.20", "30.20.1")) == {"6.16.6"}
    assert set(modules[line] for line in ("30.30", "30.30.1", "30.30.2", "30.30.3", "30.30.4")) == {"6.16.13"}
    assert {DRIVERS[line]["kernel"]["max"] for line in own.values()} == {"6.14", "6.16"}


def test_the_core_sdk_releases_name_the_31x_lines_and_run_with_the_30x_ones():
    # AMD's 7.14.0 and 10.0.0 install pages (driver 31.40, 31.50); the amdgpu compatibility matrix rows
    # "31.50.x", "7.0.x, 7.1.x, 7.2.x, 7.14.x, 10.0.0" (ROCm/amdgpu-docs compatibility-matrix.rst).
    own = {version: row["amdgpu_driver"] for version, row in MATRIX.items() if row.get("stream")}
    assert own == {"7.14.0": "31.40", "10.0.0": "31.50", "10.1.0": "31.50", "10.2.0": "31.50"}
    assert (DRIVERS["31.40"]["kernel_module"], DRIVERS["31.50"]["kernel_module"]) == ("6.19.14", "7.1.3")
    assert (DRIVERS["31.40"]["kernel"]["max"], DRIVERS["31.50"]["kernel"]["max"]) == ("6.19", "7.1")
    # The driver may stay through the move: 7.2.x runs with 31.50 and 10.0.0 with 30.30.
    assert choose_driver(MATRIX, DRIVERS, "7.2.3", "31.50")[1] == []
    assert choose_driver(MATRIX, DRIVERS, "10.0.0", "30.30.3")[1] == []
    assert "does not run with amdgpu driver line 6.4.1" in choose_driver(MATRIX, DRIVERS, "10.0.0", "6.4.1")[1][0]


@pytest.mark.parametrize(
    ("series", "line", "covered"),
    [("30.30", "30.30", True), ("30.30", "30.30.3", True), ("30.3", "30.30.3", False), ("6.4", "6.4.1", True),
     ("6.4", "6.4.0", True), ("30.30.3", "30.30", False), ("6.4", "6.40.1", False)],
)
def test_a_series_covers_its_lines(series, line, covered):
    assert series_covers(series, line) is covered


def test_the_release_own_line_is_the_default():
    driver, problems = choose_driver(MATRIX, DRIVERS, "7.2.3")
    assert problems == []
    assert (driver["line"], driver["own_line"], driver["chosen"], driver["repo_dir"]) == (
        "30.30.3", "30.30.3", "own", "30.30.3")
    assert choose_driver(MATRIX, DRIVERS, "6.4.0")[0]["repo_dir"] == "6.4"  # x.y.0 drops .0, as today
    assert choose_driver(MATRIX, DRIVERS, "6.0.0") == (None, [])  # no sourced line: none decided


def test_a_newer_line_that_amd_lists_for_the_release_is_taken():
    # ROCm 7.0.2 user space with the 30.30 driver, as the MI355X capture's banner shows
    # ("amdgpu version: 6.16.13  ROCm version: 7.0.2").
    banner = capture("mi355x-8gpu_rocm7.0.2_amd-smi-default.txt").splitlines()[1]
    assert re.search(r"amdgpu version: 6\.16\.13\s+ROCm version: 7\.0\.2", banner)
    driver, problems = choose_driver(MATRIX, DRIVERS, "7.0.2", "30.30.3")
    assert problems == [] and (driver["line"], driver["own_line"], driver["chosen"]) == ("30.30.3", "30.10.2",
                                                                                          "inventory")
    assert driver["kernel_module"] == "6.16.13"


@pytest.mark.parametrize(
    ("version", "requested", "message"),
    [
        ("7.2.3", "30.40", "preflight_amdgpu_driver 30.40 is not an amdgpu driver line AMD publishes (known: 6.1.0,"),
        ("7.2.3", "6.3.3", "ROCm 7.2.3 does not run with amdgpu driver line 6.3.3: AMD's user/kernel compatibility "
                           "lists 30.30.3, 31.50, 31.40, 30.30, 30.20, 30.10, 6.4 for it"),
        ("7.0.2", "30.20.1", "ROCm 7.0.2 does not run with amdgpu driver line 30.20.1"),
        ("6.2.4", "6.4.1", "lists 6.2.4 for it (no source)"),
    ],
)
def test_a_line_the_release_cannot_run_is_refused_with_what_it_can(version, requested, message):
    driver, problems = choose_driver(MATRIX, DRIVERS, version, requested)
    assert driver is None and len(problems) == 1 and message in problems[0], problems


def test_broken_table_entries_are_named():
    drivers = copy.deepcopy(DRIVERS)
    drivers["30.30.3"].update(source="", repo_dir="../x", kernel_module="six", amdgpu_dkms={"deb": "x:1"})
    drivers["31.0"] = "not a mapping"
    matrix = dict(MATRIX, **{"7.9.0": dict(MATRIX["7.2.3"], amdgpu_driver="30.99", amdgpu_compatible_source="")})
    problems = driver_table_problems(drivers, matrix)
    assert problems == [
        "amdgpu driver line 30.30.3: has no source",
        "amdgpu driver line 30.30.3: repo_dir '../x' is not a directory name like 30.10.2",
        "amdgpu driver line 30.30.3: kernel_module 'six' is not a version",
        "amdgpu driver line 30.30.3: amdgpu_dkms.deb: not a package version (bad epoch): 'x:1'",
        "amdgpu driver line 31.0: must be a mapping",
        "support matrix ROCm 7.9.0: amdgpu_driver 30.99 is not a line of the amdgpu driver table",
        "support matrix ROCm 7.9.0: amdgpu_compatible has no amdgpu_compatible_source",
    ]


# amdgpu-dkms as each package manager gets it. apt: AMD's Debian version of the line
# (1:6.16.13.30300300-2327507.22.04, the line's own source); dnf and zypper: at least the
# line's RPM version, whose release carries the dist tag (amdgpu-dkms-6.14.14-2226257.el10).
@pytest.mark.parametrize(
    ("line", "manager", "spec", "glob"),
    [
        ("30.30.3", "apt", "amdgpu-dkms=1:6.16.13.30300300-*", "1:6.16.13.30300300-*"),
        ("30.30.3", "dnf", "amdgpu-dkms >= 1:6.16.13-2327507", "1:6.16.13-2327507*"),
        ("30.30.3", "zypper", "amdgpu-dkms>=1:6.16.13-2327507", "1:6.16.13-2327507*"),
        ("30.20.1", "apt", "amdgpu-dkms=1:6.16.6.30200100-*", "1:6.16.6.30200100-*"),
        ("30.20.1", "dnf", "amdgpu-dkms >= 1:6.16.6-2255209", "1:6.16.6-2255209*"),
        ("6.4.1", "apt", "amdgpu-dkms=1:6.12.12.60401-*", "1:6.12.12.60401-*"),
        ("6.4.1", "dnf", "amdgpu-dkms >= 1:6.12.12", "1:6.12.12-*"),
    ],
)
def test_dkms_package_per_manager(line, manager, spec, glob):
    package = dkms_package(dict(DRIVERS[line], line=line), manager)
    assert (package["name"], package["spec"], package["version"]) == ("amdgpu-dkms", spec, glob)


def test_an_unsourced_package_version_is_an_error_naming_the_line():
    with pytest.raises(ValueError, match=r"the rpm version of amdgpu-dkms in driver line 6\.2\.4 is unknown"):
        dkms_package(dict(DRIVERS["6.2.4"], line="6.2.4"), "dnf")
    with pytest.raises(ValueError, match="unknown package manager"):
        dkms_package(dict(DRIVERS["6.4.1"], line="6.4.1"), "pacman")


@pytest.mark.parametrize(
    ("installed", "manager", "outdated"),
    [
        ([], "apt", True),
        ([{"version": "1:6.12.12.60401-2164967.22.04"}], "apt", True),  # the lab's 6.4.1 driver moves to 30.30.3
        ([{"version": "1:6.16.13.30300000-2278356.24.04"}], "apt", True),
        ([{"version": "1:6.16.13.30300300-2327507.24.04"}], "apt", False),
        ([{"version": "1:6.16.13.30300400-2341068.24.04"}], "apt", False),  # a newer driver stays
        ([{"version": "6.16.13", "release": "2278356.el9", "epoch": 1}], "dnf", True),
        ([{"version": "6.16.13", "release": "2327507.el9", "epoch": 1}], "dnf", False),
        ([{"version": "6.16.13", "release": "2327507.el9", "epoch": None}], "zypper", True),  # epoch 0 < 1
    ],
)
def test_the_driver_moves_when_none_or_an_older_one_is_installed(installed, manager, outdated):
    assert dkms_outdated(installed, dict(DRIVERS["30.30.3"], line="30.30.3"), manager) is outdated


def modinfo_version(text):
    """The `version:` field of `modinfo amdgpu | grep version` (srcversion and parm lines also match the grep)."""
    found = re.search(r"^version:\s+(\S+)$", text, re.MULTILINE)
    return found.group(1) if found else None


def amd_smi_driver_version(text):
    found = re.search(r"^\s+VERSION: (.*)$", text, re.MULTILINE)
    return found.group(1) if found else None


def test_the_dkms_module_reports_its_own_version():
    # ROCm/ROCm#5915: rocm-core 7.2.0 with amdgpu-dkms 30.30 (modinfo amdgpu | grep version).
    version = modinfo_version(capture("mi210-8gpu_rocm7.2.0_modinfo-amdgpu-grep-version_dkms-6.16.13.txt"))
    assert loaded_driver(version) == {"kind": "dkms", "version": "6.16.13", "kernel": None}
    assert version == DRIVERS["30.30"]["kernel_module"]
    # The lab writes what dkms calls the module (6.12.12-2164967.22.04); its version is the numbers.
    assert loaded_driver("6.12.12-2164967.22.04")["version"] == "6.12.12"


def test_the_in_tree_driver_is_never_a_version():
    # ROCm/ROCm#5679 (R9700, mainline 6.17.8): no version field, only srcversion, vermagic and a parm line.
    text = capture("r9700-1gpu_unknown_modinfo-amdgpu-grep-version_in-tree-kernel-no-version-field.txt")
    assert modinfo_version(text) is None and loaded_driver(modinfo_version(text))["kind"] == "unknown"
    # ROCm/ROCm#6074: amd-smi 26.2.2 static --driver prints the kernel banner, spaces collapsed.
    banner = amd_smi_driver_version(
        capture("rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-static-driver_version-is-kernel-banner.txt"))
    assert loaded_driver(banner) == {"kind": "in-tree", "version": None, "kernel": "6.19.11"}
    # The same machine's amd-smi banner cuts it to "Linuxver".
    default = capture("rx7900xtx-2gpu_rocm-na-amdsmi26.2.2_amd-smi-default_rocm-version-na_fan-column-no-percent.txt")
    assert "amdgpu version: Linuxver " in default
    assert loaded_driver("Linuxver") == {"kind": "in-tree", "version": None, "kernel": None}
    # rocm-smi's "Driver version" of the in-tree driver is the kernel release (shared captures, rx6600xt).
    assert loaded_driver("6.8.0-45-generic", kernel="6.8.0-45-generic")["kind"] == "in-tree"
    assert loaded_driver("6.12.12", kernel="6.12.12-amd64")["kind"] == "dkms"


LINE_30303 = dict(DRIVERS["30.30.3"], line="30.30.3")
LINE_641 = dict(DRIVERS["6.4.1"], line="6.4.1")
FIRMWARE_641 = [{"version": "1:6.12.12.60401-2164967.22.04"}]
FIRMWARE_30303 = [{"version": "30.30.3.0.30300300-2327507.24.04"}]


@pytest.mark.parametrize(
    ("installed", "firmware", "driver", "manager", "downgrade", "move"),
    [
        ([], [], LINE_30303, "apt", False, {"install": True, "remove_first": False}),
        # 6.x -> 30.x on apt: the renumbered firmware sorts below the installed one, so the old driver goes first.
        ([{"version": "1:6.12.12.60401-2164967.22.04"}], FIRMWARE_641, LINE_30303, "apt", False,
         {"install": True, "remove_first": True}),
        # dnf replaces the packages by name.
        ([{"version": "6.12.12", "release": "2187269.el9", "epoch": 1}], FIRMWARE_641, LINE_30303, "dnf", False,
         {"install": True, "remove_first": False}),
        # Within the 30.x numbering apt moves the pair itself.
        ([{"version": "1:6.16.6.30200100-2255209.24.04"}], [{"version": "30.20.1.0.30200100-2255209.24.04"}],
         LINE_30303, "apt", False, {"install": True, "remove_first": False}),
        ([{"version": "1:6.16.13.30300300-2327507.24.04"}], FIRMWARE_30303, LINE_30303, "apt", False,
         {"install": False, "remove_first": False}),
        # A newer driver stays, unless a rollback moves back to the older line (removing the newer one first).
        ([{"version": "1:6.16.13.30300300-2327507.24.04"}], FIRMWARE_30303, LINE_641, "apt", False,
         {"install": False, "remove_first": False}),
        ([{"version": "1:6.16.13.30300300-2327507.24.04"}], FIRMWARE_30303, LINE_641, "apt", True,
         {"install": True, "remove_first": True}),
        ([{"version": "1:6.12.12.60401-2164967.22.04"}], FIRMWARE_641, LINE_641, "apt", True,
         {"install": False, "remove_first": False}),
    ],
)
def test_the_driver_moves_and_the_old_one_goes_first_where_the_manager_cannot_move_it(
    installed, firmware, driver, manager, downgrade, move
):
    assert dkms_move(installed, firmware, driver, manager, downgrade=downgrade) == move


def test_a_repo_dir_or_a_line_name_that_would_break_a_repository_file_is_refused():
    # repo_dir is part of the amdgpu repository's URL, the name of dnf's and zypper's description.
    drivers = copy.deepcopy(DRIVERS)
    drivers["30.30.3"]["repo_dir"] = "30.30.3\n"
    assert "amdgpu driver line 30.30.3: repo_dir '30.30.3\\n' is not a directory name like 30.10.2" in (
        driver_table_problems(drivers, MATRIX))
    drivers["30.99\nbaseurl=http://elsewhere"] = dict(DRIVERS["30.30.3"])
    assert ("amdgpu driver line '30.99\\nbaseurl=http://elsewhere': the name must be a driver line number like 30.30.3"
            in driver_table_problems(drivers, MATRIX))
