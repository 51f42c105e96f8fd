# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read Secure Boot, the enrolled MOKs, DKMS's signing key and a module's signer from files under ``root``.

* secure_boot(root): host.secure_boot's state from efivars.
* mok_keys(root): the X.509 keys of MokListRT; dkms_certificate(root), dkms_signing(root).
* module_signer_fields(path): the signer of a module file (.ko, .ko.xz, .ko.gz; .ko.zst: a reason).

Stdlib only; Python 2.7 compatible (no lzma there: an .xz module's signer is then unknown).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.host.boot_read import file_ends, host_path, read_bytes
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.secure_boot import efivar_secure_boot
from ansible_collections.rocm_fleet.core.plugins.module_utils.host.signature_read import (
    certificate_key,
    module_signer,
    signature_list_keys,
)

EFIVARS = "sys/firmware/efi/efivars"
GLOBAL = "8be4df61-93ca-11d2-aa0d-00e098032b8c"  # EFI_GLOBAL_VARIABLE
SHIM = "605dab50-e046-4300-abb6-3dd810dd8b23"  # shim's vendor GUID
# DKMS's signing key and certificate: dkms 3 (its own), Ubuntu/Debian shim-signed (update-secureboot-policy).
DKMS_SIGNING = (("var/lib/dkms/mok.key", "var/lib/dkms/mok.pub"),
                ("var/lib/shim-signed/mok/MOK.priv", "var/lib/shim-signed/mok/MOK.der"))
DKMS_CERTS = tuple(cert for _key, cert in DKMS_SIGNING)


def secure_boot(root="/"):
    """host.secure_boot's state from efivars (no /sys/firmware/efi: BIOS boot, nothing enforced)."""
    if not os.path.isdir(host_path(root, "sys/firmware/efi")):
        return {"state": "unsupported", "enforcing": False, "reason": "no /sys/firmware/efi: BIOS boot"}
    data = read_bytes(host_path(root, EFIVARS, "SecureBoot-" + GLOBAL))
    return efivar_secure_boot(data, read_bytes(host_path(root, EFIVARS, "SetupMode-" + GLOBAL)))


def mok_keys(root="/"):
    """(keys, reason): the X.509 keys of MokListRT (mok-variables, else efivars), or (None, why not)."""
    plain = host_path(root, "sys/firmware/efi/mok-variables/MokListRT")
    efivar = host_path(root, EFIVARS, "MokListRT-" + SHIM)
    if not os.path.exists(plain) and not os.path.exists(efivar):
        return [], "no MokListRT: no Machine Owner Key is enrolled"
    raw = read_bytes(plain) if os.path.exists(plain) else read_bytes(efivar)
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
        data = read_bytes(host_path(root, path))
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


def module_signer_fields(path):
    """(modinfo-like fields, None) of a module file's signature ({} unsigned), or (None, why it was not read)."""
    if path.endswith(".zst"):
        return None, "%s is zstd-compressed: Python's standard library cannot read it" % path
    try:
        # An uncompressed module's trailer is at its end: the last MiB is enough.
        data = file_ends(path, 1 << 20)[1] if path.endswith(".ko") else read_bytes(path)
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
        if os.path.isfile(host_path(root, key)):
            return {"key": "/" + key, "certificate": "/" + cert if os.path.isfile(host_path(root, cert)) else None}
    return {"key": None, "certificate": None}
