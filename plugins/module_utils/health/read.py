# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what the GPU health checks judge, per AMD GPU PCI function, from sysfs under ``root``.

read_gpus(root) gives one record per AMD display/accelerator PCI function
(vendor 0x1002, class 0x03xxxx or 0x12xxxx), in PCI bus order, ``index`` as the gpu fact's:
``{index, bus, device, driver, link, perf_level, ras, firmware, vbios, xgmi_links}``.
Only open/read/listdir calls; what cannot be read is None or the reason text,
never an exception (the judging lives in compliance.health). Files, all as amdgpu
writes them (docs/compliance-checks.md, "health"):

* ``current_link_speed`` ... ``max_link_width`` (the PCI core's), ``power_dpm_force_performance_level``;
* ``ras/<block>_err_count`` (no ``ras/`` directory: the GPU has no RAS);
* ``fw_version/<name>_fw_version`` (``0x%08x``), ``vbios_version``; ``fw_version/pldm_fw_version`` is the
  PLDM bundle (amdgpu_ucode.c FW_VERSION_ATTR(pldm_fw_version), firmware.pldm_version), which amd-smi
  prints as its bytes in hex (0x01250312 -> PLDM_BUNDLE 01.25.03.12);
* ``xgmi_num_links``: one row of physical XGMI link counts to every GPU of the hive (amdgpu_xgmi.c);
* ``driver``: the symlink to the bound driver (none: no driver initialised the function).

Stdlib only; Python 2.7 compatible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.health.link import link_from_sysfs
from ansible_collections.rocm_fleet.core.plugins.module_utils.health.ras import parse_sysfs_err_count

PCI_DEVICES = "sys/bus/pci/devices"
AMD_VENDOR = "0x1002"
GPU_CLASSES = ("0x03", "0x12")  # display controllers, processing accelerators
LINK_FILES = ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width")
# amd-smi's FW_ID for a sysfs fw_version name (amdsmi reads the same files); PM is the SMC's PMFW.
# Firmware IDs a minimum may name that no host file (nor amd-smi) reports: IFWI (MI200's minimums) is read
# with the vendor's flash tool. A check against only these cannot be judged on a host at all.
UNREADABLE_FW_IDS = ("IFWI",)
FW_IDS = {"smc": "PM", "pldm": "PLDM_BUNDLE", "ta_ras": "TA_RAS", "ta_xgmi": "TA_XGMI", "sos": "PSP_SOSDRV",
          "vcn": "VCN", "rlc": "RLC", "mec": "CP_MEC1", "mec2": "CP_MEC2", "sdma": "SDMA0", "sdma2": "SDMA1",
          "asd": "ASD", "me": "CP_ME", "pfp": "CP_PFP"}


def _join(root, *parts):
    return os.path.join(root, *[part.lstrip("/") for part in parts])


def read_text(path):
    """(text, None) or (None, reason): EINVAL and other read errors become the reason, as cat would say it."""
    try:
        with open(path, "rb") as handle:
            return handle.read(65536).decode("utf-8", "replace"), None
    except (IOError, OSError) as error:
        if error.errno == errno.ENOENT:
            return None, "missing"
        return None, "cat: %s: %s" % (path, os.strerror(error.errno or errno.EIO))


def _value(path):
    text, _reason = read_text(path)
    return text.strip() if text is not None else None


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []


def gpu_functions(root):
    """[(bus, device dir)] of the AMD GPU PCI functions, sorted by bus."""
    base = _join(root, PCI_DEVICES)
    found = []
    for bus in listdir(base):
        path = os.path.join(base, bus)
        vendor, klass = _value(os.path.join(path, "vendor")), _value(os.path.join(path, "class"))
        if vendor == AMD_VENDOR and klass and klass.lower().startswith(GPU_CLASSES):
            found.append((bus.lower(), path))
    return found


def _driver(path):
    link = os.path.join(path, "driver")
    try:
        return os.path.basename(os.readlink(link))
    except (IOError, OSError):
        return None


def _ras(path):
    """None without ras/ (no RAS on this GPU); else {block: {ue, ce}} (a failed read: the reason per counter)."""
    ras = os.path.join(path, "ras")
    if not os.path.isdir(ras):
        return None
    blocks = {}
    for name in listdir(ras):
        if name.endswith("_err_count"):
            text, reason = read_text(os.path.join(ras, name))
            blocks[name[: -len("_err_count")]] = parse_sysfs_err_count(text if text is not None else reason)
    return blocks


def _firmware(path):
    """{FW_ID or sysfs name: version text}: PLDM_BUNDLE as dotted hex bytes, PM as dotted decimal bytes."""
    directory = os.path.join(path, "fw_version")
    firmware = {}
    for name in listdir(directory):
        if not name.endswith("_fw_version"):
            continue
        raw = _value(os.path.join(directory, name))
        stem = name[: -len("_fw_version")]
        fw_id = FW_IDS.get(stem, stem.upper())
        firmware[fw_id] = _fw_version(fw_id, raw)
    return firmware


def _fw_version(fw_id, raw):
    """amd-smi's form of the ``0x%08x`` values with a minimum in data; others (and non-hex text) as read."""
    if fw_id not in ("PLDM_BUNDLE", "PM"):
        return raw
    try:
        number = int(raw, 16)
    except (TypeError, ValueError):
        return raw
    octets = [(number >> shift) & 0xFF for shift in (24, 16, 8, 0)]
    if fw_id == "PLDM_BUNDLE":
        return ".".join("%02X" % octet for octet in octets)
    # PM: program.major.minor.debug in decimal (amd-smi 00.85.129.03; the kernel: smu fw version 0x00558103)
    return ".".join("%02d" % octet for octet in octets)


def _xgmi_row(path):
    text = _value(os.path.join(path, "xgmi_num_links"))
    if text is None:
        return None
    try:
        return [int(cell, 16) for cell in text.split()]
    except ValueError:
        return "xgmi_num_links is not a row of link counts: %r" % text[:60]


def _card(path):
    """The DRM card number of a function (its drm/cardN), or None: amdgpu made no DRM device for it."""
    cards = [name[4:] for name in listdir(os.path.join(path, "drm")) if name[4:].isdigit() and name[:4] == "card"]
    return min(int(card) for card in cards) if cards else None


def read_gpus(root="/"):
    """The health readings of every AMD GPU PCI function under ``root`` (see the module docstring).

    ``index`` is the gpu fact's (gpu.sysfs, as rocm_smi_lib): the functions with a DRM card in card
    order, None for one without (on a partitioned GPU: the physical GPU's index).
    """
    functions = [(bus, path, _card(path)) for bus, path in gpu_functions(root)]
    carded = sorted((card, bus) for bus, _path, card in functions if card is not None)
    indexes = dict((bus, index) for index, (_card_number, bus) in enumerate(carded))
    gpus = []
    for bus, path, _card_number in functions:
        texts = [read_text(os.path.join(path, name))[0] for name in LINK_FILES]
        gpus.append({
            "index": indexes.get(bus),
            "bus": bus,
            "device": _value(os.path.join(path, "device")),
            "driver": _driver(path),
            "link": link_from_sysfs(*texts),
            "perf_level": _value(os.path.join(path, "power_dpm_force_performance_level")),
            "ras": _ras(path),
            "firmware": _firmware(path),
            "vbios": _value(os.path.join(path, "vbios_version")),
            "xgmi_links": _xgmi_row(path),
        })
    return gpus


def amdgpu_loaded(root="/"):
    """True when the amdgpu module is in the running kernel (/sys/module/amdgpu)."""
    return os.path.isdir(_join(root, "sys/module/amdgpu"))
