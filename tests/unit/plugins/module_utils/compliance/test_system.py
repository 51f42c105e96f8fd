"""Accounts, sysctls, the active kernel command line, modules and device nodes against a temp tree."""

import os
import stat
from pathlib import Path

import pytest
from fleet_testing.compliance_tree import check as check_item
from fleet_testing.compliance_tree import write

ETC_GROUP = "root:x:0:\nvideo:x:44:alice,bob\nrender:x:105:alice\nalice:x:1000:\ncarol:x:1002:\n"
ETC_PASSWD = (
    "root:x:0:0:root:/root:/bin/bash\n"
    "alice:x:1000:1000::/home/alice:/bin/bash\n"
    "bob:x:1001:44::/home/bob:/bin/bash\n"
    "carol:x:1002:105::/home/carol:/bin/bash\n"
)




@pytest.fixture
def root(tmp_path):
    write(tmp_path, "/etc/group", ETC_GROUP)
    write(tmp_path, "/etc/passwd", ETC_PASSWD)
    return tmp_path


def check(root, kind, **expect):
    return check_item(root, kind, item_id="ROCM-TEST-002", **expect)


def test_group_members_counts_primary_group_and_names_the_missing(root):
    assert check(root, "group_members", group="render", members=["alice", "carol"])["status"] == "pass"
    result = check(root, "group_members", group="render", members=["alice", "bob", "dave"])
    assert result["status"] == "fail"
    assert result["message"] == "bob, dave not in group render"
    assert result["action"] == "add"


def test_group_members_extra_users_only_matter_when_exclusive(root):
    assert check(root, "group_members", group="video", members=["alice"])["status"] == "pass"
    result = check(root, "group_members", group="video", members=["alice"], exclusive=True)
    assert result["message"] == "bob in group video but not listed"


def test_group_and_user_exist(root):
    assert check(root, "group_exists", group="render", gid=105)["status"] == "pass"
    assert check(root, "group_exists", group="render", gid=109)["message"] == "group render has gid 105, expected 109"
    assert check(root, "group_exists", group="kfd")["message"] == "group kfd does not exist"
    assert check(root, "user_exists", user="bob")["status"] == "pass"
    assert check(root, "user_exists", user="dave")["status"] == "fail"


def test_sysctl_reads_the_runtime_value_and_normalizes_blanks(root):
    write(root, "/proc/sys/vm/max_map_count", "65530\n")
    write(root, "/proc/sys/net/ipv4/ip_local_port_range", "32768\t60999\n")
    result = check(root, "sysctl", name="vm.max_map_count", value=1048576)
    assert result["status"] == "fail"
    assert result["message"] == "vm.max_map_count is 65530, expected 1048576"
    assert check(root, "sysctl", name="net.ipv4.ip_local_port_range", value="32768   60999")["status"] == "pass"
    unknown = check(root, "sysctl", name="kernel.numa_balancing", value=0)
    assert unknown["status"] == "error"
    assert "/proc/sys/kernel/numa_balancing does not exist" in unknown["message"]


CMDLINE_ITEM = {"params": ["iommu=pt", "amd_iommu=on"], "grub_file": "/etc/default/grub.d/rocm-fleet.cfg"}


def test_kernel_cmdline_active_passes(root):
    write(root, "/proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.1.0 root=UUID=abc ro quiet iommu=pt amd_iommu=on\n")
    assert check(root, "kernel_cmdline", **CMDLINE_ITEM)["status"] == "pass"


def test_kernel_cmdline_in_grub_but_not_active_is_pending_reboot(root):
    write(root, "/proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.1.0 root=UUID=abc ro quiet\n")
    write(
        root,
        CMDLINE_ITEM["grub_file"],
        'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT iommu=pt amd_iommu=on"\n',
    )
    result = check(root, "kernel_cmdline", **CMDLINE_ITEM)
    assert result["status"] == "fail"
    assert (
        result["message"]
        == "pending reboot: iommu=pt amd_iommu=on in /etc/default/grub.d/rocm-fleet.cfg but not active"
    )
    assert result["actual"]["pending"] == ["iommu=pt", "amd_iommu=on"]
    assert result["action"] == "reboot"


