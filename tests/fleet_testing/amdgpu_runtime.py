# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which amdgpu runs, and on which GPUs: ``lsmod``, ``lspci -k``, ``modinfo`` and the kernel log.

* parse_lsmod(text): {module: {size, used, users}}.
* parse_lspci_k(text): PCI devices with their driver in use and kernel modules
  (``lspci -k``, also the same lines of ``lspci -v``/``-vvv``).
* gpu_bindings(devices): each AMD GPU and whether amdgpu drives it. A GPU whose
  modules list amdgpu but that has no ``Kernel driver in use`` is not initialised.
* parse_modinfo(text): {field: [values]}; modinfo_driver(fields): the module
  file is AMD's DKMS build (a ``version`` field) or the kernel's own (none).
* parse_dmesg_amdgpu(text): what the kernel log says of amdgpu (version, DKMS or
  in-tree, initialised devices, signature refusals, the command line).
* running_driver(lsmod, ...): is amdgpu loaded, and which one.

Pure functions over text; stdlib only; none raises on bad input.
"""



import re

GPU_CLASSES = ("VGA compatible controller", "Display controller", "3D controller", "Processing accelerators")
_AMD = re.compile(r"Advanced Micro Devices|\[AMD(?:/ATI)?\]|\[1002:", re.IGNORECASE)
_SLOT = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+([^:]+):\s*(.*)$")
_LSMOD = re.compile(r"^(\S+)\s+(\d+)\s+(-|\d+)(?:\s+(\S+))?\s*$")
_MODINFO = re.compile(r"^([a-z][a-z0-9_]*):\s*(.*)$")
_STAMP = re.compile(r"^\s*\[[^\]]*\]\s?")
_DMESG = {
    "version": re.compile(r"\[drm\] amdgpu version: (\S+)"),
    "kernel": re.compile(r"^Linux version (\S+)"),
    "cmdline": re.compile(r"^(?:Kernel )?[Cc]ommand line: (.*)$"),
    "initialized": re.compile(r"\[drm\] Initialized amdgpu (\S+) \d+ for (\S+) on minor (\d+)"),
}
_OUT_OF_TREE = re.compile(r"^(amdkcl|amdgpu|amdttm|amd_sched|amddrm_\w+): loading out-of-tree module taints kernel")
_SIG_REFUSED = re.compile(
    r"Loading of unsigned module is rejected|unsigned module loading is restricted|"
    r"PKCS#7 signature not signed with a trusted key|Loading of module with unavailable key"
)
_SIG_MISSING = re.compile(r"module verification failed: signature and/or required key missing")


def parse_lsmod(text):
    """``lsmod`` (or ``lsmod | grep``) output -> {module: {size, used, users}}; the header is skipped."""
    modules = {}
    for raw in (text or "").splitlines():
        found = _LSMOD.match(raw.strip())
        if found:
            used = found.group(3)
            modules[found.group(1)] = {
                "size": int(found.group(2)),
                "used": None if used == "-" else int(used),
                "users": [u for u in (found.group(4) or "").split(",") if u],
            }
    return modules


def parse_lspci_k(text):
    """lspci -k/-v output -> [{slot, class, description, subsystem, driver, modules}]."""
    devices = []
    for raw in (text or "").splitlines():
        found = _SLOT.match(raw)
        if found:
            devices.append(
                {
                    "slot": found.group(1).lower(),
                    "class": found.group(2).strip(),
                    "description": found.group(3).strip(),
                    "subsystem": None,
                    "driver": None,
                    "modules": [],
                }
            )
            continue
        if not devices or not raw[:1].isspace():
            continue
        key, colon, value = raw.strip().partition(":")
        if not colon:
            continue
        if key == "Kernel driver in use":
            devices[-1]["driver"] = value.strip()
        elif key == "Kernel modules":
            devices[-1]["modules"] = [m.strip() for m in value.split(",") if m.strip()]
        elif key == "Subsystem":
            devices[-1]["subsystem"] = value.strip()
    return devices


def gpu_bindings(devices, module="amdgpu"):
    """[{slot, description, driver, state, reason}] for each AMD GPU among lspci devices.

    state 'bound' (``module`` drives it), 'not-bound' (no driver in use: the GPU is
    not initialised) or 'other-driver' (radeon, vfio-pci...). Bridges and audio
    functions are no GPU.
    """
    gpus = []
    for device in devices:
        if device["class"] not in GPU_CLASSES or not _AMD.search(device["description"]):
            continue
        driver = device["driver"]
        if driver == module:
            state, reason = "bound", "%s drives %s" % (module, device["slot"])
        elif driver:
            state, reason = "other-driver", "%s is driven by %s, not %s" % (device["slot"], driver, module)
        else:
            state = "not-bound"
            reason = "%s has no kernel driver in use (modules: %s): the GPU is not initialised" % (
                device["slot"],
                ", ".join(device["modules"]) or "none",
            )
        gpus.append(
            {
                "slot": device["slot"],
                "description": device["description"],
                "driver": driver,
                "modules": device["modules"],
                "state": state,
                "reason": reason,
            }
        )
    return gpus


def parse_modinfo(text):
    """``modinfo`` output -> {field: [values]}; a line starting with blanks continues the one before."""
    fields, last = {}, None
    for raw in (text or "").splitlines():
        if raw[:1].isspace() and last is not None:
            fields[last][-1] += raw.strip()
            continue
        found = _MODINFO.match(raw.strip())
        if found:
            last = found.group(1)
            fields.setdefault(last, []).append(found.group(2).strip())
    return fields


def modinfo_driver(fields):
    """{kind, version, kernel}: 'dkms' (a version field, or a file under updates/ or extra/), 'in-tree' or 'unknown'.

    Upstream amdgpu declares no MODULE_VERSION, AMD's DKMS build does, so the
    version field decides; a parm line that mentions "version" is no version.
    """
    version = (fields.get("version") or [None])[0]
    vermagic = (fields.get("vermagic") or [""])[0].split()
    kernel = vermagic[0] if vermagic else None
    filename = (fields.get("filename") or [""])[0]
    if version:
        return {"kind": "dkms", "version": version, "kernel": kernel}
    if re.search(r"/(?:updates|extra)/", filename):
        return {"kind": "dkms", "version": None, "kernel": kernel}
    if kernel or fields.get("srcversion"):
        return {"kind": "in-tree", "version": None, "kernel": kernel}
    return {"kind": "unknown", "version": None, "kernel": None}


def parse_dmesg_amdgpu(text):
    """The kernel log (``dmesg``, ``dmesg -T``, grep-filtered) -> what it says of amdgpu.

    {kernel, cmdline, version, source ('dkms', 'in-tree' or 'unknown'), out_of_tree,
    initialized: [{bdf, minor, kms}], signature: 'refused'|'unsigned-loaded'|None, lines}.
    ``[drm] amdgpu version`` is printed by AMD's DKMS driver only, like amdkcl's
    out-of-tree taint line. Init failures and call traces per GPU are
    health.driver_init.parse_amdgpu_dmesg's (the health checks).
    """
    result = {
        "kernel": None,
        "cmdline": None,
        "version": None,
        "source": "unknown",
        "out_of_tree": False,
        "initialized": [],
        "signature": None,
        "lines": 0,
    }
    for raw in (text or "").splitlines():
        line = _STAMP.sub("", raw, count=1).rstrip()
        if not line.strip():
            continue
        result["lines"] += 1
        for key in ("version", "kernel", "cmdline"):
            found = _DMESG[key].search(line)
            if found and result[key] is None:
                result[key] = found.group(1).strip()
        found = _DMESG["initialized"].search(line)
        if found:
            result["initialized"].append({"kms": found.group(1), "bdf": found.group(2), "minor": int(found.group(3))})
        result["out_of_tree"] = result["out_of_tree"] or bool(_OUT_OF_TREE.search(line))
        if _SIG_REFUSED.search(line):
            result["signature"] = "refused"
        elif _SIG_MISSING.search(line) and result["signature"] is None:
            result["signature"] = "unsigned-loaded"
    if result["version"] or result["out_of_tree"]:
        result["source"] = "dkms"
    elif result["initialized"]:
        result["source"] = "in-tree"
    return result


def running_driver(lsmod, sysfs_version=None, dmesg=None, modinfo=None, dkms_refused=False, module="amdgpu"):
    """{loaded, source, version, reason}: is ``module`` loaded (parse_lsmod), and AMD's DKMS one or the kernel's?

    The evidence, strongest first: /sys/module/amdgpu/version (DKMS only), the
    kernel log (parse_dmesg_amdgpu), a refused DKMS load (then what runs is the
    kernel's own), the module file (modinfo_driver; it may differ from what
    was loaded). No evidence: source 'unknown'.
    """
    if module not in (lsmod or {}):
        return {"loaded": False, "source": None, "version": None, "reason": "%s is not loaded" % module}
    info = lsmod[module]
    loaded = "%s is loaded (%d bytes, used by %s)" % (module, info["size"], info["used"])
    if sysfs_version:
        return {
            "loaded": True,
            "source": "dkms",
            "version": sysfs_version,
            "reason": "%s; /sys/module/%s/version is %s" % (loaded, module, sysfs_version),
        }
    if dmesg and dmesg.get("source") == "dkms":
        return {
            "loaded": True,
            "source": "dkms",
            "version": dmesg.get("version"),
            "reason": "%s; the kernel log shows AMD's DKMS driver" % loaded,
        }
    if dkms_refused:
        return {
            "loaded": True,
            "source": "in-tree",
            "version": None,
            "reason": "%s; the DKMS module was refused, so this is the kernel's own" % loaded,
        }
    kind = modinfo_driver(modinfo or {}) if modinfo else {"kind": "unknown", "version": None}
    if kind["kind"] != "unknown":
        return {
            "loaded": True,
            "source": kind["kind"],
            "version": kind["version"],
            "reason": "%s; its module file is %s" % (loaded, kind["kind"]),
        }
    return {"loaded": True, "source": "unknown", "version": None, "reason": "%s; which build is unknown" % loaded}
