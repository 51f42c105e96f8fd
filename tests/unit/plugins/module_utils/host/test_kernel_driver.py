"""Will the next boot have amdgpu? The decision over the shared dkms status captures and the driver table.

The kernel maximum and module version come from roles/preflight/vars/amdgpu_drivers.yml,
as a caller passes them; the records from the real captures through host.dkms.
"""

from pathlib import Path

import pytest
import yaml
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import dkms
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import kernel_driver as decide

ROOT = Path(__file__).resolve().parents[5]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
MI300A = "mi300a-4apu_rocm6.3.3_dkms-status_amdgpu-installed-original_module-exists.txt"
MI300A_KERNEL = "5.14.0-503.19.1.el9_5.x86_64"
R9_390 = "r9-390-1gpu_rocm2.0_dkms-status_old-comma-format_built-not-installed.txt"
RX580 = "rx580-1gpu_rocm1.9_dkms-status_old-comma-format_two-amdgpu-versions-built-not-installed.txt"


def records(name):
    status = dkms.parse_dkms_status((CAPTURES / name).read_text(encoding="utf-8"))
    assert status["error"] is None
    return status["records"]


@pytest.fixture(scope="module")
def drivers():
    data = yaml.safe_load((ROOT / "roles" / "preflight" / "vars" / "amdgpu_drivers.yml").read_text())
    return data["preflight_amdgpu_drivers_builtin"]


def test_installed_for_the_next_and_running_kernel_passes(drivers):
    line = drivers["6.3.3"]  # amdgpu-dkms 6.10.5, as the capture's 6.10.5-2095006.el9
    verdict = decide.next_boot_driver(
        records(MI300A), MI300A_KERNEL, MI300A_KERNEL, line["kernel"]["max"], line["kernel_module"]
    )
    assert verdict["state"] == "pass"
    assert verdict["checks"] == [
        {
            "kernel": MI300A_KERNEL,
            "role": "next, running",
            "state": "pass",
            "notes": [],
            "reason": "amdgpu 6.10.5-2095006.el9 is installed for %s" % MI300A_KERNEL,
        }
    ]


def test_a_new_default_kernel_without_its_module_fails_before_the_reboot(drivers):
    line = drivers["6.3.3"]
    verdict = decide.next_boot_driver(
        records(MI300A), "5.14.0-570.12.1.el9_6.x86_64", MI300A_KERNEL, line["kernel"]["max"], line["kernel_module"]
    )
    assert verdict["state"] == "fail"
    [next_check, running] = verdict["checks"]
    assert (next_check["role"], next_check["state"], running["state"]) == ("next", "fail", "pass")
    assert (
        next_check["reason"]
        == "amdgpu has no module for 5.14.0-570.12.1.el9_6.x86_64 (no DKMS build or install for it)"
    )


def test_a_default_kernel_above_the_release_maximum_cannot_be_rebuilt(drivers):
    line = drivers["6.3.3"]  # kernel max 6.11
    verdict = decide.next_boot_driver(records(MI300A), "6.14.0-24-generic", MI300A_KERNEL, line["kernel"]["max"])
    assert verdict["state"] == "fail"
    assert "6.14.0-24-generic is above 6.11, the newest kernel series it builds for" in verdict["reason"]
    assert "the GPUs would be lost on boot" in verdict["reason"]


def test_built_but_not_installed_fails():
    verdict = decide.next_boot_driver(records(R9_390), "4.15.0-43-generic", "4.15.0-43-generic")
    assert verdict["state"] == "fail"
    assert verdict["checks"][0]["reason"] == "amdgpu for 4.15.0-43-generic is not cleanly installed: 2.0-89 built"


def test_two_amdgpu_stacks_built_neither_installed_fails_and_names_the_conflict():
    verdict = decide.next_boot_driver(records(RX580), "4.15.0-34-generic", "4.15.0-34-generic")
    assert verdict["state"] == "fail"
    assert "18.30-641594 built, 1.9-211 built" in verdict["reason"]
    assert verdict["warnings"] == [
        "2 amdgpu versions for 4.15.0-34-generic (1.9-211, 18.30-641594): conflicting driver stacks"
    ]


def test_another_release_s_module_is_not_the_one_wanted(drivers):
    verdict = decide.next_boot_driver(
        records(MI300A), MI300A_KERNEL, MI300A_KERNEL, expected_version=drivers["6.4.1"]["kernel_module"]
    )
    assert verdict["state"] == "fail"
    assert "amdgpu 6.10.5-2095006.el9 is installed for %s, not 6.12.12" % MI300A_KERNEL in verdict["reason"]


def test_a_non_default_installed_kernel_without_a_module_only_warns():
    verdict = decide.next_boot_driver(
        records(MI300A), MI300A_KERNEL, MI300A_KERNEL, installed_kernels=[MI300A_KERNEL, "5.14.0-427.13.1.el9_4.x86_64"]
    )
    assert verdict["state"] == "pass"
    assert verdict["warnings"] == [
        "installed kernel 5.14.0-427.13.1.el9_4.x86_64 (not the default): "
        "amdgpu has no module for 5.14.0-427.13.1.el9_4.x86_64 (no DKMS build or install for it)"
    ]


def test_an_installed_module_above_the_maximum_passes_with_a_note():
    verdict = decide.next_boot_driver(records(MI300A), MI300A_KERNEL, MI300A_KERNEL, kernel_max="5.4")
    # The module is built and installed, so the next boot has its GPUs: said in the reason, not a warning.
    assert verdict["state"] == "pass"
    assert verdict["warnings"] == []
    assert "(kernel %s is newer than 5.4, the newest series AMD lists for it)" % MI300A_KERNEL in verdict["reason"]


@pytest.mark.parametrize("next_kernel", [None, ""])
def test_an_unknown_default_kernel_is_unknown_never_pass(next_kernel):
    verdict = decide.next_boot_driver(records(MI300A), next_kernel, MI300A_KERNEL)
    assert verdict["state"] == "unknown"
    assert verdict["reason"] == "the boot loader's default kernel is not known"


def test_an_unreadable_dkms_status_is_unknown():
    status = dkms.parse_dkms_status("garbage, with: commas")
    verdict = decide.next_boot_driver(status["records"], MI300A_KERNEL, MI300A_KERNEL, dkms_error=status["error"])
    assert verdict["state"] == "unknown"
    assert verdict["reason"].startswith("dkms status could not be read: no line of the dkms status output")


def test_no_dkms_module_at_all_fails():
    verdict = decide.next_boot_driver(dkms.parse_dkms_status("")["records"], MI300A_KERNEL, MI300A_KERNEL)
    assert verdict["state"] == "fail"


@pytest.mark.parametrize(
    ("kernel", "maximum", "expected"),
    [
        ("6.14.3-061403-generic", "6.14", False),
        ("6.15.0-1-generic", "6.14", True),
        ("6.8.0-51-generic", "6.11", False),
        ("6.8.0-51-generic", None, None),  # the table's null: unknown, not enforced
        ("vmlinuz", "6.14", None),
        ("6.8.0", "not-a-version", None),
    ],
)
def test_above_max(kernel, maximum, expected):
    assert decide.above_max(kernel, maximum) is expected