def test_kernel_cmdline_neither_active_nor_configured_is_missing(root):
    write(root, "/proc/cmdline", "ro quiet iommu=off\n")
    write(root, CMDLINE_ITEM["grub_file"], 'GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT amd_iommu=on"\n')
    result = check(root, "kernel_cmdline", **CMDLINE_ITEM)
    assert result["message"] == (
        "missing: iommu=pt neither active nor in /etc/default/grub.d/rocm-fleet.cfg; pending reboot: amd_iommu=on"
    )


def test_kernel_cmdline_last_repeated_value_wins(root):
    write(root, "/proc/cmdline", "iommu=pt ro iommu=off\n")
    assert check(root, "kernel_cmdline", params=["iommu=pt"])["message"] == "not active: iommu=pt"


def write_module(root, name, version=None, initstate="live", **parameters):
    base = "/sys/module/%s" % name
    if initstate:
        write(root, base + "/initstate", initstate + "\n")
    if version:
        write(root, base + "/version", version + "\n")
    for key, value in parameters.items():
        write(root, "%s/parameters/%s" % (base, key), value + "\n")


def test_module_loaded_version_and_parameters(root):
    write_module(root, "amdgpu", version="6.12.12", noretry="0", runpm="Y")
    assert (
        check(root, "module_loaded", name="amdgpu", version="6.12.*", parameters={"noretry": 0, "runpm": True})[
            "status"
        ]
        == "pass"
    )
    result = check(root, "module_loaded", name="amdgpu", version="6.10.5", parameters={"noretry": 1})
    assert result["status"] == "fail"
    assert result["message"] == "module amdgpu: version 6.12.12, expected 6.10.5; parameter noretry=0, expected 1"


def test_module_not_loaded_or_coming_up(root):
    assert check(root, "module_loaded", name="amdgpu")["message"] == "module amdgpu is not loaded"
    write_module(root, "amdgpu", initstate="coming")
    assert check(root, "module_loaded", name="amdgpu")["message"] == "module amdgpu is in state coming"
    assert check(root, "module_loaded", name="radeon", loaded=False)["status"] == "pass"


def make_node(root, path, mode, gid, char=True):
    full = root / path.lstrip("/")
    full.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mknod(full, (stat.S_IFCHR if char else stat.S_IFREG) | mode, os.makedev(226, 128) if char else 0)
    except PermissionError:
        pytest.skip("creating device nodes needs root")
    os.chmod(full, mode)
    os.chown(full, 0, gid)


def test_device_nodes_group_and_mode(root):
    make_node(root, "/dev/kfd", 0o666, 105)
    make_node(root, "/dev/dri/renderD128", 0o666, 105)
    make_node(root, "/dev/dri/renderD129", 0o660, 44)
    assert check(root, "device_node", glob="/dev/kfd", group="render", mode="0666")["status"] == "pass"
    result = check(root, "device_node", glob="/dev/dri/renderD*", group="render", mode="0666")
    assert result["status"] == "fail"
    assert (
        result["message"]
        == "/dev/dri/renderD129 mode 0660, expected 0666; /dev/dri/renderD129 group video, expected render"
    )
    assert set(result["actual"]["nodes"]) == {"/dev/dri/renderD128", "/dev/dri/renderD129"}


def test_device_nodes_missing_or_not_char(root):
    assert check(root, "device_node", glob="/dev/dri/renderD*")["message"] == "no device matches /dev/dri/renderD*"
    assert check(root, "device_node", glob="/dev/dri/renderD*", required=False)["status"] == "pass"
    write(root, "/dev/kfd", "")
    assert check(root, "device_node", glob="/dev/kfd")["message"] == "/dev/kfd is not a char device"


