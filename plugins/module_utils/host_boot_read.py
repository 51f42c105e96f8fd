# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what the kernel, driver and Secure Boot checks judge, from files under ``root``.

* installed_kernels(root): /boot/vmlinuz-<k> with a modules directory.
* default_kernel(root): (kernel, reason) the boot loader starts next: grub.cfg's ``set default`` (a number,
  a title or id, ``${saved_entry}`` from grubenv; grubenv ``next_entry`` wins), or Boot Loader Spec entries.
* dkms_records(root, module): the records ``host_dkms.parse_dkms_status`` gives, read from the DKMS tree
  as dkms status reads it (``<ver>/source``, ``<ver>/<k>/<arch>/module/``, the ``kernel-<k>-<arch>`` link of
  an install), so no ``dkms`` process runs.
* config_files(root, dirs, pattern): {path: text}; secure_boot(root); mok_keys(root); module_signature(path).

Stdlib only; Python 2.7 compatible; nothing here raises on a missing or odd file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import os
import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.host_health_read import listdir, read_text
from ansible_collections.rocm_fleet.core.plugins.module_utils.host_secure_boot import efivar_secure_boot
from ansible_collections.rocm_fleet.core.plugins.module_utils.host_signature_read import (
    certificate_key,
    module_signer,
    signature_list_keys,
)

MODULE_DIRS = ("usr/lib/modules", "lib/modules")
INSTALL_DIRS = ("updates/dkms", "updates", "extra")  # where dkms installs (Debian, older dkms, EL)
SUFFIXES = ("", ".xz", ".zst", ".gz")
EFIVARS = "sys/firmware/efi/efivars"
GLOBAL = "8be4df61-93ca-11d2-aa0d-00e098032b8c"  # EFI_GLOBAL_VARIABLE
SHIM = "605dab50-e046-4300-abb6-3dd810dd8b23"  # shim's vendor GUID
# DKMS's signing key and certificate: dkms 3 (its own), Ubuntu/Debian shim-signed (update-secureboot-policy).
DKMS_SIGNING = (("var/lib/dkms/mok.key", "var/lib/dkms/mok.pub"),
                ("var/lib/shim-signed/mok/MOK.priv", "var/lib/shim-signed/mok/MOK.der"))
DKMS_CERTS = tuple(cert for _key, cert in DKMS_SIGNING)
_ENTRY = re.compile(r"^\s*(menuentry|submenu)\s+(['\"])(.*?)\2(.*)\{\s*$")
_ENTRY_ID = re.compile(r"\$menuentry_id_option\s+'([^']+)'")
_LINUX = re.compile(r"^\s*(?:linux|linuxefi|linux16)\s+(\S+)")
_SET_DEFAULT = re.compile(r"^\s*set\s+default=[\"']?([^\"'\s]*)")


def _path(root, *parts):
    return os.path.join(root, *[part.lstrip("/") for part in parts])


def _read(root, path):
    return read_text(_path(root, path))[0]


def _kernel_of(image):
    name = os.path.basename(image or "")
    return name[len("vmlinuz-"):] if name.startswith("vmlinuz-") else None


def installed_kernels(root="/"):
    kernels = set()
    for name in listdir(_path(root, "boot")):
        kernel = _kernel_of(name)
        if kernel and any(os.path.isdir(_path(root, base, kernel)) for base in MODULE_DIRS):
            kernels.add(kernel)
    return sorted(kernels)


def _grubenv(root):
    env = {}
    for line in (_read(root, "boot/grub/grubenv") or _read(root, "boot/grub2/grubenv") or "").splitlines():
        key, equals, value = line.partition("=")
        if equals and not key.startswith("#"):
            env[key.strip()] = value.strip()
    return env


def _grub_entries(text):
    """[(position "i" or "i>j", title, id, kernel)] of a grub.cfg's menu entries and submenus' entries."""
    entries, stack, counters, current = [], [], [0], None
    for line in text.splitlines():
        found = _ENTRY.match(line)
        if found:
            position = ">".join(str(n) for n in [s[0] for s in stack] + [counters[-1]])
            ident = _ENTRY_ID.search(found.group(4))
            if found.group(1) == "submenu":
                stack.append((counters[-1], found.group(3), ident.group(1) if ident else None))
                counters.append(0)
                continue
            current = [position, found.group(3), ident.group(1) if ident else None, None]
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
    for position, title, ident, kernel in entries:
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
        kernel = _pick(_grub_entries(text), wanted)
        if kernel:
            return kernel, "/%s (%s)" % (cfg, how)
        return None, "/%s: no menu entry %r with a linux line" % (cfg, wanted)
    return _bls_default(root, env.get("saved_entry"))


