"""managed_state: a role's objects, expanded, completed and labelled; the items drift checks them with."""

from __future__ import annotations

import pytest
from ansible_collections.rocm_fleet.core.plugins.plugin_utils.roles.managed_state import (
    APPLIED_KINDS,
    KINDS,
    ManagedStateError,
    compliance_items,
    converge_items,
    normalize,
)


def test_files_get_the_defaults_the_role_and_a_label_naming_the_role():
    [obj] = normalize([{"kind": "file", "id": "ROCM-ENV-001", "path": "/etc/profile.d/rocm.sh", "template": "x.j2"}],
                      "environment")
    assert obj == {"kind": "file", "id": "ROCM-ENV-001", "path": "/etc/profile.d/rocm.sh", "template": "x.j2",
                   "owner": "root", "group": "root", "mode": "0644", "state": "present",
                   "role": "rocm_fleet.core.environment", "label": "environment: /etc/profile.d/rocm.sh"}


def test_list_valued_names_expand_to_one_object_each_and_false_when_drops_an_object():
    objects = normalize([
        {"kind": "group", "id": "A", "name": ["render", "video"]},
        {"kind": "member", "id": "B", "users": ["alice", "bob"], "groups": ["render", "video"]},
        {"kind": "sysctl", "id": "C", "file_id": "D", "values": {"vm.a": 1, "kernel.b": "0"}, "file": "/f"},
        {"kind": "user", "id": "E", "name": []},
        {"kind": "line", "id": "F", "path": "/etc/adduser.conf", "key": "K", "value": "1", "when": False},
    ], "r")
    assert [obj["label"] for obj in objects] == [
        "r: group render", "r: group video", "r: alice in render, video", "r: bob in render, video",
        "r: kernel.b=0", "r: vm.a=1"]
    assert objects[-1]["value"] == "1" and objects[-1]["apply"] is True


@pytest.mark.parametrize("objects, message", [
    ({"kind": "file"}, "must be a list"),
    ([{"kind": "nonsense"}], "an object needs a kind"),
    ([{"kind": "file", "id": "X", "path": ""}], "missing path"),
    ([{"kind": "sysctl", "id": "X", "name": "vm.a", "value": "", "file": "/s"}], "missing value"),
    ([{"kind": "line", "id": "X", "path": "/a", "key": "k"}], "missing value"),
    ([{"kind": "file", "id": "X", "path": "/a"}], "needs a template or a content"),
    ([{"kind": "file", "id": "X", "path": "/a", "content": ""},
      {"kind": "file", "id": "Y", "path": "/a", "content": ""}], "share the label"),
])
def test_bad_objects_name_the_role_and_what_is_wrong(objects, message):
    with pytest.raises(ManagedStateError, match=message) as error:
        normalize(objects, "kernel")
    assert "kernel" in str(error.value)


def test_a_line_may_set_its_key_to_nothing_and_is_checked_so():
    """dnf.conf's excludepkgs= under packages_kernel_update_policy free: nothing excluded, and the line says so."""
    [obj] = normalize([{"kind": "line", "id": "ROCM-KERN-004", "path": "/etc/dnf/dnf.conf", "key": "excludepkgs",
                        "value": ""}], "packages")
    [line] = compliance_items([obj])
    assert line["expect"]["lines"] == ["excludepkgs="]


def test_items_carry_the_object_label_and_what_repairs_what_no_task_does():
    objects = normalize([
        {"kind": "sysctl", "id": "ROCM-SYSCTL-001", "file_id": "ROCM-SYSCTL-002", "values": {"vm.x": 1}, "file": "/s"},
        {"kind": "kernel_cmdline", "id": "ROCM-BOOT-002", "params": ["iommu=pt"], "grub_file": "",
         "repair": "a reboot"},
        {"kind": "file", "id": "ROCM-KMOD-001", "path": "/m", "state": "absent"},
        {"kind": "member", "id": "ROCM-ACCESS-002", "user": "alice", "groups": ["render", "video"]},
    ], "kernel")
    items = compliance_items(objects)
    assert [(item["id"], item["kind"], item["label"]) for item in items] == [
        ("ROCM-SYSCTL-001", "sysctl", "kernel: vm.x=1"),
        ("ROCM-SYSCTL-002", "file_lines", "kernel: vm.x=1"),
        ("ROCM-BOOT-002", "kernel_cmdline", None),
        ("ROCM-KMOD-001", "file", "kernel: /m"),
        ("ROCM-ACCESS-002", "group_members", "kernel: alice in render, video"),
        ("ROCM-ACCESS-002", "group_members", "kernel: alice in render, video"),
    ]
    assert items[1]["expect"] == {"path": "/s", "lines": ["vm.x=1"]}
    assert items[2]["expect"] == {"params": ["iommu=pt"]} and items[2]["repair"] == "a reboot"
    assert items[3]["expect"] == {"path": "/m", "state": "absent"}
    assert [item["expect"]["group"] for item in items[4:]] == ["render", "video"]


