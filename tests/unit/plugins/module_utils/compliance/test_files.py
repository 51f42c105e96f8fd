"""file, file_lines, file_block, directory, link and modprobe_options items against a temp tree."""

import json
import os
import subprocess
import sys
from pathlib import Path

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


BEGIN, END = "# BEGIN rocm-fleet boot parameters", "# END rocm-fleet boot parameters"
BLOCK = ['GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} iommu=pt"']
SLES_GRUB = 'GRUB_DEFAULT=saved\nGRUB_CMDLINE_LINUX_DEFAULT="splash=silent quiet"\n'
BLOCK_TEXT = "%s\n%s\n%s\n" % (BEGIN, BLOCK[0], END)
# /etc/default/grub as a person or an earlier run leaves it: name -> (its text, the block's state).
BLOCK_CASES = {
    "the block at the end": (SLES_GRUB + BLOCK_TEXT, "present"),
    "the block between other settings": (SLES_GRUB + BLOCK_TEXT + "GRUB_TIMEOUT=8\n", "present"),
    "another parameter in the block": (SLES_GRUB + BLOCK_TEXT.replace("iommu=pt", "iommu=off"), "present"),
    "a line added inside the block": (SLES_GRUB + BLOCK_TEXT.replace(END, "GRUB_TIMEOUT=1\n" + END), "present"),
    "no block": (SLES_GRUB, "present"),
    "its begin marker alone": (SLES_GRUB + BEGIN + "\n", "present"),
    "the end marker without a newline": (SLES_GRUB + BLOCK_TEXT.rstrip("\n"), "present"),
    "the markers the wrong way round": (SLES_GRUB + "%s\n%s\n%s\n" % (END, BLOCK[0], BEGIN), "present"),
    "an old block before the right one": (SLES_GRUB + BLOCK_TEXT.replace("iommu=pt", "x") + BLOCK_TEXT, "present"),
    "the block, unwanted": (SLES_GRUB + BLOCK_TEXT, "absent"),
    "its begin marker alone, unwanted": (SLES_GRUB + BEGIN + "\n", "absent"),
    "no block, unwanted": (SLES_GRUB, "absent"),
}


def blockinfile_changes(tmp_path, files):
    """Whether ansible.builtin.blockinfile (this checkout's ansible-core) would change each file, in check mode."""
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": [
        {"ansible.builtin.blockinfile": {"path": "{{ item.path }}", "marker": "# {mark} rocm-fleet boot parameters",
                                         "block": "\n".join(BLOCK), "state": "{{ item.state }}"},
         "loop": [{"path": str(path), "state": state} for path, state in files], "register": "edits"},
        {"ansible.builtin.copy": {"content": "{{ edits.results | map(attribute='changed') | to_json }}",
                                  "dest": str(tmp_path / "changed.json")}, "check_mode": False}]}]
    (tmp_path / "play.json").write_text(json.dumps(play))
    command = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", f"ansible_python_interpreter={sys.executable}", "--check", str(tmp_path / "play.json")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((tmp_path / "changed.json").read_text())


def test_file_block_passes_exactly_where_blockinfile_would_change_nothing(tmp_path):
    files, verdicts = [], {}
    for number, (name, (text, state)) in enumerate(BLOCK_CASES.items()):
        root = tmp_path / str(number)
        write(root, "/etc/default/grub", text)
        files.append((root / "etc/default/grub", state))
        result = check(root, "file_block", path="/etc/default/grub", begin=BEGIN, end=END,
                       lines=BLOCK if state == "present" else [], state=state)
        verdicts[name] = result["status"]
    changes = blockinfile_changes(tmp_path, files)
    # The lab's SLES hosts show the first, and a person's edits the others; blockinfile decides each the same way.
    assert {name: "fail" if changed else "pass" for name, changed in zip(BLOCK_CASES, changes, strict=True)} == verdicts
    assert sorted(name for name, status in verdicts.items() if status == "pass") == [
        "an old block before the right one", "its begin marker alone, unwanted", "no block, unwanted",
        "the block at the end", "the block between other settings"]


def test_file_block_names_the_file_the_block_and_shows_what_differs(root):
    write(root, "/etc/default/grub", SLES_GRUB + BLOCK_TEXT.replace("iommu=pt", "iommu=off"))
    differs = check(root, "file_block", path="/etc/default/grub", begin=BEGIN, end=END, lines=BLOCK)
    assert (differs["status"], differs["action"]) == ("fail", "update")
    assert differs["message"] == "/etc/default/grub: the block %s ... %s differs" % (BEGIN, END)
    assert '-GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} iommu=off"\n' in differs["diff"]
    write(root, "/etc/default/grub", SLES_GRUB)
    missing = check(root, "file_block", path="/etc/default/grub", begin=BEGIN, end=END, lines=BLOCK)
    assert missing["message"] == "/etc/default/grub: the block %s ... %s is missing" % (BEGIN, END)
    assert "+" + BLOCK[0] + "\n" in missing["diff"]
    write(root, "/etc/default/grub", SLES_GRUB + BLOCK_TEXT)
    unwanted = check(root, "file_block", path="/etc/default/grub", begin=BEGIN, end=END, state="absent")
    assert unwanted["message"] == "/etc/default/grub holds the block %s ... %s, which should be gone" % (BEGIN, END)
    # No file: blockinfile (without create, as the kernel role runs it) fails, and so does the check.
    os.unlink(root / "etc/default/grub")
    gone = check(root, "file_block", path="/etc/default/grub", begin=BEGIN, end=END, lines=BLOCK)
    assert (gone["status"], gone["message"], gone["action"]) == ("fail", "/etc/default/grub does not exist", "create")
    assert check(root, "file_block", path="/etc/default/grub", begin=BEGIN, end=END, state="absent")["status"] == "pass"


@pytest.mark.parametrize("fields, message", [
    ({"state": "present"}, "lines: required for a block that is present"),
    ({"state": "absent", "lines": BLOCK}, "lines: makes no sense with state absent"),
])
def test_file_block_needs_lines_exactly_when_present(root, fields, message):
    result = check(root, "file_block", path="/etc/default/grub", begin=BEGIN, end=END, **fields)
    assert result["status"] == "error" and message in result["message"], result["message"]


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
