"""udev_uaccess and device_acl items: the masking copy matches the host's distribution file; no GPU node has an ACL."""

import os

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.udev import opening_rules, remove_acl
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.udev_uaccess import masked_uaccess_rules
from fleet_testing.compliance_tree import check, write
from fleet_testing.posix_acl import ACL_XATTR, seat_acl
from fleet_testing.udev_rules import DISTRIBUTION

SOURCES = ["/usr/lib/udev/rules.d/70-uaccess.rules", "/lib/udev/rules.d/70-uaccess.rules"]
MASK = "/etc/udev/rules.d/70-uaccess.rules"


def uaccess(root):
    return check(root, "udev_uaccess", "ROCM-ACCESS-008", path=MASK, sources=SOURCES, mode="0644")


def test_the_copy_derived_from_the_hosts_own_file_passes_and_a_distribution_update_is_drift(tmp_path):
    write(tmp_path, SOURCES[1], DISTRIBUTION)
    result = uaccess(tmp_path)
    assert (result["status"], result["action"]) == ("fail", "create")
    write(tmp_path, MASK, masked_uaccess_rules(DISTRIBUTION, SOURCES[1]))
    result = uaccess(tmp_path)
    assert result["status"] == "pass", result["message"]
    assert result["actual"]["source"] == SOURCES[1]
    # The distribution's update adds a rule: the copy no longer matches, with the new line in the diff.
    updated = DISTRIBUTION.replace("# DRI render", 'SUBSYSTEM=="accel", TAG+="uaccess"\n# DRI render')
    write(tmp_path, SOURCES[1], updated)
    result = uaccess(tmp_path)
    assert (result["status"], result["action"]) == ("fail", "update")
    assert '+SUBSYSTEM=="accel", TAG+="uaccess"' in result["diff"]


def test_usr_lib_wins_and_no_distribution_file_is_nothing_to_mask(tmp_path):
    result = uaccess(tmp_path)
    assert result["status"] == "pass" and "nothing to mask" in result["message"]
    write(tmp_path, SOURCES[0], DISTRIBUTION)
    write(tmp_path, SOURCES[1], "# an old copy\n")
    write(tmp_path, MASK, masked_uaccess_rules(DISTRIBUTION, SOURCES[0]))
    assert uaccess(tmp_path)["status"] == "pass"


def test_a_distribution_file_without_the_label_fails_with_what_to_do(tmp_path):
    write(tmp_path, SOURCES[0], "# changed\nTAG+=\"uaccess\"\n")
    result = uaccess(tmp_path)
    assert (result["status"], result["action"]) == ("fail", "none")
    assert 'has no line LABEL="uaccess_end"' in result["message"]


def set_acl_or_skip(path):
    try:
        os.setxattr(path, ACL_XATTR, seat_acl(4242))
    except OSError as exc:
        pytest.skip("this file system keeps no POSIX ACL: %s" % exc)


def test_an_acl_on_a_gpu_node_fails_until_it_is_removed(tmp_path):
    write(tmp_path, "/dev/kfd", "", 0o660)
    render = write(tmp_path, "/dev/dri/renderD128", "", 0o660)
    write(tmp_path, "/sys/class/drm/renderD128/device/vendor", "0x1002\n")
    globs = ["/dev/kfd", "/dev/dri/renderD*"]
    assert check(tmp_path, "device_acl", globs=globs)["status"] == "pass"
    set_acl_or_skip(str(render))
    result = check(tmp_path, "device_acl", globs=globs)
    assert (result["status"], result["action"]) == ("fail", "update")
    assert result["actual"]["with_acl"] == ["/dev/dri/renderD128"]
    assert remove_acl(str(render)) is True
    assert remove_acl(str(render)) is False
    assert check(tmp_path, "device_acl", globs=globs)["status"] == "pass"
    assert os.stat(render).st_mode & 0o777 == 0o660


def test_no_node_is_a_pass(tmp_path):
    result = check(tmp_path, "device_acl", globs=["/dev/kfd"])
    assert result["status"] == "pass" and "no device node matches" in result["message"]


# AMD's alternative to group membership, quoted from "Configure permissions for GPU access" on the ROCm
# 10.0.0 install page (https://rocm.docs.amd.com/en/latest/install/rocm.html), the body of its
# `sudo tee /etc/udev/rules.d/70-amdgpu.rules << EOF` block.
AMD_RULES = (
    'KERNEL=="kfd", GROUP="render", MODE="0666"\n'
    'SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0666"\n'
)
AMD_FILE = "/etc/udev/rules.d/70-amdgpu.rules"
ROLE_FILE = "/etc/udev/rules.d/70-rocm-fleet-gpu.rules"
ROLE_MODES = {"kfd": "0660", "drm": "0660"}
KFD, RENDER = "/dev/kfd", "the render nodes (/dev/dri/renderD*)"


def open_rules(root):
    return check(root, "udev_open_rules", "ROCM-ACCESS-004", keep=["70-rocm-fleet-gpu.rules"])


