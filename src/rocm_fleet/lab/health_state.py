"""How a host's health and boot faults (faults.json) change its hardware profile.

Keys of faults.json, GPU indexes in the numbering after ``removed_gpus``:

* ``pcie_links``: [{gpu, speed, width[, performance_level]}]: the link trained at that speed and width
  (max unchanged); power_dpm_force_performance_level set too when given (speed counts at "high")
* ``ras_errors``: [{gpu, block, ue, ce}]: the block's error counters
* ``firmware``: [{gpu, fw, version}]: fw_version/<fw>_fw_version
* ``init_failed_gpus``: [gpu]: amdgpu's probe failed on it
* ``secure_boot``: {enabled, enrolled}: the firmware's Secure Boot switch and the DER
  certificates (base64) enrolled in MOK besides shim's vendor certificate
"""

from __future__ import annotations

import base64
import dataclasses
import ssl
from pathlib import Path

VENDOR_CERTIFICATE = Path(__file__).resolve().parent / "keys" / "shim-vendor-lab.pem"


def vendor_certificate_der() -> bytes:
    """The certificate built into the lab's shim (its vendor_cert), always first in MokListRT."""
    return ssl.PEM_cert_to_DER_cert(VENDOR_CERTIFICATE.read_text())


def apply_health_faults(profile, faults: dict):
    for link in faults.get("pcie_links", []):
        level = link.get("performance_level", profile.gpus[_index(profile, link["gpu"])].performance_level)
        profile = profile.with_gpu(
            link["gpu"], current_link_speed=link["speed"], current_link_width=link["width"], performance_level=level
        )
    for entry in faults.get("ras_errors", []):
        gpu = profile.gpus[_index(profile, entry["gpu"])]
        errors = [error for error in gpu.ras_errors if error[0] != entry["block"]]
        errors.append((entry["block"], entry["ue"], entry["ce"]))
        profile = profile.with_gpu(entry["gpu"], ras_errors=tuple(errors))
    for entry in faults.get("firmware", []):
        gpu = profile.gpus[_index(profile, entry["gpu"])]
        firmware = dict(gpu.firmware)
        firmware[entry["fw"]] = entry["version"]
        profile = profile.with_gpu(entry["gpu"], firmware=tuple(firmware.items()))
    for index in faults.get("init_failed_gpus", []):
        profile = profile.with_gpu(index, init_failed=True)
    secure_boot = faults.get("secure_boot")
    if secure_boot is not None:
        enrolled = tuple(base64.b64decode(der) for der in secure_boot.get("enrolled", []))
        profile = dataclasses.replace(profile, boot_firmware="uefi", secure_boot=bool(secure_boot["enabled"]))
        profile = _with_mok(profile, enrolled)
    elif profile.boot_firmware == "uefi":
        profile = _with_mok(profile, ())
    return profile


def _with_mok(profile, enrolled: tuple):
    return dataclasses.replace(profile, mok_certificates=(vendor_certificate_der(), *enrolled))


def _index(profile, index: int) -> int:
    profile.with_gpu(index)  # raises ProfileError for a GPU the host does not have
    return index


def trusted_module_keys(profile) -> list[bytes]:
    """The certificates a Secure Boot kernel trusts for an out-of-tree module: shim's MOK list."""
    return list(profile.mok_certificates)