@pytest.mark.parametrize(
    ("kind", "expect", "message"),
    [
        ("sysctl", {"name": "vm.swappiness"}, "expect.value: required for kind sysctl"),
        ("sysctl", {"name": "vm.swappiness", "value": True}, "expect.value: must be a string or an integer"),
        ("kernel_cmdline", {"params": []}, "expect.params: must not be empty"),
        ("kernel_cmdline", {"params": ["a"], "grub_contains": ["a"]}, "expect.grub_contains: needs grub_file"),
        (
            "group_members",
            {"group": "render", "members": ["a"], "exclusive": "yes"},
            "expect.exclusive: must be a boolean",
        ),
        ("module_loaded", {"name": "amdgpu", "parameters": {"a": [1]}}, "expect.parameters.a: must be a string"),
        ("device_node", {"glob": "/dev/kfd", "type": "pipe"}, "expect.type: 'pipe' is not one of char, block"),
        ("group_exists", {"group": "render", "gid": "105"}, "expect.gid: must be an integer"),
    ],
)
def test_invalid_expect_is_an_error_naming_the_field(root, kind, expect, message):
    result = check(root, kind, **expect)
    assert result["status"] == "error"
    assert result["message"].startswith("ROCM-TEST-002: ")
    assert message in result["message"]


def test_live_procfs_sysctl_is_readable():
    # procfs refuses multi-megabyte reads (ENOMEM); the evaluator must read it in small chunks.
    with open("/proc/sys/vm/max_map_count") as handle:
        value = handle.read().strip()
    result = check_item(Path("/"), "sysctl", item_id="ROCM-TEST-003", name="vm.max_map_count", value=value)
    assert (result["status"], result["message"]) == ("pass", "vm.max_map_count = %s" % value)


# Boot Loader Spec entries as RHEL 9's kernel-install (grub2's 20-grub.install) writes them.
BLS_ENTRY = (
    "title Rocky Linux ({k}) 9.6 (Blue Onyx)\nversion {k}\nlinux /vmlinuz-{k}\n"
    "initrd /initramfs-{k}.img $tuned_initrd\n"
    "options root=UUID=abc ro crashkernel=1G-4G:192M rhgb quiet{extra}\ngrub_users $grub_users\n"
    "grub_arg --unrestricted\ngrub_class rocky\n"
)


def test_boot_entries_pass_when_every_entry_has_the_parameters(root):
    for kernel in ("5.14.0-570.12.1.el9_6.x86_64", "5.14.0-570.17.1.el9_6.x86_64"):
        entry = BLS_ENTRY.format(k=kernel, extra=" iommu=pt amd_iommu=on")
        write(root, f"/boot/loader/entries/abc-{kernel}.conf", entry)
    result = check(root, "boot_entries", params=["iommu=pt", "amd_iommu=on"])
    assert result["status"] == "pass", result["message"]


def test_boot_entries_name_each_entry_and_what_it_lacks(root):
    write(root, "/boot/loader/entries/abc-5.14.0-570.12.1.el9_6.x86_64.conf",
          BLS_ENTRY.format(k="5.14.0-570.12.1.el9_6.x86_64", extra=" iommu=pt amd_iommu=off"))
    write(root, "/boot/loader/entries/abc-5.14.0-570.17.1.el9_6.x86_64.conf",
          BLS_ENTRY.format(k="5.14.0-570.17.1.el9_6.x86_64", extra=" iommu=pt amd_iommu=on"))
    result = check(root, "boot_entries", params=["iommu=pt", "amd_iommu=on"])
    assert (result["status"], result["action"]) == ("fail", "update")
    assert result["message"] == "/boot/loader/entries: abc-5.14.0-570.12.1.el9_6.x86_64 lacks amd_iommu=on"


def test_boot_entries_without_any_entry_fail(root):
    result = check(root, "boot_entries", params=["iommu=pt"])
    assert result["status"] == "fail" and "no boot entry in /boot/loader/entries" in result["message"]
