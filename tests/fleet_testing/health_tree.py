"""Render a host tree in the formats the kernel, DKMS and GRUB write, for the health checks' tests.

healthy(root, ...) renders a healthy host; the tests then change one thing (a
degraded link, an uncorrectable error, old firmware, a new default kernel without
its amdgpu module, Secure Boot with an unsigned module, ...).
"""

from __future__ import annotations

import lzma
import os
import struct
from pathlib import Path

GENERATED = Path(__file__).resolve().parents[1] / "fixtures" / "generated" / "module-signature"
GLOBAL = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
SHIM = "605dab50-e046-4300-abb6-3dd810dd8b23"
X509_GUID = bytes.fromhex("a159c0a5e494a74a87b5ab155c2bf072")
MAGIC = b"~Module signature appended~\n"
RAS_BLOCKS = ("umc", "sdma", "gfx", "mmhub", "pcie_bif", "hdp", "xgmi_wafl")


def write(root, path, content, mode="w"):
    target = Path(root) / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    return target


def link(root, path, to):
    target = Path(root) / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        target.unlink()
    os.symlink(to, target)


def gpu(root, bus, device="0x74a1", klass="0x120000", driver="amdgpu", width=16, speed="32.0 GT/s PCIe",
        ras=True, pldm=0x01250312, pmfw=0x00558203, xgmi=None, perf="auto", card=None):
    base = "/sys/bus/pci/devices/%s" % bus
    for name, value in (("vendor", "0x1002"), ("device", device), ("class", klass),
                        ("current_link_speed", speed), ("max_link_speed", "32.0 GT/s PCIe"),
                        ("current_link_width", str(width)), ("max_link_width", "16"),
                        ("power_dpm_force_performance_level", perf), ("vbios_version", "113-M3000100-103")):
        write(root, "%s/%s" % (base, name), value + "\n")
    if driver:
        link(root, base + "/driver", "../../../bus/pci/drivers/%s" % driver)
        card = card if card is not None else int(bus.split(":")[1], 16) // 0x10  # the tests' buses: 0x05 + 0x10 * n
        (Path(root) / base.lstrip("/") / "drm" / ("card%d" % card)).mkdir(parents=True, exist_ok=True)
    if ras:
        write(root, base + "/ras/features", "feature mask: 0x3fff\n")
        for block in RAS_BLOCKS:
            write(root, "%s/ras/%s_err_count" % (base, block), "ue: 0\nce: 0\n")
    if pldm is not None:
        write(root, base + "/fw_version/pldm_fw_version", "0x%08x\n" % pldm)
    write(root, base + "/fw_version/smc_fw_version", "0x%08x\n" % pmfw)
    write(root, base + "/fw_version/mec_fw_version", "0x%08x\n" % 0xA8)
    if xgmi is not None:
        write(root, base + "/xgmi_num_links", " ".join("%02x" % n for n in xgmi) + " \n")


def signed(body, cert="mok"):
    """``body`` with the generated PKCS#7 signature appended as sign-file appends it (signer: mok.der's key)."""
    sig = (GENERATED / "body.p7s").read_bytes()
    return body + sig + struct.pack(">BBBBB3xI", 0, 0, 2, 0, 0, len(sig)) + MAGIC


def signature_list(*ders):
    out = b""
    for der in ders:
        entry = b"\x00" * 16 + der
        out += X509_GUID + struct.pack("<III", 28 + len(entry), 0, len(entry)) + entry
    return out


def kernel(root, release, dkms_version="6.16.13-2278356.24.04", built=True, installed=True, module=None,
           suffix=".ko"):
    write(root, "/boot/vmlinuz-%s" % release, "kernel image\n")
    write(root, "/usr/lib/modules/%s/modules.dep" % release, "")
    tree = "/var/lib/dkms/amdgpu/%s" % dkms_version
    write(root, tree + "/source/dkms.conf", 'PACKAGE_NAME="amdgpu"\n')
    content = module if module is not None else signed((GENERATED / "body").read_bytes())
    stored = lzma.compress(content) if suffix == ".ko.xz" else content
    if built:
        write(root, "%s/%s/x86_64/module/amdgpu%s" % (tree, release, suffix), stored)
    if installed:
        write(root, "/usr/lib/modules/%s/updates/dkms/amdgpu%s" % (release, suffix), stored)
        link(root, "/var/lib/dkms/amdgpu/kernel-%s-x86_64" % release, "%s/%s/x86_64" % (dkms_version, release))


def grub(root, releases, default="0", grubenv=None):
    entries = "".join(
        "menuentry 'Ubuntu, with Linux %s' --class ubuntu $menuentry_id_option 'gnulinux-%s-advanced' {\n"
        "\tlinux\t/boot/vmlinuz-%s root=UUID=1234 ro quiet splash\n\tinitrd\t/boot/initrd.img-%s\n}\n"
        % (r, r, r, r) for r in releases)
    write(root, "/boot/grub/grub.cfg",
          'if [ "${next_entry}" ] ; then\n   set default="${next_entry}"\nelse\n   set default="%s"\nfi\n%s'
          % (default, entries))
    if grubenv is not None:
        write(root, "/boot/grub/grubenv", "# GRUB Environment Block\n%s\n" % grubenv + "#" * 900)


def secure_boot(root, enabled=True, enrolled=("mok",)):
    efivars = "/sys/firmware/efi/efivars"
    write(root, "%s/SecureBoot-%s" % (efivars, GLOBAL), b"\x06\x00\x00\x00" + (b"\x01" if enabled else b"\x00"))
    write(root, "%s/SetupMode-%s" % (efivars, GLOBAL), b"\x06\x00\x00\x00\x00")
    ders = [(GENERATED / ("%s.der" % name)).read_bytes() for name in enrolled]
    write(root, "/sys/firmware/efi/mok-variables/MokListRT", signature_list(*ders))


def healthy(root, gpus=8, running="6.8.0-60-generic", xgmi=True):
    """An 8x MI300X host: every GPU healthy, amdgpu-dkms installed for the running and default kernel."""
    for index in range(gpus):
        row = [0 if peer == index else 1 for peer in range(gpus)] if xgmi else None
        gpu(root, "0000:%02x:00.0" % (0x05 + index * 0x10), xgmi=row)
    write(root, "/sys/module/amdgpu/version", "6.16.13\n")
    write(root, "/proc/sys/kernel/osrelease", running + "\n")
    kernel(root, running)
    grub(root, [running])
    write(root, "/etc/modprobe.d/rocm-fleet.conf", "options amdgpu noretry=0\n")
    return root


HEALTH = {"ce_threshold": 10, "ras": True, "dkms": True, "kernel_max": "6.14", "module_version": "6.16.13",
          "xgmi": {"peers": 7},
          "firmware": {"PLDM_BUNDLE": {"min": "01.25.03.12", "source": "test"}, "PM": {"min": "85.130"}}}
