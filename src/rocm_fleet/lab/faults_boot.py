"""Boot faults: a new default kernel, Secure Boot, the amdgpu module's signature.

They change the host's own files (as a kernel upgrade, the firmware setup screen, mokutil
or dkms do) and are recorded in faults.json so ``clear`` can undo them. None changes the
running boot: /proc/cmdline and the loaded amdgpu stay until the next boot, which runs
the boot loader's default (grub.cfg's first kernel; on a RHEL-family host the new kernel's
entry, which kernel-install makes the default with UPDATEDEFAULT=yes) and loads amdgpu only
where kernels.amdgpu_refusal allows it.
The Secure Boot switch shows in efivars at once (re-rendered /sys); the module check
happens when amdgpu next loads (boot or modprobe).
"""

from __future__ import annotations

import base64
import subprocess

from rocm_fleet.lab import kernels, modsign, systems
from rocm_fleet.lab.faults import FaultError, ask_supervisor, load_faults, save_faults
from rocm_fleet.lab.host import LabHost


def run_in_host(host: LabHost, *argv: str) -> None:
    """Run a host's own tool in its root, as the lab's first boot runs update-grub."""
    result = subprocess.run(["chroot", str(host.root), *argv], capture_output=True, text=True)
    if result.returncode:
        raise FaultError(f"{host.spec.name}: {' '.join(argv)}: {result.stderr.strip()}")


def new_kernel(host: LabHost, release: str | None = None, with_amdgpu: bool = False) -> str:
    faults = load_faults(host)
    installed = [entry["release"] for entry in faults.get("new_kernels", [])]
    release = release or kernels.next_kernel_release(max([kernels.machine_kernel(), *installed], key=_version_key))
    if release == kernels.machine_kernel() or release in installed:
        raise FaultError(f"{host.spec.name}: kernel {release} is installed already")
    bls = _boots_bls(host)
    kernels.install_kernel(host.root, release, with_amdgpu, "bls" if bls else "grub")
    if faults.get("amdgpu_signature") == "signed":
        _sign_all(host, signed=True)  # dkms signs what it builds once it has a key
    if bls:  # kernel-core's %posttrans
        run_in_host(host, "kernel-install", "add", release, f"/lib/modules/{release}/vmlinuz")
    else:
        run_in_host(host, "/usr/sbin/update-grub")
    faults.setdefault("new_kernels", []).append({"release": release, "with_amdgpu": with_amdgpu})
    save_faults(host, faults)
    return release


def secure_boot(host: LabHost, enabled: bool, enroll_dkms_key: bool = False) -> None:
    faults = load_faults(host)
    state = faults.get("secure_boot") or {"enabled": False, "enrolled": []}
    state["enabled"] = enabled
    if enroll_dkms_key:
        faults["generated_dkms_key"] = modsign.generate_dkms_key(host.root) or faults.get("generated_dkms_key", False)
        der = base64.b64encode((host.root / modsign.DKMS_CERTIFICATE).read_bytes()).decode()
        if der not in state["enrolled"]:
            state["enrolled"].append(der)  # mokutil --import, confirmed in MokManager at the next boot
    faults["secure_boot"] = state
    save_faults(host, faults)
    ask_supervisor(host, {"action": "rerender"})


def amdgpu_signature(host: LabHost, signed: bool) -> list[str]:
    faults = load_faults(host)
    if signed:
        faults["generated_dkms_key"] = modsign.generate_dkms_key(host.root) or faults.get("generated_dkms_key", False)
    changed = _sign_all(host, signed)
    if not changed:
        raise FaultError(f"{host.spec.name}: no DKMS amdgpu.ko under /var/lib/dkms/amdgpu (install amdgpu-dkms first)")
    faults["amdgpu_signature"] = "signed" if signed else "unsigned"
    save_faults(host, faults)
    return changed


def dkms_module_files(host: LabHost) -> list:
    """The built DKMS amdgpu modules (/var/lib/dkms/amdgpu/<ver>/<k>/<arch>/module/amdgpu.ko*)."""
    return sorted(host.root.glob("var/lib/dkms/amdgpu/*/*/*/module/amdgpu.ko*"))


def _sign_all(host: LabHost, signed: bool) -> list[str]:
    """Sign (or strip) each built module, then install it again: dkms signs the built module and copies
    it, so the installed file stays byte-identical (dkms status: "Differences between built and installed")."""
    key, certificate = host.root / modsign.DKMS_KEY, host.root / modsign.DKMS_CERTIFICATE
    changed = []
    for built in dkms_module_files(host):
        data = built.read_bytes()
        built.write_bytes(modsign.sign(data, key, certificate) if signed else modsign.split_signature(data)[0])
        changed.append("/" + str(built.relative_to(host.root)))
        installed = host.root / "usr/lib/modules" / built.parents[2].name / "updates/dkms" / built.name
        if installed.is_file():
            installed.write_bytes(built.read_bytes())
            changed.append("/" + str(installed.relative_to(host.root)))
    return changed


def undo(host: LabHost, faults: dict) -> None:
    """Put the host's boot files back as they were before the faults (called by clear)."""
    if faults.get("amdgpu_signature") == "signed":
        _sign_all(host, signed=False)
    if faults.get("generated_dkms_key"):
        for name in (modsign.DKMS_KEY, modsign.DKMS_CERTIFICATE):
            (host.root / name).unlink(missing_ok=True)
    if faults.get("new_kernels"):
        for entry in faults["new_kernels"]:
            if _boots_bls(host):  # kernel-core's %preun, before its files go
                run_in_host(host, "kernel-install", "remove", entry["release"])
            kernels.remove_kernel(host.root, entry["release"])
        if not _boots_bls(host):
            run_in_host(host, "/usr/sbin/update-grub")
    ask_supervisor(host, {"action": "rerender"})


def _boots_bls(host: LabHost) -> bool:
    return systems.system(host.spec.system).boot_loader == "bls"


def _version_key(release: str) -> list:
    import re

    return [int(part) if part.isdigit() else part for part in re.split(r"[.-]", release)]