def test_a_template_file_item_names_its_template_for_the_caller_to_render():
    [obj] = normalize([{"kind": "file", "id": "X", "path": "/a", "template": "a.j2", "mode": "0600"}], "access")
    [item] = compliance_items([obj])
    assert item["expect"] == {"path": "/a", "owner": "root", "group": "root", "mode": "0600", "template": "a.j2"}


def test_a_package_object_per_release_and_a_file_per_name_in_a_directory():
    objects = normalize([
        {"kind": "package", "id": "P", "releases": {"6.3.3": ["a6.3.3"], "6.4.1": ["a6.4.1", "b6.4.1"]}},
        {"kind": "file", "id": "M", "directory": "/etc/modules/rocm/", "name": ["6.3.3", "6.4.1"], "template": "m.j2"},
    ], "r")
    assert [(obj["label"], obj.get("names"), obj.get("path")) for obj in objects] == [
        ("r: ROCm 6.3.3", ["a6.3.3"], None), ("r: ROCm 6.4.1", ["a6.4.1", "b6.4.1"], None),
        ("r: /etc/modules/rocm/6.3.3", None, "/etc/modules/rocm/6.3.3"),
        ("r: /etc/modules/rocm/6.4.1", None, "/etc/modules/rocm/6.4.1")]
    assert [obj["name"] for obj in objects[2:]] == ["6.3.3", "6.4.1"] and "directory" not in objects[2]


def test_checked_only_objects_become_their_items_without_a_label():
    objects = normalize([
        {"kind": "job_environment", "id": "ROCM-ENV-005", "scope": "login", "users": ["alice"], "release_dir": "",
         "hsa_overrides": {}, "rocm_path": "/opt/rocm", "repair": "a person"},
        {"kind": "device_access", "id": "ROCM-ACCESS-007", "users": ["alice"], "open": True, "repair": "site.yml"},
        {"kind": "unlisted_members", "id": "ROCM-ACCESS-006", "group": ["render", "video"], "members": ["alice"],
         "repair": "a person"},
    ], "access")
    items = compliance_items(objects)
    assert [(item["id"], item["kind"], item["label"]) for item in items] == [
        ("ROCM-ENV-005", "job_environment", None), ("ROCM-ACCESS-007", "device_access", None),
        ("ROCM-ACCESS-006", "group_unlisted", None), ("ROCM-ACCESS-006", "group_unlisted", None)]
    assert items[0]["expect"] == {"scope": "login", "users": ["alice"], "hsa_overrides": {}, "gfx_targets": [],
                                  "rocm_path": "/opt/rocm"}
    assert items[1]["expect"] == {"users": ["alice"], "open": True}
    assert items[3]["expect"] == {"group": "video", "members": ["alice"], "exclusive": False}


def test_a_link_is_labelled_by_its_path_and_checked_with_its_target_and_purpose():
    objects = normalize([
        {"kind": "link", "id": "ROCM-PKG-001", "path": "/opt/rocm", "target": "/etc/alternatives/rocm",
         "purpose": "the default release", "notify": "h"},
        {"kind": "link", "id": "X", "path": "/opt/old", "state": "absent"},
    ], "packages")
    assert [(obj["label"], obj["state"]) for obj in objects] == [("packages: /opt/rocm", "present"),
                                                                 ("packages: /opt/old", "absent")]
    assert objects[0]["notify"] == "h"
    items = compliance_items(objects)
    assert [(item["id"], item["kind"], item["label"], item["expect"]) for item in items] == [
        ("ROCM-PKG-001", "link", "packages: /opt/rocm",
         {"path": "/opt/rocm", "target": "/etc/alternatives/rocm", "state": "present",
          "purpose": "the default release"}),
        ("X", "link", "packages: /opt/old", {"path": "/opt/old", "state": "absent"})]
    # A purpose rendered empty is left out, as any unset field.
    [item] = compliance_items(normalize([{"kind": "link", "id": "Y", "path": "/a", "target": "/b", "purpose": ""}],
                                        "r"))
    assert item["expect"] == {"path": "/a", "target": "/b", "state": "present"}


