"""device_access and group_unlisted items: who can open the GPUs, and who is in their groups unlisted."""

import os
import subprocess

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.access import (
    may_open,
    unlisted_members,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import HostView, run_live
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate, evaluate_item
from fleet_testing.compliance_tree import check as check_item
from fleet_testing.compliance_tree import write

EXECUTABLE = "#!/bin/sh\nexit 99\n"


@pytest.fixture
def root(tmp_path):
    """Stand-ins for /dev/kfd and two render nodes (one not AMD's); the accounts name their real owner and group."""
    kfd = write(tmp_path, "/dev/kfd", "", 0o660)
    write(tmp_path, "/dev/dri/renderD128", "", 0o660)
    write(tmp_path, "/dev/dri/renderD129", "", 0o600)
    write(tmp_path, "/sys/class/drm/renderD128/device/vendor", "0x1002\n")
    write(tmp_path, "/sys/class/drm/renderD129/device/vendor", "0x1a03\n")  # the BMC's ASPEED
    owner, group = os.stat(kfd).st_uid, os.stat(kfd).st_gid
    write(tmp_path, "/etc/passwd", (
        "owner:x:%d:5999::/:/bin/sh\n" % owner
        + "alice:x:5001:5001::/home/alice:/bin/bash\n"
        + "bob:x:5002:5002::/home/bob:/bin/bash\n"
        + "carol:x:5003:%d::/home/carol:/bin/bash\n" % group
    ))
    write(tmp_path, "/etc/group", "render:x:%d:alice,mallory\nvideo:x:44:alice\nalice:x:5001:\nbob:x:5002:\n"
          % group)
    write(tmp_path, "/usr/sbin/runuser", EXECUTABLE, 0o755)
    return tmp_path


def access(root, run=None, **expect):
    return evaluate_item({"id": "ROCM-ACCESS-007", "kind": "device_access", "expect": expect}, 0,
                         HostView(str(root), run=run))


def test_the_mode_bits_decide_as_the_kernel_does():
    assert may_open(5001, {105}, 0, 105, 0o660)
    assert not may_open(5002, {5002}, 0, 105, 0o660)
    assert may_open(5002, {5002}, 0, 105, 0o666)
    # The owner's bits are the owner's, whatever the group's say.
    assert not may_open(5001, {105}, 5001, 105, 0o060)
    assert not may_open(5001, {105}, 0, 105, 0o640)  # read only
    assert may_open(0, set(), 5, 5, 0o000)


def test_members_and_primary_group_users_can_open_others_are_named(root):
    result = access(root, users=["alice", "carol"])
    assert result["status"] == "pass", result["message"]
    assert result["actual"]["nodes"] == ["/dev/kfd", "/dev/dri/renderD128"]  # not the ASPEED node
    result = access(root, users=["alice", "bob"])
    assert result["status"] == "fail"
    assert result["message"] == (
        "bob cannot open /dev/dri/renderD128 (owner:render 0660; bob is in bob); "
        "bob cannot open /dev/kfd (owner:render 0660; bob is in bob)")
    os.chmod(root / "dev/kfd", 0o666)
    os.chmod(root / "dev/dri/renderD128", 0o666)
    assert access(root, users=["bob"])["status"] == "pass"


def test_a_user_denied_for_want_of_a_declared_group_is_the_membership_checks_finding(root):
    # gpasswd --delete bob render: ROCM-ACCESS-002 fails; this check names it and does not fail a second time.
    result = access(root, users=["alice", "bob"], groups=["render", "video"])
    assert result["status"] == "skipped", result["message"]
    assert result["message"] == ("bob cannot open /dev/dri/renderD128: not in render (ROCM-ACCESS-002); "
                                 "bob cannot open /dev/kfd: not in render (ROCM-ACCESS-002)")
    # A group the inventory does not give the users explains nothing: the denial is this check's.
    assert access(root, users=["bob"], groups=["video"])["status"] == "fail"


def test_a_missing_user_and_no_nodes_are_unknown(root):
    assert access(root, users=["dave"])["message"] == "unknown: user dave does not exist"
    result = access(root, users=["alice"], globs=["/dev/nothing*"])
    assert (result["status"], result["message"]) == ("skipped", "unknown: no device node matches /dev/nothing*")


def as_user_runner(root, calls):
    """Run the checker's own test script with a real sh on the tree's nodes (as this process, not as the user)."""

    def run(argv, timeout):
        calls.append(argv)
        script, nodes = argv[argv.index("-c") + 1], argv[argv.index("-c") + 3:]
        done = subprocess.run(["sh", "-c", script, "sh"] + [str(root) + node for node in nodes],
                              capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout.replace(str(root), ""), done.stderr

    return run


def test_the_kernel_is_asked_as_each_user_when_open_is_set(root):
    calls = []
    result = access(root, run=as_user_runner(root, calls), users=["alice"], open=True)
    assert result["status"] == "pass", result["message"]
    assert calls[0][:5] == ["/usr/sbin/runuser", "-u", "alice", "--", "/bin/sh"]
    assert calls[0][-2:] == ["/dev/dri/renderD128", "/dev/kfd"]
    assert result["actual"]["users"]["alice"]["opened"] == {"/dev/dri/renderD128": True, "/dev/kfd": True}


def test_a_user_runuser_cannot_switch_to_is_unknown(root):
    def refuses(argv, timeout):
        return run_live(["sh", "-c", "echo 'runuser: may not be used by non-root users' >&2; exit 1"], timeout)

    result = access(root, run=refuses, users=["alice"], open=True)
    assert result["status"] == "unknown"
    assert result["message"] == "unknown: alice: runuser -u alice exited 1: runuser: may not be used by non-root users"
    # Without a runner on a tree that is not the live system, the bits alone decide what they can.
    assert access(root, users=["alice"], open=True)["status"] == "unknown"
    assert access(root, users=["bob"], open=True)["status"] == "fail"


def test_unlisted_members_are_a_warning_unless_exclusive(root):
    result = check_item(root, "group_unlisted", group="render", members=["alice"])
    assert (result["status"], result["message"]) == (
        "warn", "warning: carol (primary group), mallory in group render but not listed in the inventory")
    assert result["actual"]["unlisted"] == ["carol", "mallory"]
    # Exclusive: the access role takes mallory out (a change site.yml makes); carol's primary group is a person's.
    result = check_item(root, "group_unlisted", group="render", members=["alice"], exclusive=True)
    assert result["status"] == "fail" and result["action"] == "update"
    result = check_item(root, "group_unlisted", group="render", members=["alice", "mallory"], exclusive=True)
    assert result["status"] == "fail" and result["action"] == "none"
    # A listed user missing from the group is not this check's finding (the member object's).
    assert check_item(root, "group_unlisted", group="video", members=["alice", "dave"], exclusive=True)[
        "status"] == "pass"
    assert check_item(root, "group_unlisted", group="video", members=["alice"])["status"] == "pass"
    assert check_item(root, "group_unlisted", group="kfd", members=[])["status"] == "pass"


def test_a_warning_is_counted_apart(root):
    items = [{"id": "ROCM-ACCESS-006", "kind": "group_unlisted", "expect": {"group": "render", "members": ["alice"]}}]
    _results, summary = evaluate(items, str(root))
    assert summary == {"pass": 0, "fail": 0, "error": 0, "skipped": 0, "unknown": 0, "warn": 1, "total": 1}


def test_unlisted_members_decision():
    assert unlisted_members(["b", "a", "c", "a"], ["a"], primary=["c"]) == [("b", "member"), ("c", "primary group")]
