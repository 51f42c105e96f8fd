"""The take-back filter: dpkg-query's lines in, the packages to remove out; bad input is a filter error."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.rocm_fleet.core.plugins.filter.take_back import FilterModule
from fleet_testing.dpkg_root import build_deb, dpkg, dpkg_query, needs_dpkg, new_root

take_back = FilterModule().filters()["rocm_packages_to_take_back"]


@needs_dpkg
def test_it_reads_the_lines_and_the_installed_packages_as_package_facts_gives_them(tmp_path):
    root = new_root(tmp_path)
    dpkg(root, "-i", str(build_deb(tmp_path, "rocm10.1", "1")))
    dpkg(root, "--unpack", str(build_deb(tmp_path, "amdrocm-llvm10.1", "1")))
    lines = dpkg_query(root, "-W", "-f", "${db:Status-Abbrev} ${Package}\n").stdout.splitlines()
    assert take_back(lines, ["rocm10.1"], {}) == ["amdrocm-llvm10.1", "rocm10.1"]
    assert take_back(lines, ["rocm10.1"], {"rocm10.1": [{"version": "1"}]}) == ["amdrocm-llvm10.1"]


def test_a_line_that_is_not_dpkg_querys_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="rocm_packages_to_take_back: not a dpkg-query status line"):
        take_back(["garbage"])
