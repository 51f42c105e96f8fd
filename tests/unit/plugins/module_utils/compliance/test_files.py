"""file, file_lines, directory, link and modprobe_options items against a temp tree."""

import os

import pytest
from fleet_testing.compliance_tree import check as check_item
from fleet_testing.compliance_tree import write

ETC_GROUP = "root:x:0:\nvideo:x:44:alice\nrender:x:105:\n"
ETC_PASSWD = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n"




@pytest.fixture
def root(tmp_path):
    write(tmp_path, "/etc/group", ETC_GROUP)
    write(tmp_path, "/etc/passwd", ETC_PASSWD)
    return tmp_path


def check(root, kind, **expect):
    return check_item(root, kind, role="rocm_fleet.core.environment", label="environment: /etc/profile.d/rocm.sh",
                      **expect)


def test_file_with_expected_content_and_mode_passes(root):
    path = write(root, "/etc/profile.d/rocm.sh", "export PATH=$PATH:/opt/rocm/bin\n")
    os.chown(path, 0, 105)
    result = check(
        root,
        "file",
        path="/etc/profile.d/rocm.sh",
        content="export PATH=$PATH:/opt/rocm/bin\n",
        mode="0644",
        owner="root",
        group="render",
    )
    assert result["status"] == "pass", result["message"]
    assert (result["role"], result["label"], result["repair"]) == (
        "rocm_fleet.core.environment", "environment: /etc/profile.d/rocm.sh", None
    )


def test_file_content_drift_gives_a_unified_diff(root):
    write(root, "/etc/ld.so.conf.d/rocm.conf", "/opt/rocm/lib\n/opt/rocm/lib64\n")
    result = check(root, "file", path="/etc/ld.so.conf.d/rocm.conf", content="/opt/rocm/lib\n")
    assert result["status"] == "fail"
    assert result["message"] == "/etc/ld.so.conf.d/rocm.conf: content differs"
    assert "-/opt/rocm/lib64\n" in result["diff"]
    assert result["diff"].startswith(
        "--- /etc/ld.so.conf.d/rocm.conf (host)\n+++ /etc/ld.so.conf.d/rocm.conf (expected)"
    )
    assert result["action"] == "update"


def test_file_wrong_mode_and_group_are_both_named(root):
    write(root, "/etc/x.conf", "a\n", mode=0o600)
    result = check(root, "file", path="/etc/x.conf", mode="0644", group="render")
    assert result["status"] == "fail"
    assert "mode 0600, expected 0644" in result["message"]
    assert "group root, expected render" in result["message"]


def test_missing_file_and_unwanted_file(root):
    missing = check(root, "file", path="/etc/none.conf", content="x\n")
    assert (missing["status"], missing["action"]) == ("fail", "create")
    assert "+x" in missing["diff"]
    write(root, "/etc/apt/sources.list.d/rocm.list", "deb x y z\n")
    unwanted = check(root, "file", path="/etc/apt/sources.list.d/rocm.list", state="absent")
    assert (unwanted["status"], unwanted["action"]) == ("fail", "remove")
    assert check(root, "file", path="/etc/none.conf", state="absent")["status"] == "pass"


def test_file_lines_present_and_absent(root):
    write(root, "/etc/adduser.conf", 'ADD_EXTRA_GROUPS=1\nEXTRA_GROUPS="video render"\n#NAME_REGEX=x\n')
    good = check(
        root,
        "file_lines",
        path="/etc/adduser.conf",
        lines=["ADD_EXTRA_GROUPS=1", 'EXTRA_GROUPS="video render"'],
        absent=["ADD_EXTRA_GROUPS=0"],
    )
    assert good["status"] == "pass", good["message"]
    bad = check(
        root, "file_lines", path="/etc/adduser.conf", lines=['EXTRA_GROUPS="video"'], absent=["ADD_EXTRA_GROUPS=1"]
    )
    assert bad["status"] == "fail"
    assert bad["actual"] == {"missing": ['EXTRA_GROUPS="video"'], "unwanted": ["ADD_EXTRA_GROUPS=1"]}
    assert "missing 'EXTRA_GROUPS=\"video\"'" in bad["message"]


def test_directory_and_link(root):
    (root / "opt/rocm-6.4.1").mkdir(parents=True)
    os.symlink("/opt/rocm-6.4.1", root / "opt/rocm")
    assert check(root, "directory", path="/opt/rocm-6.4.1", owner="root")["status"] == "pass"
    assert check(root, "link", path="/opt/rocm", target="/opt/rocm-6.4.1")["status"] == "pass"
    wrong = check(root, "link", path="/opt/rocm", target="/opt/rocm-6.3.0")
    assert wrong["message"] == "/opt/rocm points to /opt/rocm-6.4.1, expected /opt/rocm-6.3.0"
    assert check(root, "directory", path="/opt/rocm")["message"] == "/opt/rocm is a symlink, not a directory"


PURPOSE = "the rocm alternative, which selects the default release ROCm 6.3.3; site.yml sets the link"


def link(root, **expect):
    fields = {"path": "/opt/rocm", "target": "/etc/alternatives/rocm", "purpose": PURPOSE, **expect}
    return check(root, "link", **fields)


