"""udev_uaccess and device_acl items: the masking copy matches the host's distribution file; no GPU node has an ACL."""

import os

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.udev import remove_acl
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
