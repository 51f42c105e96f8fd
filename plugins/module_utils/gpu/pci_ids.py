# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""AMD GPU PCI device IDs: product name and LLVM target.

Source: shared/reference/rocm-reference.md section d1 (pci.ids 2026-08,
ROCm gpu-arch-specs.rst). This is the one table the facts module uses to
name a GPU when a tool prints a raw ID or a name cut at 20 characters; the
preflight catalog (roles/preflight/vars/gpu_catalog.yml, the source of GPU
model facts, which a host cannot read) keys its classes on the same IDs, and
tests/unit/plugins/module_utils/gpu/test_catalog_agreement.py holds every ID,
product and target here to it.

Shared device IDs (0x744c, 0x747e, 0x73bf, 0x73df) name the family; the
exact SKU needs the subsystem ID or the VRAM size, which is the catalog's job.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# device_id: (product as AMD tools print it, LLVM gfx target)
AMD_GPU_IDS = {
    "0x74a5": ("AMD Instinct MI325X", "gfx942"),
    "0x74a1": ("AMD Instinct MI300X", "gfx942"),
    "0x74a9": ("AMD Instinct MI300X HF", "gfx942"),
    "0x74b5": ("AMD Instinct MI300X VF", "gfx942"),
    "0x74a0": ("AMD Instinct MI300A", "gfx942"),
    "0x74a2": ("AMD Instinct MI308X", "gfx942"),
    "0x74a8": ("AMD Instinct MI308X HF", "gfx942"),
    "0x74b6": ("AMD Instinct MI308X VF", "gfx942"),
    "0x75a0": ("AMD Instinct MI350X", "gfx950"),
    "0x75a3": ("AMD Instinct MI355X", "gfx950"),
    "0x7408": ("AMD Instinct MI250X", "gfx90a"),
    "0x740c": ("AMD Instinct MI250X/MI250", "gfx90a"),
    "0x740f": ("AMD Instinct MI210", "gfx90a"),
    "0x7410": ("AMD Instinct MI210 VF", "gfx90a"),
    "0x738c": ("AMD Instinct MI100", "gfx908"),
    "0x738e": ("AMD Instinct MI100", "gfx908"),
    "0x66a1": ("AMD Radeon Pro VII/Radeon Instinct MI50", "gfx906"),
    "0x66a0": ("AMD Radeon Instinct MI60", "gfx906"),
    "0x6860": ("Radeon Instinct MI25", "gfx900"),
    "0x7448": ("AMD Radeon PRO W7900", "gfx1100"),
    "0x744a": ("AMD Radeon PRO W7900 Dual Slot", "gfx1100"),
    "0x744b": ("AMD Radeon PRO W7900D", "gfx1100"),
    "0x745e": ("AMD Radeon PRO W7800", "gfx1100"),
    "0x7449": ("AMD Radeon PRO W7800 48GB", "gfx1100"),
    "0x73a3": ("AMD Radeon PRO W6800", "gfx1030"),
    "0x73a1": ("AMD Radeon Pro V620", "gfx1030"),
    "0x7460": ("AMD Radeon PRO V710", "gfx1101"),
    "0x7461": ("AMD Radeon PRO V710", "gfx1101"),
    "0x744c": ("AMD Radeon RX 7900 XT/7900 XTX/7900 GRE", "gfx1100"),
    "0x747e": ("AMD Radeon RX 7700 XT/7800 XT", "gfx1101"),
    "0x7480": ("AMD Radeon RX 7600/7600 XT", "gfx1102"),
    "0x73af": ("AMD Radeon RX 6900 XT", "gfx1030"),
    "0x73bf": ("AMD Radeon RX 6800/6800 XT/6900 XT", "gfx1030"),
    "0x73df": ("AMD Radeon RX 6700/6700 XT/6750 XT", "gfx1031"),
    "0x7550": ("AMD Radeon RX 9070/9070 XT/9070 GRE", "gfx1201"),
    "0x7551": ("AMD Radeon AI PRO R9700", "gfx1201"),
}


def product_for(device_id):
    entry = AMD_GPU_IDS.get(device_id or "")
    return entry[0] if entry else None


def gfx_target_for(device_id):
    entry = AMD_GPU_IDS.get(device_id or "")
    return entry[1] if entry else None
