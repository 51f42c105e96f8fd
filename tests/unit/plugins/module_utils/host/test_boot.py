"""amdgpu disabled for the next boot: modprobe.d files and the boot loader's kernel command line.

The inputs are configuration files as an administrator writes them (no tool
output), plus the real command line of the RX 7900 XTX capture's kernel log.
"""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import boot
from fleet_testing import amdgpu_runtime as runtime

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
DMESG = "rx7900xtx-1gpu_unknown_dmesg-grep-amd_dkms-amdgpu-6.10.5-loaded-after-mok-enroll.txt"


def effects(verdict):
    return [(f["file"], f["line_no"], f["effect"]) for f in verdict["findings"]]


def test_a_blacklist_file_is_pending_with_its_file_and_line():
    files = {"/etc/modprobe.d/mi210-test.conf": "# keep the GPU off\n\nblacklist amdgpu\n"}
    verdict = boot.amdgpu_disabled_next_boot(files, {})
    assert verdict["state"] == "pending"
    assert effects(verdict) == [("/etc/modprobe.d/mi210-test.conf", 3, "disables")]
    assert verdict["reason"] == (
        "amdgpu is disabled for the next boot: /etc/modprobe.d/mi210-test.conf:3: "
        "blacklist amdgpu stops its load by alias at boot"
    )


@pytest.mark.parametrize("command", ["/bin/false", "/bin/true", "/usr/bin/true"])
def test_an_install_command_that_never_loads_it_is_pending(command):
    verdict = boot.amdgpu_disabled_next_boot({"/etc/modprobe.d/off.conf": "install amdgpu %s\n" % command}, {})
    assert verdict["state"] == "pending"
    assert verdict["findings"][0]["reason"] == "install amdgpu %s runs instead of loading it" % command


def test_an_install_command_that_runs_modprobe_still_loads_it():
    text = "install amdgpu /sbin/modprobe --ignore-install amdgpu $CMDLINE_OPTS && /usr/bin/logger loaded\n"
    verdict = boot.amdgpu_disabled_next_boot({"/etc/modprobe.d/log.conf": text}, {})
    assert verdict["state"] == "pass"
    assert effects(verdict) == [("/etc/modprobe.d/log.conf", 1, "none")]


def test_another_install_command_may_disable_it():
    verdict = boot.amdgpu_disabled_next_boot({"/etc/modprobe.d/x.conf": "install amdgpu /usr/local/sbin/gate\n"}, {})
    assert verdict["state"] == "unknown"


def test_only_conf_files_count_and_etc_hides_lib():
    files = {
        "/etc/modprobe.d/blacklist.conf.disabled": "blacklist amdgpu\n",
        "/etc/modprobe.d/gpu.conf": "options amdgpu ppfeaturemask=0xffffffff\n",
        "/lib/modprobe.d/gpu.conf": "blacklist amdgpu\n",  # hidden by /etc/modprobe.d/gpu.conf
        "/usr/lib/modprobe.d/other.conf": "blacklist radeon\n",
    }
    assert boot.effective_modprobe_files(files) == ["/etc/modprobe.d/gpu.conf", "/usr/lib/modprobe.d/other.conf"]
    assert boot.amdgpu_disabled_next_boot(files, {})["state"] == "pass"


def test_continuation_lines_and_dashes_in_names():
    files = {"/etc/modprobe.d/a.conf": "# blacklist amdgpu\nblacklist \\\n  amdgpu\n"}
    verdict = boot.amdgpu_disabled_next_boot(files, {})
    assert effects(verdict) == [("/etc/modprobe.d/a.conf", 2, "disables")]


def test_modprobe_blacklist_in_etc_default_grub_is_pending():
    grub = (
        'GRUB_DEFAULT=0\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX="modprobe.blacklist=nouveau,amdgpu"\n'
    )
    verdict = boot.amdgpu_disabled_next_boot({}, {"/etc/default/grub": grub})
    assert verdict["state"] == "pending"
    assert effects(verdict) == [("/etc/default/grub", 3, "disables")]


@pytest.mark.parametrize(
    ("path", "text", "line_no"),
    [
        (
            "/boot/loader/entries/abc-6.8.0.conf",
            "title Linux\nlinux /vmlinuz\noptions root=/dev/sda1 module_blacklist=amdgpu\n",
            3,
        ),
        ("/etc/kernel/cmdline", "root=/dev/sda1 ro initcall_blacklist=amdgpu_init\n", 1),
        ("/etc/default/grub.d/99-gpu.cfg", 'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX modprobe.blacklist=amdgpu"\n', 1),
    ],
)
def test_each_boot_loader_file_kind(path, text, line_no):
    verdict = boot.amdgpu_disabled_next_boot({}, {path: text})
    assert verdict["state"] == "pending"
    assert effects(verdict) == [(path, line_no, "disables")]


def test_grub_cfg_reads_the_default_kernel_s_normal_entry_not_its_recovery_entry():
    cfg = (
        "menuentry 'Ubuntu' {\n\tlinux\t/boot/vmlinuz-6.8.0-51-generic root=UUID=1 ro quiet splash\n}\n"
        "menuentry 'Ubuntu (recovery mode)' {\n"
        "\tlinux\t/boot/vmlinuz-6.8.0-51-generic root=UUID=1 ro recovery nomodeset dis_ucode_ldr\n}\n"
    )
    assert boot.boot_cmdlines("/boot/grub/grub.cfg", cfg, "6.8.0-51-generic") == [(2, "root=UUID=1 ro quiet splash")]
    assert boot.amdgpu_disabled_next_boot({}, {"/boot/grub/grub.cfg": cfg}, "6.8.0-51-generic")["state"] == "pass"


def test_nomodeset_may_disable_and_modeset_0_does_nothing():
    assert [f["effect"] for f in boot.cmdline_findings("ro nomodeset")] == ["may-disable"]
    assert "amdgpu.modeset=1 overrides" in boot.cmdline_findings("nomodeset amdgpu.modeset=1")[0]["reason"]
    assert [f["effect"] for f in boot.cmdline_findings("ro amdgpu.modeset=0")] == ["none"]
    assert boot.amdgpu_disabled_next_boot({}, {"/etc/kernel/cmdline": "amdgpu.modeset=0"})["state"] == "pass"


def test_parameters_after_double_dash_go_to_init():
    assert boot.cmdline_findings("ro quiet -- modprobe.blacklist=amdgpu") == []


def test_the_real_command_line_of_a_kernel_log_disables_nothing():
    cmdline = runtime.parse_dmesg_amdgpu((CAPTURES / DMESG).read_text(encoding="utf-8"))["cmdline"]
    assert cmdline.startswith("BOOT_IMAGE=/vmlinuz-6.1.0-30-amd64 ")
    assert boot.cmdline_findings(cmdline, "/proc/cmdline") == []


@pytest.mark.parametrize("text", ["", None, "\x00\xff\n", 'GRUB_CMDLINE_LINUX="unterminated amdgpu', "blacklist"])
def test_malformed_files_give_a_verdict_not_a_traceback(text):
    verdict = boot.amdgpu_disabled_next_boot(
        {"/etc/modprobe.d/x.conf": text}, {"/etc/default/grub": text, "/etc/kernel/cmdline": text}
    )
    assert verdict["state"] == "pass"
