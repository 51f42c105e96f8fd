"""Options of the health, boot and environment faults of `rocm-fleet lab fault HOST ...`."""

from __future__ import annotations

import argparse

from rocm_fleet.lab import faults_boot, faults_env, faults_health

USAGE = (
    "pcie-link --gpu N [--width W] [--speed '8.0 GT/s PCIe'] [--performance-level high] | "
    "ras --gpu N --block B [--ue U] [--ce C] | "
    "firmware --gpu N --fw NAME --version V | init-failure --gpu N | new-kernel [--version K] [--with-amdgpu] | "
    "secure-boot on|off [--enroll-dkms-key] | amdgpu-signature signed|unsigned | foreign-env [--value V] | "
    "unlisted-member --user NAME [--group render]"
)


def _parser(fault: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"rocm-fleet lab fault HOST {fault}")
    if fault in ("pcie-link", "ras", "firmware", "init-failure"):
        parser.add_argument("--gpu", type=int, required=True, help="GPU index (current numbering)")
    match fault:
        case "pcie-link":
            parser.add_argument("--width", type=int, help="trained width (default: the maximum)")
            parser.add_argument("--speed", help="trained speed as sysfs prints it (default: the maximum)")
            parser.add_argument(
                "--performance-level",
                choices=("auto", "low", "high", "manual", "profile_peak"),
                help="power_dpm_force_performance_level too (readers judge speed only at high/profile_peak)",
            )
        case "ras":
            parser.add_argument("--block", required=True, help="RAS block as amdgpu names it (umc, sdma, gfx, ...)")
            parser.add_argument("--ue", type=int, default=0, help="uncorrectable errors")
            parser.add_argument("--ce", type=int, default=0, help="correctable errors")
        case "firmware":
            parser.add_argument("--fw", required=True, help="fw_version name (smc = PMFW, mec, sos, ...)")
            parser.add_argument("--version", required=True, help="0x00558103, or amd-smi's 00.85.129.03")
        case "new-kernel":
            parser.add_argument("--version", help="kernel release (default: one above the newest installed)")
            parser.add_argument("--with-amdgpu", action="store_true", help="its amdgpu module too (DKMS autoinstall)")
        case "secure-boot":
            parser.add_argument("state", choices=("on", "off"))
            parser.add_argument("--enroll-dkms-key", action="store_true", help="enroll /var/lib/dkms/mok.pub in MOK")
        case "amdgpu-signature":
            parser.add_argument("state", choices=("signed", "unsigned"))
        case "foreign-env":
            parser.add_argument("--value", default="11.0.0", help="HSA_OVERRIDE_GFX_VERSION value")
        case "unlisted-member":
            parser.add_argument("--user", required=True)
            parser.add_argument("--group", default="render")
    return parser


FAULTS = (
    "pcie-link", "ras", "firmware", "init-failure", "new-kernel", "secure-boot", "amdgpu-signature",
    "foreign-env", "unlisted-member",
)  # fmt: skip


def run(host, fault: str, arguments: list[str]) -> str:
    """Inject ``fault`` with its options; return what to print after the host's name."""
    options = _parser(fault).parse_args(arguments)
    match fault:
        case "pcie-link":
            faults_health.degrade_pcie_link(host, options.gpu, options.width, options.speed, options.performance_level)
        case "ras":
            faults_health.ras_errors(host, options.gpu, options.block, options.ue, options.ce)
        case "firmware":
            value = faults_health.old_firmware(host, options.gpu, options.fw, options.version)
            return f"GPU {options.gpu} {options.fw}_fw_version 0x{value:08x}"
        case "init-failure":
            faults_health.init_failure(host, options.gpu)
        case "new-kernel":
            release = faults_boot.new_kernel(host, options.version, options.with_amdgpu)
            amdgpu = "with" if options.with_amdgpu else "without"
            return f"kernel {release} ({amdgpu} amdgpu) is the boot loader's default; the running kernel is unchanged"
        case "secure-boot":
            faults_boot.secure_boot(host, options.state == "on", options.enroll_dkms_key)
        case "amdgpu-signature":
            changed = faults_boot.amdgpu_signature(host, options.state == "signed")
            return f"{options.state}: {' '.join(changed)}"
        case "foreign-env":
            return "wrote " + faults_env.foreign_env(host, options.value)
        case "unlisted-member":
            faults_env.unlisted_member(host, options.user, options.group)
    return f"{fault} {' '.join(arguments)}".rstrip()
