"""Secure Boot and the DKMS module's signature.

Real captures: the refused modprobe, the dkms install with MOK signing, the
grep-filtered modinfo outputs and the kernel log after MOK enrolment. The
efivars inputs are the variable's bytes in its documented layout (4 attribute
bytes, then the value), not tool output. No real ``mokutil`` capture exists in
the shared set, so mokutil's parsers are tested on malformed input only, and the
trust decision on parsed structures.
"""

from pathlib import Path

import pytest
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import dkms
from ansible_collections.rocm_fleet.core.plugins.module_utils.host import secure_boot as sb
from fleet_testing import amdgpu_runtime as runtime

CAPTURES = Path(__file__).resolve().parents[4] / "fixtures" / "captures"
MODPROBE = "rx7900xtx-1gpu_unknown_modprobe-amdgpu_key-rejected-secure-boot.txt"
INSTALL = "unknown-amdgpu_rocm6.4.0_dkms-install-amdgpu_mok-signing-then-crash-truncated.txt"
MODINFO_DKMS = "mi210-8gpu_rocm7.2.0_modinfo-amdgpu-grep-version_dkms-6.16.13.txt"
DMESG_MOK = "rx7900xtx-1gpu_unknown_dmesg-grep-amd_dkms-amdgpu-6.10.5-loaded-after-mok-enroll.txt"
ATTRIBUTES = b"\x06\x00\x00\x00"  # EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS
ON = sb.efivar_secure_boot(ATTRIBUTES + b"\x01")
OFF = sb.efivar_secure_boot(ATTRIBUTES + b"\x00")
SIGNED = {"signed": True, "signer": "DKMS module signing key", "key": "1a2b", "hashalgo": "sha512", "id_type": "PKCS#7"}


def capture(name):
    return (CAPTURES / name).read_text(encoding="utf-8")


def test_key_rejected_by_service_is_a_secure_boot_refusal():
    error = sb.parse_load_error(capture(MODPROBE))
    assert error["refused"] is True and error["module"] == "amdgpu"
    assert "Key was rejected by service" in error["reason"]


def test_dkms_install_signs_with_a_mok_that_must_be_enrolled_before_it_loads():
    signing = dkms.parse_dkms_install(capture(INSTALL))["signing"]
    assert sb.install_would_load(ON, signing, cert_enrolled=False)["state"] == "fail"
    assert "mokutil --import" in sb.install_would_load(ON, signing, cert_enrolled=False)["reason"]
    assert sb.install_would_load(ON, signing, cert_enrolled=True)["state"] == "pass"
    assert sb.install_would_load(ON, signing, cert_enrolled=None)["state"] == "unknown"
    assert sb.install_would_load(ON, {}, cert_enrolled=None)["state"] == "fail"
    assert sb.install_would_load(OFF, {}, cert_enrolled=None)["state"] == "pass"


def test_a_dkms_module_loaded_after_mok_enrolment_shows_no_refusal():
    assert runtime.parse_dmesg_amdgpu(capture(DMESG_MOK))["signature"] is None


def test_a_grep_filtered_modinfo_says_nothing_of_the_signature():
    signature = sb.module_signature(runtime.parse_modinfo(capture(MODINFO_DKMS)))
    assert signature["signed"] is None
    assert sb.dkms_module_trust(ON, signature, [])["state"] == "unknown"


@pytest.mark.parametrize(
    ("data", "setup_mode", "state", "enforcing"),
    [
        (ATTRIBUTES + b"\x01", None, "enabled", True),
        (ATTRIBUTES + b"\x00", None, "disabled", False),
        (ATTRIBUTES + b"\x01", ATTRIBUTES + b"\x01", "disabled", False),  # Setup Mode enforces nothing
        (ATTRIBUTES + b"\x01", ATTRIBUTES + b"\x00", "enabled", True),
        (None, None, "unsupported", False),  # no variable: BIOS boot
        (ATTRIBUTES + b"\x02", None, "unknown", None),
        (ATTRIBUTES, None, "unknown", None),  # truncated: attributes only
        (b"", None, "unknown", None),
        (b"\x01", None, "unknown", None),  # the value without the attributes
        (ATTRIBUTES + b"\x01\x00\x00", None, "unknown", None),
    ],
)
def test_efivars_secure_boot(data, setup_mode, state, enforcing):
    result = sb.efivar_secure_boot(data, setup_mode)
    assert (result["state"], result["enforcing"]) == (state, enforcing)


@pytest.mark.parametrize("text", ["", None, "\x00\xff\n", "SecureBoot maybe", "Secure"])
def test_mokutil_sb_state_that_is_not_understood_is_unknown(text):
    result = sb.parse_sb_state(text)
    assert (result["state"], result["enforcing"]) == ("unknown", None)
    assert result["reason"].startswith("mokutil --sb-state printed no known state")


@pytest.mark.parametrize("text", ["", None, "garbage\n", "[key 1]"])
def test_mokutil_list_enrolled_that_is_not_understood_has_no_usable_key(text):
    keys = sb.parse_enrolled_keys(text)
    assert all(key["serial"] is None and key["skid"] is None for key in keys)
    assert sb.key_enrolled(SIGNED, keys) is None


def test_trust_decision():
    enrolled = [{"sha1": None, "serial": "1a2b", "skid": None, "issuer": None, "subject": None}]
    assert sb.dkms_module_trust(OFF, {"signed": False}, None)["state"] == "pass"
    assert sb.dkms_module_trust(ON, SIGNED, enrolled)["state"] == "pass"
    other = sb.dkms_module_trust(ON, dict(SIGNED, key="99"), enrolled)
    assert other["state"] == "fail" and "not enrolled" in other["reason"]
    unsigned = sb.dkms_module_trust(ON, dict(SIGNED, signed=False, signer=None, key=None), enrolled)
    assert unsigned["state"] == "fail" and "unsigned" in unsigned["reason"]
    assert sb.dkms_module_trust(ON, SIGNED, None)["state"] == "unknown"
    assert sb.dkms_module_trust(ON, None, enrolled)["state"] == "unknown"
    assert sb.dkms_module_trust(sb.efivar_secure_boot(b""), SIGNED, enrolled)["state"] == "unknown"
    assert sb.dkms_module_trust(None, SIGNED, enrolled)["state"] == "unknown"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("7B:2C:0A", "7b2c0a"), ("00:7b:2c", "7b2c"), ("0x1234", "1234"), ("00", "0"), ("zz:11", None), (None, None)],
)
def test_normalize_key_id(value, expected):
    assert sb.normalize_key_id(value) == expected


@pytest.mark.parametrize("text", ["", None, "amdgpu               9617408  18\n", "\x00\xff"])
def test_load_output_without_a_refusal(text):
    assert sb.parse_load_error(text)["refused"] is False
