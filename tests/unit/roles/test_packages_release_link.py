"""The default release's links: objects of the packages role, which its task applies and compliance checks.

update-alternatives owns /etc/alternatives/<name>; the links that reach it (/opt/rocm on the legacy stream,
/opt/rocm/core, /opt/rocm/bin ... on the ROCm Core SDK) are the role's link objects (ROCM-PKG-001), made from the
same stream choices (__packages_plan.defaults) as the alternatives task's loop.
"""

from __future__ import annotations

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import compliance_items, normalize
from fleet_testing.roles import find_task, load_yaml, render

PACKAGES_VARS = load_yaml("packages/vars/main.yml")
LINK = next(obj for obj in PACKAGES_VARS["__packages_managed"] if obj["kind"] == "link")
ALTERNATIVES = find_task("packages/tasks/versions.yml",
                         "Make the default release the host's (the stream's update-alternatives choices, /opt/rocm "
                         "on legacy)")
APPLY = find_task("packages/tasks/versions.yml", "Point the default release's links at their alternatives")
DEBIAN_13 = {"distribution": "Debian", "distribution_version": "13", "distribution_release": "trixie"}


def variables(release="6.3.3", source="mirror", wanted=True):
    return {**load_yaml("packages/defaults/main.yml"), **PACKAGES_VARS, **load_yaml("packages/vars/Debian.yml"),
            "packages_source": source, "packages_rocm_versions": [release], "packages_rocm_default_version": release,
            "__packages_rocm_wanted": wanted, "ansible_facts": DEBIAN_13, "preflight_decision": {}}


def links(release="6.3.3", source="mirror", wanted=True):
    return normalize([render(LINK, **variables(release, source, wanted))], "packages")


def test_the_legacy_link_points_opt_rocm_at_the_alternative_and_names_the_release():
    [obj] = links()
    assert (obj["label"], obj["path"], obj["target"]) == ("packages: /opt/rocm", "/opt/rocm", "/etc/alternatives/rocm")
    [item] = compliance_items([obj])
    assert (item["id"], item["kind"]) == ("ROCM-PKG-001", "link")
    assert "default release ROCm 6.3.3" in item["expect"]["purpose"] and "site.yml" in item["expect"]["purpose"]


def test_a_core_sdk_release_manages_each_link_of_its_alternatives():
    found = {obj["path"]: obj["target"] for obj in links("10.1.0")}
    assert found["/opt/rocm/core"] == "/etc/alternatives/core"
    assert found["/opt/rocm/core-10"] == "/etc/alternatives/core-10"
    assert found["/opt/rocm/bin"] == "/etc/alternatives/rocm-bin"
    assert "/opt/rocm" not in found  # a directory on the Core SDK: its content is AMD's


def test_the_alternatives_task_selects_the_release_behind_the_same_links():
    items = render(ALTERNATIVES["loop"], **variables())
    assert [render(ALTERNATIVES["community.general.alternatives"], item=item) for item in items] == [
        {"name": "rocm", "link": "/opt/rocm", "path": "/opt/rocm-6.3.3", "state": "selected"}]
    paths = [item["link"] for item in render(ALTERNATIVES["loop"], **variables("10.1.0"))]
    assert paths == [obj["path"] for obj in links("10.1.0")]  # one list of choices, not a copy


@pytest.mark.parametrize(("source", "wanted", "kept"), [("mirror", True, 1), ("distro", True, 0), ("amd", False, 0)])
def test_the_link_is_managed_where_the_role_installs_amds_releases(source, wanted, kept):
    assert len(links(source=source, wanted=wanted)) == kept
    assert APPLY["vars"]["common_managed"] == "{{ __packages_objects | selectattr('kind', 'eq', 'link') | list }}"
