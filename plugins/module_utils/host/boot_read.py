# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what the kernel, driver and Secure Boot checks judge, from files under ``root``.

* installed_kernels(root): /boot/vmlinuz-<k> with a modules directory.
* default_kernel(root): (kernel, reason) the boot loader starts next: grub.cfg's ``set default`` (a number,
  a title or id, ``${saved_entry}`` from grubenv; grubenv ``next_entry`` wins), or Boot Loader Spec entries.
* dkms_records(root, module): the records ``host.dkms.parse_dkms_status`` gives, read from the DKMS tree
  as dkms status reads it (``<ver>/source``, ``<ver>/<k>/<arch>/module/``, the ``kernel-<k>-<arch>`` link of
  an install), so no ``dkms`` process runs.
* config_files(root, dirs, pattern): {path: text}. Secure Boot, MOKs and signatures: host.secure_boot_read.

Stdlib only; Python 2.7 compatible; nothing here raises on a missing or odd file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.health.read import listdir, read_text

MODULE_DIRS = ("usr/lib/modules", "lib/modules")
INSTALL_DIRS = ("updates/dkms", "updates", "extra")  # where dkms installs (Debian, older dkms, EL)
SUFFIXES = ("", ".xz", ".zst", ".gz")
_ENTRY = re.compile(r"^\s*(menuentry|submenu)\s+(['\"])(.*?)\2(.*)\{\s*$")
_ENTRY_ID = re.compile(r"\$menuentry_id_option\s+'([^']+)'")
_LINUX = re.compile(r"^\s*(?:linux|linuxefi|linux16)\s+(\S+)")
_SET_DEFAULT = re.compile(r"^\s*set\s+default=[\"']?([^\"'\s]*)")


def host_path(root, *parts):
    return os.path.join(root, *[part.lstrip("/") for part in parts])


def _read(root, path):
    return read_text(host_path(root, path))[0]


def _kernel_of(image):
    name = os.path.basename(image or "")
    return name[len("vmlinuz-"):] if name.startswith("vmlinuz-") else None


def installed_kernels(root="/"):
    kernels = set()
    for name in listdir(host_path(root, "boot")):
        kernel = _kernel_of(name)
        if kernel and any(os.path.isdir(host_path(root, base, kernel)) for base in MODULE_DIRS):
            kernels.add(kernel)
    return sorted(kernels)


def _grubenv(root):
    env = {}
    for line in (_read(root, "boot/grub/grubenv") or _read(root, "boot/grub2/grubenv") or "").splitlines():
        key, equals, value = line.partition("=")
        if equals and not key.startswith("#"):
            env[key.strip()] = value.strip()
    return env


def grub_entries(text):
    """[(position, title, id, kernel, id path)] of a grub.cfg's menu entries and submenus' entries.

    The position is GRUB's index path ("1>2"), the id path the same entry by ids ("submenu id>entry id"; a title
    where an entry has no id), as GRUB_DEFAULT and grub-set-default accept either.
    """
    entries, stack, counters, current = [], [], [0], None
    for line in (text or "").splitlines():
        found = _ENTRY.match(line)
        if found:
            position = ">".join(str(n) for n in [s[0] for s in stack] + [counters[-1]])
            ident = _ENTRY_ID.search(found.group(4))
            ident = ident.group(1) if ident else None
            id_path = ">".join([s[2] or s[1] for s in stack] + [ident or found.group(3)])
            if found.group(1) == "submenu":
                stack.append((counters[-1], found.group(3), ident))
                counters.append(0)
                continue
            current = [position, found.group(3), ident, None, id_path]
            continue
        linux = _LINUX.match(line)
        if linux and current is not None and current[3] is None:
            current[3] = _kernel_of(linux.group(1))
        if line.strip() == "}":
            if current is not None:
                entries.append(tuple(current))
                counters[-1] += 1
                current = None
            elif stack:
                stack.pop()
                counters.pop()
                counters[-1] += 1
    return entries


def _pick(entries, wanted):
    """The entry ``wanted`` names: a position (0, 1>2), a title or an id ('a>b' names a submenu's entry)."""
    last = wanted.split(">")[-1]
    for position, title, ident, kernel, _id_path in entries:
        if wanted in (position, title, ident) or last in (title, ident):
            return kernel
    return None


def default_kernel(root="/"):
    """(kernel release or None, how it was found or why not)."""
    env = _grubenv(root)
    for cfg in ("boot/grub/grub.cfg", "boot/grub2/grub.cfg", "boot/efi/EFI/ubuntu/grub.cfg"):
        text = _read(root, cfg)
        if text is None:
            continue
        defaults = [m.group(1) for m in map(_SET_DEFAULT.match, text.splitlines()) if m]
        wanted = next((d for d in defaults if d != "${next_entry}"), "0")
        if env.get("next_entry"):
            wanted, how = env["next_entry"], "grubenv next_entry"
        elif wanted == "${saved_entry}":
            wanted, how = env.get("saved_entry") or "0", "grubenv saved_entry"
        else:
            how = "set default=%s" % wanted
        if "blscfg" in text:  # EL: the entries are /boot/loader/entries, grubenv names the saved one
            return _bls_default(root, env.get("next_entry") or env.get("saved_entry"))
        kernel = _pick(grub_entries(text), wanted)
        if kernel:
            return kernel, "/%s (%s)" % (cfg, how)
        return None, "/%s: no menu entry %r with a linux line" % (cfg, wanted)
    return _bls_default(root, env.get("saved_entry"))


