"""The default release's link: one object of the packages role, which its task applies and compliance checks.

update-alternatives owns /etc/alternatives/rocm; the link at /opt/rocm that reaches it is the role's link object
(ROCM-PKG-001), whose path the alternatives task reads from the same variable.
"""

from __future__ import annotations

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import compliance_items, normalize
from fleet_testing.roles import find_task, load_yaml, render

PACKAGES_VARS = load_yaml("packages/vars/main.yml")
LINK = next(obj for obj in PACKAGES_VARS["__packages_managed"] if obj["kind"] == "link")
ALTERNATIVES = find_task("packages/tasks/versions.yml", "Select the default release with update-alternatives")
APPLY = find_task("packages/tasks/versions.yml", "Point the default release's link at the alternative")


def rendered(value, source="mirror", wanted=True):
    names = ("__packages_release_link", "__packages_release_alternative", "__packages_release_alternative_link",
             "__packages_release_dir")
    return render(value, packages_source=source, packages_rocm_default_version="6.3.3", __packages_rocm_wanted=wanted,
                  **{name: PACKAGES_VARS[name] for name in names})


def test_the_link_object_points_opt_rocm_at_the_alternative_and_names_the_release():
    [obj] = normalize([rendered(LINK)], "packages")
    assert (obj["label"], obj["path"], obj["target"]) == ("packages: /opt/rocm", "/opt/rocm", "/etc/alternatives/rocm")
    [item] = compliance_items([obj])
    assert (item["id"], item["kind"]) == ("ROCM-PKG-001", "link")
    assert "default release ROCm 6.3.3" in item["expect"]["purpose"] and "site.yml" in item["expect"]["purpose"]


def test_the_alternatives_task_selects_the_release_behind_the_same_link():
    arguments = rendered(ALTERNATIVES["community.general.alternatives"])
    assert arguments == {"name": "rocm", "link": "/opt/rocm", "path": "/opt/rocm-6.3.3", "state": "selected"}
    assert ALTERNATIVES["community.general.alternatives"]["link"] == LINK["path"]  # one variable, not a copy


@pytest.mark.parametrize(("source", "wanted", "kept"), [("mirror", True, 1), ("distro", True, 0), ("amd", False, 0)])
def test_the_link_is_managed_where_the_role_installs_amds_releases(source, wanted, kept):
    assert len(normalize([rendered(LINK, source, wanted)], "packages")) == kept
    assert APPLY["vars"]["common_managed"] == "{{ __packages_objects | selectattr('kind', 'eq', 'link') | list }}"