def _bls_default(root, saved):
    """Boot Loader Spec: the saved entry, else the newest entry (grub2's blscfg sorts by version, newest first)."""
    directory = _path(root, "boot/loader/entries")
    entries = [name[:-5] for name in listdir(directory) if name.endswith(".conf")]
    if not entries:
        return None, "no boot loader configuration (grub.cfg or /boot/loader/entries) was found"
    chosen = saved if saved in entries else sorted(entries, key=_version_key)[-1]
    for line in (_read(root, "boot/loader/entries/%s.conf" % chosen) or "").splitlines():
        if line.strip().startswith("linux "):
            return _kernel_of(line.split()[1]), "/boot/loader/entries/%s.conf" % chosen
    return None, "/boot/loader/entries/%s.conf has no linux line" % chosen


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
            found = _module_file(_path(root, base, kernel, sub), module)
            if found:
                return found
    return None


def dkms_records(root="/", module="amdgpu"):
    """parse_dkms_status-shaped records of ``module`` from /var/lib/dkms (slash format, as dkms 3 prints)."""
    tree = _path(root, "var/lib/dkms", module)
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
        return _ends(a) == _ends(b)
    except (IOError, OSError):
        return False


def _ends(path, size=65536):
    with open(path, "rb") as handle:
        head = handle.read(size)
        handle.seek(max(0, os.path.getsize(path) - size))
        return head, handle.read(size)


def config_files(root, dirs, pattern="*.conf"):
    """{path as on the host: text} of the files matching ``pattern`` in ``dirs``."""
    files = {}
    for directory in dirs:
        for name in listdir(_path(root, directory)):
            text = _read(root, "%s/%s" % (directory, name)) if fnmatch.fnmatch(name, pattern) else None
            if text is not None:
                files["%s/%s" % (directory.rstrip("/"), name)] = text
    return files


def _bytes(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def secure_boot(root="/"):
    """host_secure_boot's state from efivars (no /sys/firmware/efi: BIOS boot, nothing enforced)."""
    if not os.path.isdir(_path(root, "sys/firmware/efi")):
        return {"state": "unsupported", "enforcing": False, "reason": "no /sys/firmware/efi: BIOS boot"}
    data = _bytes(_path(root, EFIVARS, "SecureBoot-" + GLOBAL))
    return efivar_secure_boot(data, _bytes(_path(root, EFIVARS, "SetupMode-" + GLOBAL)))


def mok_keys(root="/"):
    """(keys, reason): the X.509 keys of MokListRT (mok-variables, else efivars), or (None, why not)."""
    plain, efivar = _path(root, "sys/firmware/efi/mok-variables/MokListRT"), _path(root, EFIVARS, "MokListRT-" + SHIM)
    if not os.path.exists(plain) and not os.path.exists(efivar):
        return [], "no MokListRT: no Machine Owner Key is enrolled"
    raw = _bytes(plain) if os.path.exists(plain) else _bytes(efivar)
    if raw is None:  # mok-variables is root's only: not read is not "none enrolled"
        return None, "MokListRT exists but could not be read (run as root)"
    raw = raw if os.path.exists(plain) else raw[4:]
    try:
        return signature_list_keys(raw), "MokListRT"
    except ValueError as error:
        return None, "MokListRT could not be read: %s" % error


def dkms_certificate(root="/"):
    """(key, path) of the DKMS signing certificate (DER, or PEM), or (None, None)."""
    for path in DKMS_CERTS:
        data = _bytes(_path(root, path))
        if data is None:
            continue
        if b"-----BEGIN" in data:
            import base64  # only for PEM
            body = b"".join(line for line in data.splitlines() if line and not line.startswith(b"-----"))
            data = base64.b64decode(body)
        try:
            return certificate_key(data), "/" + path
        except ValueError:
            return None, "/" + path
    return None, None


def module_signature(path):
    """(modinfo-like fields, None) of a module file's signature ({} unsigned), or (None, why it was not read)."""
    if path.endswith(".zst"):
        return None, "%s is zstd-compressed: Python's standard library cannot read it" % path
    try:
        # An uncompressed module's trailer is at its end: the last MiB is enough.
        data = _ends(path, 1 << 20)[1] if path.endswith(".ko") else _bytes(path)
    except (IOError, OSError):
        data = None
    if data is None:
        return None, "%s could not be read" % path
    try:
        if path.endswith(".xz"):
            import lzma  # Python 3 only: on 2.7 the signature is unknown
            data = lzma.decompress(data)
        elif path.endswith(".gz"):
            import zlib
            data = zlib.decompress(data, 31)
        fields = module_signer(data)
    except ImportError:
        return None, "%s is xz-compressed and this Python has no lzma" % path
    except Exception as error:  # a corrupt archive or signature is a reason, never a traceback
        return None, "%s: signature not readable (%s: %s)" % (path, type(error).__name__, error)
    fields.update(filename=[path], vermagic=["(read from the file)"])
    return fields, None


def dkms_signing(root="/"):
    """{key, certificate}: the first pair DKMS would sign with whose key exists (parse_dkms_install's terms)."""
    for key, cert in DKMS_SIGNING:
        if os.path.isfile(_path(root, key)):
            return {"key": "/" + key, "certificate": "/" + cert if os.path.isfile(_path(root, cert)) else None}
    return {"key": None, "certificate": None}