def test_a_link_to_anything_but_its_target_fails_naming_what_it_is_for(root):
    (root / "opt/rocm-6.4.1").mkdir(parents=True)
    os.symlink("/opt/rocm-6.4.1", root / "opt/rocm")
    wrong = link(root)
    assert (wrong["status"], wrong["actual"], wrong["action"]) == ("fail", {"target": "/opt/rocm-6.4.1"}, "change")
    assert wrong["message"] == "/opt/rocm points to /opt/rocm-6.4.1, expected /etc/alternatives/rocm: " + PURPOSE
    os.remove(root / "opt/rocm")
    # Its text is compared, not where it resolves: the target need not exist on the checked tree.
    os.symlink("/etc/alternatives/rocm/", root / "opt/rocm")
    assert link(root)["status"] == "pass"
    missing = link(root, purpose=None)
    assert missing["status"] == "pass" and missing["message"] == "/opt/rocm -> /etc/alternatives/rocm/"


def test_a_missing_link_is_created_and_a_directory_in_its_place_is_left_to_a_person(root):
    missing = link(root)
    assert (missing["status"], missing["action"]) == ("fail", "create")
    assert missing["message"] == "/opt/rocm does not exist, expected a link to /etc/alternatives/rocm: " + PURPOSE
    write(root, "/opt/rocm/bin/hipcc", "#!/bin/sh\n")
    directory = link(root)
    assert (directory["status"], directory["actual"], directory["action"]) == ("fail", {"state": "directory"}, "none")
    assert directory["message"] == (
        "/opt/rocm is a directory, not a symlink to /etc/alternatives/rocm: " + PURPOSE
        + "; a directory is not replaced by the link: move it aside first")


def test_an_unwanted_link_fails_and_a_directory_at_its_path_is_not_its_business(root):
    assert link(root, target=None, state="absent")["message"] == "/opt/rocm is not a link"
    (root / "opt/rocm/core-10.0").mkdir(parents=True)
    assert link(root, target=None, state="absent")["status"] == "pass"
    os.rmdir(root / "opt/rocm/core-10.0")
    os.rmdir(root / "opt/rocm")
    os.symlink("/etc/alternatives/rocm", root / "opt/rocm")
    unwanted = link(root, target=None, state="absent", purpose="ROCm 10 keeps a directory there")
    assert (unwanted["status"], unwanted["action"]) == ("fail", "remove")
    assert unwanted["message"] == "/opt/rocm -> /etc/alternatives/rocm is a link and should not be: ROCm 10 keeps" \
        " a directory there"


def test_modprobe_options_later_lines_win(root):
    write(
        root,
        "/etc/modprobe.d/amdgpu.conf",
        "# tuning\noptions amdgpu ppfeaturemask=0xfff7bfff\noptions amdgpu noretry=0\n",
    )
    good = check(
        root,
        "modprobe_options",
        path="/etc/modprobe.d/amdgpu.conf",
        module="amdgpu",
        options={"noretry": 0, "ppfeaturemask": "0xfff7bfff"},
    )
    assert good["status"] == "pass", good["message"]
    bad = check(
        root,
        "modprobe_options",
        path="/etc/modprobe.d/amdgpu.conf",
        module="amdgpu",
        options={"noretry": 1, "gpu_recovery": 1},
    )
    assert bad["status"] == "fail"
    assert (
        bad["message"]
        == "/etc/modprobe.d/amdgpu.conf: options amdgpu: gpu_recovery=unset (expected 1), noretry=0 (expected 1)"
    )


@pytest.mark.parametrize(
    ("kind", "expect", "message"),
    [
        ("file", {}, "ROCM-TEST-001: expect.path: required for kind file"),
        ("file", {"path": "/x", "mode": "rw-r--r--"}, "ROCM-TEST-001: expect.mode: must be an octal string"),
        ("file", {"path": "/x", "state": "absent", "content": "a"}, "ROCM-TEST-001: expect.content: makes no sense"),
        ("file_lines", {"path": "/x"}, "ROCM-TEST-001: expect.lines: give lines and/or absent"),
        ("file_lines", {"path": "/x", "lines": "a"}, "ROCM-TEST-001: expect.lines: must be a list of strings"),
        ("link", {"path": "/x", "dest": "/y"}, "ROCM-TEST-001: expect.dest: unknown for kind link"),
        ("link", {"path": "/x"}, "ROCM-TEST-001: expect.target: required for a link that is present"),
        ("link", {"path": "/x", "target": "/y", "state": "absent"}, "expect.target: makes no sense with state absent"),
        ("link", {"path": "/x", "target": "/y", "state": "link"}, "expect.state: 'link' is not one of present, absent"),
        ("link", {"path": "/x", "target": "/y", "purpose": 1}, "ROCM-TEST-001: expect.purpose: must be a string"),
        ("modprobe_options", {"path": "/x", "module": "amdgpu", "options": {}}, "expect.options: must not be empty"),
    ],
)
def test_invalid_expect_is_an_error_naming_item_and_field(root, kind, expect, message):
    result = check(root, kind, **expect)
    assert result["status"] == "error"
    assert message in result["message"]


def test_unreadable_state_is_an_error_not_a_fail(root):
    (root / "etc/adduser.conf").mkdir(parents=True)
    result = check(root, "file_lines", path="/etc/adduser.conf", lines=["A=1"])
    assert result["status"] == "error"
    assert result["message"].startswith("ROCM-TEST-001: cannot read /etc/adduser.conf")