def test_amds_exact_rules_open_kfd_and_the_render_nodes():
    found = opening_rules(AMD_RULES, ROLE_MODES)
    assert [(rule["line"], rule["mode"], rule["nodes"]) for rule in found] == [
        (1, "0666", [KFD]), (2, "0666", [RENDER])]


@pytest.mark.parametrize("text, nodes", [
    ('KERNEL=="kfd", GROUP="render", MODE="0666"\n', [[KFD]]),
    ('SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0666"\n', [[RENDER]]),
    ('SUBSYSTEM=="kfd", MODE:="0606"\n', [[KFD]]),  # other's write alone is enough to be a hole
    ('SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="0x1002", \\\n  MODE="0666"\n', [[RENDER]]),
    ('KERNEL=="kfd|renderD*", MODE="0666"\n', [[KFD, RENDER]]),
    # The mode the role sets, or less, opens nothing.
    ('KERNEL=="kfd", GROUP="render", MODE="0660"\n'
     'SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP="render", MODE="0660"\n', []),
    # Another vendor's render nodes, the display nodes and another subsystem are not AMD's GPUs.
    ('SUBSYSTEM=="drm", KERNEL=="renderD*", ATTRS{vendor}=="0x10de", MODE="0666"\n', []),
    ('SUBSYSTEM=="drm", KERNEL=="renderD*", DRIVERS=="nvidia", MODE="0666"\n', []),
    ('SUBSYSTEM=="drm", KERNEL=="card*", MODE="0666"\n', []),
    ('SUBSYSTEM=="drm", KERNEL!="renderD*", MODE="0666"\n', []),
    ('KERNEL=="ttyUSB*", MODE="0666"\n', []),
    ('ACTION=="remove", KERNEL=="kfd", MODE="0666"\n', []),
    # Comments, a rule without a MODE, a matchless rule, malformed lines: nothing.
    ('# KERNEL=="kfd", MODE="0666"\n\nKERNEL=="kfd", GROUP="render"\nMODE="0666"\n', []),
    ('KERNEL=="kfd", MODE="rw-rw-rw-"\nKERNEL=="kfd" MODE=0666\nKERNEL=="kfd", MODE="0666\n', []),
])
def test_which_rules_open_the_amd_nodes(text, nodes):
    assert [rule["nodes"] for rule in opening_rules(text, ROLE_MODES)] == nodes


def test_a_site_that_sets_0666_itself_is_not_told_so():
    assert opening_rules(AMD_RULES, {"kfd": "0666", "drm": "0666"}) == []


def test_amds_file_fails_naming_the_file_mode_and_who_removes_it(tmp_path):
    write(tmp_path, ROLE_FILE, 'SUBSYSTEM=="kfd", KERNEL=="kfd", GROUP:="render", MODE:="0660"\n')
    write(tmp_path, "/etc/udev/rules.d/60-other.rules", 'KERNEL=="ttyUSB*", MODE="0666"\n')
    write(tmp_path, "/dev/kfd", "", 0o660)
    assert open_rules(tmp_path)["status"] == "pass"
    write(tmp_path, AMD_FILE, AMD_RULES)
    result = open_rules(tmp_path)
    assert (result["status"], result["action"]) == ("fail", "update")
    message = result["message"]
    assert AMD_FILE in message and 'MODE="0666"' in message and "every user" in message
    assert "/dev/kfd" in message and "render nodes" in message and "site.yml (the access role) removes it" in message
    # The role's := keeps the live node closed: the message says so rather than that it is open now.
    assert "keeps them closed for now" in message and result["actual"]["removable"] == [AMD_FILE]
    os.chmod(str(tmp_path / "dev/kfd"), 0o666)
    result = open_rules(tmp_path)
    assert "every user can open them now: /dev/kfd 0666" in result["message"]


def test_a_file_with_other_rules_too_is_a_persons_to_edit_and_etc_hides_run(tmp_path):
    write(tmp_path, AMD_FILE, 'KERNEL=="ttyUSB*", MODE="0666"\n' + AMD_RULES)
    result = open_rules(tmp_path)
    assert (result["status"], result["action"]) == ("fail", "none")
    assert "a person removes those lines" in result["message"] and "line 2" in result["message"]
    assert result["actual"]["removable"] == []
    write(tmp_path, AMD_FILE, "# emptied by the site\n")
    write(tmp_path, "/run/udev/rules.d/70-amdgpu.rules", AMD_RULES)
    assert open_rules(tmp_path)["status"] == "pass"
    write(tmp_path, "/run/udev/rules.d/71-amdgpu.rules", AMD_RULES)
    assert open_rules(tmp_path)["actual"]["removable"] == ["/run/udev/rules.d/71-amdgpu.rules"]


def test_the_roles_own_file_is_its_own_checks(tmp_path):
    write(tmp_path, ROLE_FILE, AMD_RULES)
    assert open_rules(tmp_path)["status"] == "pass"
