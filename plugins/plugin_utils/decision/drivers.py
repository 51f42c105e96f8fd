# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""AMD's amdgpu driver lines: which one a host runs, how each package manager names it, what it loads as.

* driver_table_problems(drivers, matrix): what is wrong with the driver-line table.
* choose_driver(matrix, drivers, rocm_version, requested): the line a host runs
  (the release's own unless the inventory names another one AMD's user/kernel
  compatibility allows) and the problems of that choice.
* dkms_package(driver, manager): amdgpu-dkms's install spec and version glob.
* dkms_outdated(installed, driver, manager): whether the driver must move.
* dkms_move(installed, installed_firmware, driver, manager, downgrade): whether
  the driver moves, and whether the old driver packages must go first.
* loaded_driver(version, kernel): the loaded amdgpu as a DKMS module, the
  in-tree driver of the kernel (a kernel banner or release), or unknown.

Stdlib only; the table is roles/preflight/vars/amdgpu_drivers.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import re

from ansible_collections.rocm_fleet.core.plugins.plugin_utils.decision.package_versions import (
    compare_package_versions,
    parse_deb_version,
    parse_rpm_version,
)
from ansible_collections.rocm_fleet.core.plugins.module_utils.common.versions import parse_version

# Package manager -> the package format its amdgpu-dkms versions have.
PACKAGE_FORMATS = {"apt": "deb", "dnf": "rpm", "zypper": "rpm"}
DKMS = "amdgpu-dkms"
# amd-smi prints the kernel's banner as the driver version of the in-tree driver, spaces
# collapsed ("Linuxversion6.19.11(nixbld@localhost)..."), or cut short ("Linuxver").
_BANNER = re.compile(r"^\s*linux", re.IGNORECASE)
_BANNER_KERNEL = re.compile(r"^\s*linux\s*version\s*(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
_NUMERIC = re.compile(r"^\s*(\d+(?:\.\d+)+)")


def series_covers(series, line):
    """'30.30' covers 30.30 and 30.30.3; '6.4' covers 6.4.0 and 6.4.1; a full line only itself."""
    series, line = str(series), str(line)
    if line == series or line.startswith(series + "."):
        return True
    return parse_version(series) is not None and parse_version(line) == parse_version(series) + (0,)


def _line_problems(name, line):
    where = "amdgpu driver line %s" % name
    if not isinstance(line, dict):
        return ["%s: must be a mapping" % where]
    problems = []
    # The line's name is written into repository files (dnf's and zypper's "amdgpu <line>").
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", str(name)):
        problems.append("amdgpu driver line %r: the name must be a driver line number like 30.30.3" % str(name))
    if not str(line.get("source") or "").strip():
        problems.append("%s: has no source" % where)
    if not re.fullmatch(r"[0-9][0-9.]*", str(line.get("repo_dir") or "")):
        problems.append("%s: repo_dir %r is not a directory name like 30.10.2" % (where, line.get("repo_dir")))
    module = line.get("kernel_module")
    if module is not None and not _NUMERIC.match(str(module)):
        problems.append("%s: kernel_module %r is not a version" % (where, module))
    kernel = line.get("kernel")
    if kernel is not None and (not isinstance(kernel, dict) or parse_version(kernel.get("max")) is None):
        problems.append("%s: kernel must be {max, max_certainty, max_source} or null" % where)
    versions = line.get("amdgpu_dkms")
    if not isinstance(versions, dict) or set(versions) - set(PACKAGE_FORMATS.values()):
        return problems + ["%s: amdgpu_dkms must map deb and rpm to versions (null: unknown)" % where]
    module_ok = module is not None and _NUMERIC.match(str(module))
    for package_format, parse in (("deb", parse_deb_version), ("rpm", parse_rpm_version)):
        value = versions.get(package_format)
        if value is None:
            continue
        try:
            parse(str(value))
        except ValueError as error:
            problems.append("%s: amdgpu_dkms.%s: %s" % (where, package_format, error))
            continue
        if module_ok and not str(value).split(":", 1)[-1].startswith(str(module)):
            problems.append(
                "%s: amdgpu_dkms.%s %s does not carry the module version %s" % (where, package_format, value, module)
            )
    return problems


def driver_table_problems(drivers, matrix):
    """Problems of the table and of the matrix's references into it, as sentences."""
    if not isinstance(drivers, dict):
        return ["the amdgpu driver table must be a mapping of driver lines"]
    problems = []
    for name in sorted(drivers, key=str):
        problems.extend(_line_problems(name, drivers[name]))
    for version in sorted(matrix or {}):
        release = matrix[version] if isinstance(matrix[version], dict) else {}
        own = release.get("amdgpu_driver")
        if own is not None and str(own) not in drivers:
            problems.append(
                "support matrix ROCm %s: amdgpu_driver %s is not a line of the amdgpu driver table" % (version, own)
            )
        compatible = release.get("amdgpu_compatible") or []
        if not isinstance(compatible, list):
            problems.append("support matrix ROCm %s: amdgpu_compatible must list driver line series" % version)
        elif compatible and not str(release.get("amdgpu_compatible_source") or "").strip():
            problems.append("support matrix ROCm %s: amdgpu_compatible has no amdgpu_compatible_source" % version)
    return problems


def _line_key(name):
    return parse_version(name) or (0,)


def _allowed(release, own):
    return ([own] if own else []) + [str(series) for series in release.get("amdgpu_compatible") or []]


def choose_driver(matrix, drivers, rocm_version, requested=None):
    """(driver or None, problems): the line ``rocm_version`` runs with, as the decision records it.

    ``requested`` (preflight_amdgpu_driver) names a line; empty means the release's own.
    The driver is the table's entry with ``line``, ``own_line`` and ``chosen`` (own or
    inventory) added; None with no problem where neither names a line (no amdgpu_driver).
    """
    release = (matrix or {}).get(rocm_version) or {}
    own = release.get("amdgpu_driver")
    own = str(own) if own is not None else None
    wanted = str(requested).strip() if requested not in (None, "") else own
    if wanted is None:
        return None, []
    if wanted not in drivers:
        known = ", ".join(sorted(drivers, key=_line_key))
        return None, [
            "preflight_amdgpu_driver %s is not an amdgpu driver line AMD publishes (known: %s); add it to "
            "preflight_amdgpu_drivers_extra with its sources" % (wanted, known)
        ]
    allowed = _allowed(release, own)
    if wanted != own and not any(series_covers(series, wanted) for series in allowed):
        return None, [
            "ROCm %s does not run with amdgpu driver line %s: AMD's user/kernel compatibility lists %s "
            "for it (%s); pick one of those with preflight_amdgpu_driver, or leave it empty for the "
            "release's own"
            % (
                rocm_version,
                wanted,
                ", ".join(allowed) or "only its own line",
                release.get("amdgpu_compatible_source") or "no source",
            )
        ]
    driver = dict(drivers[wanted], line=wanted, own_line=own, chosen="own" if wanted == own else "inventory")
    return driver, []


def dkms_package(driver, manager):
    """{name, spec, version, floor}: what the packages role installs and compliance expects.

    apt installs exactly the line (amdgpu-dkms=1:6.16.13.30300300-*); dnf and zypper
    install at least its version from the line's repository (amdgpu-dkms >= 1:6.16.13-2327507),
    since AMD's RPM release carries a dist tag (.el9) the table leaves out. ``version`` is
    the glob the installed version must match; ``floor`` the oldest version of the line.
    """
    if manager not in PACKAGE_FORMATS:
        raise ValueError("unknown package manager %r (apt, dnf or zypper)" % (manager,))
    package_format = PACKAGE_FORMATS[manager]
    if not driver:
        raise ValueError("no amdgpu driver line is decided for this host")
    floor = (driver.get("amdgpu_dkms") or {}).get(package_format)
    if floor is None:
        raise ValueError(
            "the %s version of amdgpu-dkms in driver line %s is unknown (not sourced); add it to "
            "preflight_amdgpu_drivers_extra or pick another line with preflight_amdgpu_driver"
            % (package_format, driver.get("line"))
        )
    floor = str(floor)
    if package_format == "deb":
        return {"name": DKMS, "spec": "%s=%s-*" % (DKMS, floor), "version": floor + "-*", "floor": floor}
    glob = floor + ("*" if parse_rpm_version(floor)[2] is not None else "-*")
    operator = " >= " if manager == "dnf" else ">="  # the dnf module needs spaces around it, zypper none
    return {"name": DKMS, "spec": DKMS + operator + floor, "version": glob, "floor": floor}


def dkms_outdated(installed, driver, manager):
    """True when no amdgpu-dkms is installed or the newest installed one is older than the line.

    ``installed`` is package_facts' list for amdgpu-dkms ([{version, release, epoch}, ...] or
    version strings). A newer driver stays: AMD's driver serves older user space, and going
    back would need amdgpu-dkms-firmware pinned to the old version as well.
    """
    package = dkms_package(driver, manager)
    package_format = PACKAGE_FORMATS[manager]
    versions = [_installed_version(item, package_format) for item in installed or []]
    versions = [version for version in versions if version]
    if not versions:
        return True
    return all(compare_package_versions(version, package["floor"], package_format) < 0 for version in versions)


def dkms_move(installed, installed_firmware, driver, manager, downgrade=False):
    """{install, remove_first}: whether amdgpu-dkms moves to the line, and whether the old driver goes first.

    It moves when missing or older than the line (dkms_outdated), and with ``downgrade``
    (a rollback) also when a newer one is installed. The old amdgpu-dkms and
    amdgpu-dkms-firmware are removed first where the package manager cannot move them
    itself: going back to an older line, and on apt from a 6.x driver to a 30.x line.
    AMD's 6.x driver packages carry epoch 1 (amdgpu-dkms-firmware 1:6.12.12.60401-...);
    from the 30.x lines on, amdgpu-dkms-firmware has none (30.30.3.0.30300300-...) and
    sorts below every 6.x one, so apt will not move to it ("Depends: amdgpu-dkms-firmware
    (= 30.30.3...) but 1:6.12.12... is to be installed"); removing the old driver first is
    the fix (ROCm/rocm-install-on-linux#583). dnf and zypper replace them by name.
    """
    package = dkms_package(driver, manager)
    package_format = PACKAGE_FORMATS[manager]
    versions = [v for v in (_installed_version(item, package_format) for item in installed or []) if v]
    if not versions:
        return {"install": True, "remove_first": False}
    if all(compare_package_versions(version, package["floor"], package_format) < 0 for version in versions):
        return {"install": True, "remove_first": _renumbered(installed_firmware, driver, manager)}
    if downgrade and not any(fnmatch.fnmatchcase(version, package["version"]) for version in versions):
        return {"install": True, "remove_first": True}
    return {"install": False, "remove_first": False}


def _renumbered(installed_firmware, driver, manager):
    line = parse_version(driver.get("line"))
    if manager != "apt" or not line or line[0] < 30:
        return False
    versions = [_installed_version(item, "deb") for item in installed_firmware or []]
    return any(version and parse_deb_version(version)[0] > 0 for version in versions)


def _installed_version(item, package_format):
    """package_facts gives deb versions whole, rpm ones as epoch, version and release."""
    if not isinstance(item, dict):
        return str(item) if item else None
    version = str(item.get("version") or "")
    if not version:
        return None
    if package_format == "rpm":
        epoch = item.get("epoch")
        release = item.get("release")
        version = ("%s:" % epoch if epoch not in (None, "", 0, "0") else "") + version
        return version + ("-%s" % release if release else "")
    return version


def loaded_driver(version, kernel=None):
    """{kind, version, kernel}: kind 'dkms' (AMD's module, its version), 'in-tree' or 'unknown'.

    A kernel banner ("Linuxversion6.19.11...", "Linuxver") or the running kernel's
    release in the version field is the kernel's own amdgpu, never a driver version.
    """
    text = "" if version is None else str(version).strip()
    if not text:
        return {"kind": "unknown", "version": None, "kernel": None}
    if _BANNER.match(text):
        found = _BANNER_KERNEL.match(text)
        return {"kind": "in-tree", "version": None, "kernel": found.group(1) if found else None}
    if kernel and text == str(kernel).strip():  # rocm-smi reports the kernel's release for the in-tree driver
        return {"kind": "in-tree", "version": None, "kernel": str(kernel)}
    found = _NUMERIC.match(text)
    if not found:
        return {"kind": "unknown", "version": None, "kernel": None}
    return {"kind": "dkms", "version": found.group(1), "kernel": None}
