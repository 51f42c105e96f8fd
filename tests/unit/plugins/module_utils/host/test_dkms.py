"""dkms status, dkms install and initramfs output: the shared captures, each held to its MANIFEST row.

Formats the captures do not show (dkms 3.x 'added', weak installs, the WARNING
suffixes) have no real output here, so they are not tested with invented text.
"""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import dkms

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
MI300A = "mi300a-4apu_rocm6.3.3_dkms-status_amdgpu-installed-original_module-exists.txt"
R9_390 = "r9-390-1gpu_rocm2.0_dkms-status_old-comma-format_built-not-installed.txt"
RX580 = "rx580-1gpu_rocm1.9_dkms-status_old-comma-format_two-amdgpu-versions-built-not-installed.txt"
FIRMWARE = "rx7900xtx-1gpu_unknown_dkms-initramfs-warnings_possible-missing-firmware.txt"
INSTALL = "unknown-amdgpu_rocm6.4.0_dkms-install-amdgpu_mok-signing-then-crash-truncated.txt"


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def test_slash_format_installed_with_original_module_and_a_deprecation_line():
    status = dkms.parse_dkms_status(capture(MI300A))
    assert status["error"] is None
    assert status["records"] == [
        {
            "module": "amdgpu",
            "version": "6.10.5-2095006.el9",
            "kernel": "5.14.0-503.19.1.el9_5.x86_64",
            "arch": "x86_64",
            "state": "installed",
            "notes": ["original_module exists"],
        },
        {
            "module": "lustre-client",
            "version": "2.15.6",
            "kernel": "5.14.0-503.19.1.el9_5.x86_64",
            "arch": "x86_64",
            "state": "installed",
            "notes": [],
        },
    ]
    # Line 1 is dkms's warning about lustre's dkms.conf: no module line.
    assert status["other"] == [
        "Deprecated feature: REMAKE_INITRD (/var/lib/dkms/lustre-client/2.15.6/source/dkms.conf)"
    ]
    assert dkms.clean_install(status["records"][0])


def test_old_comma_format_built_not_installed():
    status = dkms.parse_dkms_status(capture(R9_390))
    assert status["error"] is None and status["other"] == []
    [record] = status["records"]
    assert (record["module"], record["version"], record["kernel"], record["arch"], record["state"]) == (
        "amdgpu",
        "2.0-89",
        "4.15.0-43-generic",
        "x86_64",
        "built",
    )
    assert not dkms.clean_install(record)


def test_old_comma_format_two_amdgpu_versions_both_built():
    status = dkms.parse_dkms_status(capture(RX580))
    records = dkms.records_for(status["records"], "amdgpu", "4.15.0-34-generic")
    assert [(r["version"], r["state"]) for r in records] == [("18.30-641594", "built"), ("1.9-211", "built")]
    assert not any(dkms.clean_install(r) for r in records)


def test_possible_missing_firmware_lines_are_warnings():
    warnings = dkms.build_warnings(capture(FIRMWARE))
    assert len(warnings) == 9
    assert {w["kind"] for w in warnings} == {"possible-missing-firmware"}
    assert {w["module"] for w in warnings} == {"amdgpu"}
    assert warnings[0]["firmware"] == "/lib/firmware/amdgpu/ip_discovery.bin"
    assert warnings[-1]["firmware"] == "/lib/firmware/amdgpu/gc_11_0_3_mes.bin"
    # Fed to the status parser by mistake, they are no records and an error, never a traceback.
    status = dkms.parse_dkms_status(capture(FIRMWARE))
    assert status["records"] == [] and "no line of the dkms status output could be read" in status["error"]


def test_dkms_install_with_mok_signing_that_stops_during_the_build():
    install = dkms.parse_dkms_install(capture(INSTALL))
    assert install["signing"] == {
        "command": "/usr/bin/kmodsign",
        "key": "/var/lib/shim-signed/mok/MOK.priv",
        "certificate": "/var/lib/shim-signed/mok/MOK.der",
    }
    assert install["kernels"] == ["6.11.0-25-generic"]
    assert install["finished"] is False and install["failed"] is False
    assert "did not complete" in install["reason"]


@pytest.mark.parametrize("text", ["", "   \n\n", None])
def test_empty_status_is_no_module(text):
    # dkms prints nothing when it has no module; the kernel checks then find none.
    assert dkms.parse_dkms_status(text) == {"records": [], "other": [], "error": None}


@pytest.mark.parametrize(
    "text",
    [
        "amdgpu, 1.9-211, 4.15.0-34-generic: built",  # a kernel without an arch
        "amdgpu/6.10.5, 5.14.0: installed",
        "amdgpu, 1.9-211, 4.15.0-34-generic, x86_64: exploded",  # no dkms state
        "amdgpu, 1.9-211, 4.15.0-34-generic, x86_64 built",  # no colon
    ],
)
def test_malformed_status_lines_are_not_records(text):
    status = dkms.parse_dkms_status(text)
    assert status["records"] == []
    assert status["error"] is not None and "no line of the dkms status output could be read" in status["error"]


def test_garbage_and_binary_noise_give_no_records():
    status = dkms.parse_dkms_status("\x00\xff garbage :: ,,, \n<html>")
    assert status["records"] == [] and status["error"] is not None


def test_truncated_status_keeps_the_lines_before_the_cut():
    text = capture(MI300A)
    status = dkms.parse_dkms_status(text[: text.index("lustre-client/2.15.6, 5.14")] + "lustre-cli")
    assert [r["module"] for r in status["records"]] == ["amdgpu"]
    assert status["other"][-1] == "lustre-cli"


def test_empty_install_output_is_not_finished():
    install = dkms.parse_dkms_install("")
    assert install == {
        "signing": {},
        "kernels": [],
        "finished": False,
        "failed": False,
        "reason": "no dkms install step found in the output",
    }