def _bls_default(root, saved):
    """Boot Loader Spec: the saved entry, else the newest entry (grub2's blscfg sorts by version, newest first)."""
    directory = host_path(root, "boot/loader/entries")
    entries = [name[:-5] for name in listdir(directory) if name.endswith(".conf")]
    if not entries:
        return None, "no boot loader configuration (grub.cfg or /boot/loader/entries) was found"
    chosen = saved if saved in entries else sorted(entries, key=_version_key)[-1]
    for line in (_read(root, "boot/loader/entries/%s.conf" % chosen) or "").splitlines():
        if line.strip().startswith("linux "):
            return _kernel_of(line.split()[1]), "/boot/loader/entries/%s.conf" % chosen
    return None, "/boot/loader/entries/%s.conf has no linux line" % chosen


def bls_entry_id(root, kernel):
    """The id of ``kernel``'s Boot Loader Spec entry (its file name without .conf, what grubby and grub2-set-default
    name it by): the entry whose linux line is the kernel's image; None where it has none."""
    directory = host_path(root, "boot/loader/entries")
    for name in sorted(listdir(directory)):
        if not name.endswith(".conf"):
            continue
        for line in (_read(root, "boot/loader/entries/%s" % name) or "").splitlines():
            if line.strip().startswith("linux ") and _kernel_of(line.split()[1]) == kernel:
                return name[:-5]
    return None


def _version_key(name):
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _module_file(directory, module):
    for suffix in SUFFIXES:
        path = os.path.join(directory, module + ".ko" + suffix)
        if os.path.isfile(path):
            return path
    return None


def installed_module(root, kernel, module="amdgpu"):
    """The DKMS-installed module file of ``kernel``, or None."""
    for base in MODULE_DIRS:
        for sub in INSTALL_DIRS:
            found = _module_file(host_path(root, base, kernel, sub), module)
            if found:
                return found
    return None


def dkms_records(root="/", module="amdgpu"):
    """parse_dkms_status-shaped records of ``module`` from /var/lib/dkms (slash format, as dkms 3 prints)."""
    tree = host_path(root, "var/lib/dkms", module)
    links = {}
    for name in listdir(tree):
        if name.startswith("kernel-"):
            try:
                links[name] = os.path.normpath(os.path.join(tree, os.readlink(os.path.join(tree, name))))
            except (IOError, OSError):
                pass
    records = []
    for version in listdir(tree):
        vdir = os.path.join(tree, version)
        if version.startswith("kernel-") or not os.path.isdir(vdir):
            continue
        built = False
        for kernel in listdir(vdir):
            for arch in listdir(os.path.join(vdir, kernel)):
                built_file = _module_file(os.path.join(vdir, kernel, arch, "module"), module)
                if not built_file:
                    continue
                built = True
                linked = links.get("kernel-%s-%s" % (kernel, arch)) == os.path.join(vdir, kernel, arch)
                record = _record(root, module, version, kernel, arch, built_file, linked)
                if record["state"] == "installed" and listdir(os.path.join(tree, "original_module", kernel, arch)):
                    record["notes"].insert(0, "original_module exists")  # dkms kept the kernel's own module
                records.append(record)
        if not built and os.path.exists(os.path.join(vdir, "source")):
            records.append({"module": module, "version": version, "kernel": None, "arch": None, "state": "added",
                            "notes": []})
    return records


def _record(root, module, version, kernel, arch, built_file, linked):
    installed = installed_module(root, kernel, module)
    notes = []
    if linked and not installed:
        notes.append("Built modules are missing in the kernel modules folder")
    elif installed and not _same(built_file, installed):
        notes.append("Differences between built and installed modules")
    state = "installed" if linked or installed else "built"
    return {"module": module, "version": version, "kernel": kernel, "arch": arch, "state": state, "notes": notes}


def _same(a, b):
    """Same size, head and tail (the signature trailer differs per build): a nightly drift reads no whole module."""
    try:
        if os.path.getsize(a) != os.path.getsize(b):
            return False
        return file_ends(a) == file_ends(b)
    except (IOError, OSError):
        return False


def file_ends(path, size=65536):
    with open(path, "rb") as handle:
        head = handle.read(size)
        handle.seek(max(0, os.path.getsize(path) - size))
        return head, handle.read(size)


def config_files(root, dirs, pattern="*.conf"):
    """{path as on the host: text} of the files matching ``pattern`` in ``dirs``."""
    files = {}
    for directory in dirs:
        for name in listdir(host_path(root, directory)):
            text = _read(root, "%s/%s" % (directory, name)) if fnmatch.fnmatch(name, pattern) else None
            if text is not None:
                files["%s/%s" % (directory.rstrip("/"), name)] = text
    return files


def read_bytes(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except (IOError, OSError):
        return None