@pytest.mark.parametrize("link, message", [
    ({"target": "/b"}, r"__packages_managed\[0\] \(link\): missing path"),
    ({"path": "opt/rocm", "target": "/b"}, "link path must be an absolute path, got 'opt/rocm'"),
    ({"path": "/opt/rocm"}, "link /opt/rocm needs a target"),
    ({"path": "/opt/rocm", "target": ""}, "link /opt/rocm needs a target"),
    ({"path": "/opt/rocm", "target": "/b", "state": "link"}, "link /opt/rocm: state must be one of present, absent"),
    ({"path": "/opt/rocm", "target": "/b", "state": "absent"}, "a target makes no sense with state absent"),
])
def test_a_bad_link_names_the_role_the_object_and_what_is_wrong(link, message):
    with pytest.raises(ManagedStateError, match=message) as error:
        normalize([dict(link, kind="link", id="ROCM-PKG-001")], "packages")
    assert str(error.value).startswith("role packages, __packages_managed[0]")


def test_converge_items_prove_what_the_apply_task_sets_and_only_for_applied_kinds():
    line, libraries = normalize(
        [{"kind": "line", "id": "ROCM-ENV-002", "path": "/etc/environment", "key": "ROCM_PATH", "value": "/opt/rocm"},
         {"kind": "runtime_libraries", "id": "ROCM-ENV-008"}], "environment")
    items = converge_items(line)
    # lineinfile sets the file's owner, group and mode too: a line alone would not prove them.
    assert [(item["kind"], item["expect"]) for item in items] == [
        ("file_lines", {"path": "/etc/environment", "lines": ["ROCM_PATH=/opt/rocm"]}),
        ("file", {"path": "/etc/environment", "owner": "root", "group": "root", "mode": "0644"}),
    ]
    assert converge_items(libraries) is None
    assert set(APPLIED_KINDS) < set(KINDS)


def test_a_block_is_labelled_by_its_marker_and_file_and_checked_between_its_marker_lines():
    marker = "# {mark} rocm-fleet boot parameters (rocm_fleet.core.kernel)"
    present, absent = normalize([
        {"kind": "block", "id": "ROCM-BOOT-001", "path": "/etc/default/grub", "marker": marker,
         "block": 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} iommu=pt"'},
        {"kind": "block", "id": "X", "path": "/etc/other", "marker": marker, "state": "absent"},
    ], "kernel")
    name = "rocm-fleet boot parameters (rocm_fleet.core.kernel)"
    assert present["label"] == f"kernel: the {name} block in /etc/default/grub"
    items = compliance_items([present, absent])
    markers = {"begin": f"# BEGIN {name}", "end": f"# END {name}"}
    assert [(item["kind"], item["expect"]) for item in items] == [
        ("file_block", {"path": "/etc/default/grub", **markers, "state": "present",
                        "lines": ['GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} iommu=pt"']}),
        ("file_block", {"path": "/etc/other", **markers, "lines": [], "state": "absent"})]
    # The kernel role's own task applies it: converge_plan proves it by the check drift runs.
    assert converge_items(present) is None


@pytest.mark.parametrize("block, message", [
    ({"marker": "# rocm-fleet"}, "marker must hold {mark} .BEGIN and END., got '# rocm-fleet'"),
    ({"marker": "# {mark} x"}, "block in /etc/default/grub needs a block"),
    ({"marker": "# {mark} x", "block": "a", "state": "on"}, "state must be present or absent, got 'on'"),
])
def test_a_bad_block_names_the_role_the_object_and_what_is_wrong(block, message):
    with pytest.raises(ManagedStateError, match=message) as error:
        normalize([dict(block, kind="block", id="ROCM-BOOT-001", path="/etc/default/grub")], "kernel")
    assert str(error.value).startswith("role kernel, __kernel_managed[0]")
