"""Which amdgpu runs: lsmod, lspci -k, modinfo and dmesg captures, each held to its MANIFEST row."""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import secure_boot
from fleet_testing import amdgpu_runtime as runtime

CAPTURES = Path(__file__).resolve().parents[2] / "fixtures" / "captures"
LSMOD = "rx7900xtx-1gpu_unknown_lsmod-grep-amd_distro-amdgpu-loaded.txt"
MODPROBE = "rx7900xtx-1gpu_unknown_modprobe-amdgpu_key-rejected-secure-boot.txt"
LSPCI_K = "mi300x-8gpu_rocm6.3.3_lspci-k-grep-amd_modules-listed-but-no-kernel-driver-in-use.txt"
LSPCI_VVV = (
    "r9-390-1gpu_rocm2.0_lspci-vvv-excerpt-gpu-stanzas_nonroot-capabilities-access-denied_radeon-driver-bound.txt"
)
MODINFO_DKMS = "mi210-8gpu_rocm7.2.0_modinfo-amdgpu-grep-version_dkms-6.16.13.txt"
MODINFO_IN_TREE = "r9700-1gpu_unknown_modinfo-amdgpu-grep-version_in-tree-kernel-no-version-field.txt"
DMESG_MOK = "rx7900xtx-1gpu_unknown_dmesg-grep-amd_dkms-amdgpu-6.10.5-loaded-after-mok-enroll.txt"
DMESG_R9700 = "r9700-1gpu_rocm6.4.3_dmesg-T-grep-amdgpu_dkms-6.12.12_blank-line-between-lines_tlb-fence-traces.txt"
MI300X_SLOTS = ["1b:00.0", "3d:00.0", "4e:00.0", "5f:00.0", "9d:00.0", "bd:00.0", "cd:00.0", "dd:00.0"]


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def test_lsmod_amdgpu_loaded_is_the_in_tree_module_after_a_refused_dkms_load():
    modules = runtime.parse_lsmod(capture(LSMOD))
    assert modules["amdgpu"] == {"size": 9617408, "used": 18, "users": []}
    assert modules["drm"]["users"] == [
        "gpu_sched",
        "drm_kms_helper",
        "drm_display_helper",
        "drm_buddy",
        "amdgpu",
        "drm_ttm_helper",
        "ttm",
    ]
    refused = secure_boot.parse_load_error(capture(MODPROBE))["refused"]
    verdict = runtime.running_driver(modules, dkms_refused=refused)
    assert (verdict["loaded"], verdict["source"], verdict["version"]) == (True, "in-tree", None)


def test_lsmod_without_amdgpu_is_not_loaded():
    modules = runtime.parse_lsmod(capture(LSMOD))
    del modules["amdgpu"]
    assert runtime.running_driver(modules)["loaded"] is False


def test_lspci_k_modules_listed_but_no_driver_in_use_means_not_initialised():
    devices = runtime.parse_lspci_k(capture(LSPCI_K))
    assert len(devices) == 24
    assert sum(d["class"] == "PCI bridge" for d in devices) == 16
    gpus = runtime.gpu_bindings(devices)
    assert [g["slot"] for g in gpus] == MI300X_SLOTS
    assert {g["description"] for g in gpus} == {
        "Advanced Micro Devices, Inc. [AMD/ATI] Aqua Vanjaram [Instinct MI300X]"
    }
    assert {(g["state"], g["driver"], tuple(g["modules"])) for g in gpus} == {("not-bound", None, ("amdgpu",))}
    assert gpus[0]["reason"] == "1b:00.0 has no kernel driver in use (modules: amdgpu): the GPU is not initialised"


def test_lspci_vvv_radeon_bound_while_amdgpu_is_only_listed():
    gpus = runtime.gpu_bindings(runtime.parse_lspci_k(capture(LSPCI_VVV)))
    assert [(g["slot"], g["state"], g["driver"], g["modules"]) for g in gpus] == [
        ("01:00.0", "other-driver", "radeon", ["radeon", "amdgpu"])
    ]  # 01:00.1 is the HDMI audio function: no GPU


def test_modinfo_version_field_is_the_dkms_driver():
    fields = runtime.parse_modinfo(capture(MODINFO_DKMS))
    assert runtime.modinfo_driver(fields) == {"kind": "dkms", "version": "6.16.13", "kernel": None}


def test_modinfo_without_version_field_is_the_in_tree_driver_and_parm_is_no_version():
    fields = runtime.parse_modinfo(capture(MODINFO_IN_TREE))
    assert "version" not in fields
    assert fields["parm"][0].startswith("hws_gws_support:")
    assert runtime.modinfo_driver(fields) == {"kind": "in-tree", "version": None, "kernel": "6.17.8-061708-generic"}


def test_dmesg_dkms_6_10_5_after_mok_enrolment():
    log = runtime.parse_dmesg_amdgpu(capture(DMESG_MOK))
    assert (log["source"], log["version"], log["out_of_tree"]) == ("dkms", "6.10.5", True)
    assert log["kernel"] == "6.1.0-30-amd64"
    assert log["initialized"] == [{"kms": "3.59.0", "bdf": "0000:09:00.0", "minor": 0}]
    assert log["signature"] is None  # loaded: no refusal, no unsigned taint
    verdict = runtime.running_driver(runtime.parse_lsmod(capture(LSMOD)), dmesg=log)
    assert (verdict["source"], verdict["version"]) == ("dkms", "6.10.5")


def test_dmesg_t_with_blank_lines_between_every_line():
    log = runtime.parse_dmesg_amdgpu(capture(DMESG_R9700))
    assert (log["source"], log["version"], log["out_of_tree"]) == ("dkms", "6.12.12", False)
    assert log["initialized"] == [{"kms": "3.63.0", "bdf": "0000:03:00.0", "minor": 1}]


def test_sysfs_version_is_the_strongest_evidence():
    verdict = runtime.running_driver(runtime.parse_lsmod(capture(LSMOD)), sysfs_version="6.16.13", dkms_refused=True)
    assert (verdict["source"], verdict["version"]) == ("dkms", "6.16.13")


def test_loaded_without_evidence_is_unknown():
    verdict = runtime.running_driver(runtime.parse_lsmod(capture(LSMOD)))
    assert (verdict["loaded"], verdict["source"]) == (True, "unknown")


@pytest.mark.parametrize("text", ["", None, "\x00\xff garbage\n", "Module Size Used by\n", "amdgpu 96174"])
def test_malformed_input_never_raises(text):
    assert runtime.parse_lsmod(text) == {}
    assert runtime.gpu_bindings(runtime.parse_lspci_k(text)) == []
    assert runtime.modinfo_driver(runtime.parse_modinfo(text))["kind"] == "unknown"
    assert runtime.parse_dmesg_amdgpu(text)["source"] == "unknown"


def test_truncated_lspci_keeps_the_devices_before_the_cut():
    text = capture(LSPCI_K)
    devices = runtime.parse_lspci_k(text[: text.index("3b:00.0")] + "3b:00")
    assert [g["slot"] for g in runtime.gpu_bindings(devices)] == ["1b:00.0"]
