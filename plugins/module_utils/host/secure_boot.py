# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secure Boot and the DKMS module's signature: will the kernel load amdgpu-dkms?

Under Secure Boot the kernel loads a module only when it is signed by a key it
trusts; DKMS signs with a Machine Owner Key that must be enrolled (mokutil
--import, then a reboot). An unsigned or MOK-unenrolled amdgpu is refused:
``modprobe: ERROR: could not insert 'amdgpu': Key was rejected by service``.

* efivar_secure_boot(data, setup_mode): the state from the efivarfs file
  SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c (4 attribute bytes, then the
  value: 1 on, 0 off); Secure Boot is on only outside Setup Mode (as mokutil).
* parse_sb_state(text): the state from ``mokutil --sb-state`` (its own lines).
* parse_enrolled_keys(text): the keys of ``mokutil --list-enrolled``.
* module_signature(fields): signer, key id and hash of a parse_modinfo result
  (kmod: for PKCS#7 the signer is the issuer's CN and sig_key its serial number).
* parse_load_error(text): a refused load from modprobe/insmod output.
* dkms_module_trust(secure_boot, signature, keys): pass, fail or unknown.
* install_would_load(secure_boot, signing, cert_enrolled): before an install.

A state is {state, enforcing, reason}: state 'enabled', 'disabled',
'unsupported' (no Secure Boot variable: BIOS boot) or 'unknown'. Stdlib only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.status import FAIL, PASS, UNKNOWN

EFIVAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
_SB_LINES = {  # mokutil's own messages (src/mokutil.c)
    "secureboot enabled": ("enabled", True),
    "secureboot disabled": ("disabled", False),
    "this system doesn't support secure boot": ("unsupported", False),
    "efi variables are not supported on this system": ("unsupported", False),
}
_REFUSED = (
    ("Key was rejected by service", "the signature was rejected: unsigned, or its key is not enrolled"),
    ("Required key not available", "it is signed by a key the kernel does not trust"),
)
_HEX = re.compile(r"^[0-9a-f]+$")
_CN = re.compile(r"CN\s*=\s*([^,/\n]+)")


def _state(state, enforcing, reason):
    return {"state": state, "enforcing": enforcing, "reason": reason}


def _efivar_value(data):
    """The little-endian value after the 4 attribute bytes, or None when the size is not 1, 2 or 4."""
    if data is None:
        return None
    value = bytearray(data)[4:]
    if len(value) not in (1, 2, 4):
        return None
    return sum(byte << (8 * index) for index, byte in enumerate(value))


def efivar_secure_boot(data, setup_mode=None):
    """State from the SecureBoot efivarfs file's bytes (None: the file does not exist).

    ``setup_mode`` is the SetupMode file's bytes when read: in Setup Mode the
    firmware enforces nothing, whatever SecureBoot says.
    """
    if data is None:
        return _state("unsupported", False, "no SecureBoot EFI variable: not booted by UEFI with Secure Boot")
    value = _efivar_value(data)
    if value is None:
        return _state(
            UNKNOWN,
            None,
            "the SecureBoot variable has %d bytes, not 4 attribute bytes and a value" % len(bytearray(data)),
        )
    if setup_mode is not None and _efivar_value(setup_mode) == 1:
        return _state("disabled", False, "the firmware is in Setup Mode: Secure Boot enforces nothing")
    if value == 1:
        return _state("enabled", True, "Secure Boot is enabled (efivars SecureBoot=1)")
    if value == 0:
        return _state("disabled", False, "Secure Boot is disabled (efivars SecureBoot=0)")
    return _state(UNKNOWN, None, "the SecureBoot variable holds %d, neither 0 nor 1" % value)


def parse_sb_state(text):
    """``mokutil --sb-state`` -> state; 'validation is disabled in shim' means nothing is enforced."""
    found, notes = None, []
    for raw in (text or "").splitlines():
        line = raw.strip().lower()
        if line in _SB_LINES and found is None:
            found = _SB_LINES[line]
        elif line == "secureboot validation is disabled in shim" or line == "platform is in setup mode":
            notes.append(raw.strip())
    if found is None:
        return _state(UNKNOWN, None, "mokutil --sb-state printed no known state: %r" % ((text or "").strip()[:80],))
    state, enforcing = found
    if notes:
        enforcing = False
    return _state(state, enforcing, "; ".join(["mokutil: Secure Boot %s" % state] + notes))


def normalize_key_id(value):
    """'7B:2C:0A' or '00:7b2c0a' -> '7b2c0a' (hex, no separators, no leading zeros); None if not hex."""
    text = re.sub(r"[\s:]", "", str(value or "")).lower()
    if text.startswith("0x"):
        text = text[2:]
    if not text or not _HEX.match(text):
        return None
    return text.lstrip("0") or "0"


def _after(lines, index):
    """The value of a 'Label:' line, or of the next line when the label ends the line."""
    value = lines[index].partition(":")[2]
    if value.strip():
        return value.strip()
    return lines[index + 1].strip() if index + 1 < len(lines) else ""


def parse_enrolled_keys(text):
    """``mokutil --list-enrolled`` -> [{sha1, serial, skid, issuer, subject}]; [] when none could be read."""
    keys = []
    for block in re.split(r"^\[key \d+\]\s*$", text or "", flags=re.MULTILINE)[1:]:
        lines = block.splitlines()
        key = {"sha1": None, "serial": None, "skid": None, "issuer": None, "subject": None}
        for index, raw in enumerate(lines):
            line = raw.strip()
            if line.startswith("SHA1 Fingerprint:"):
                key["sha1"] = normalize_key_id(_after(lines, index))
            elif line.startswith("Serial Number:"):
                value = _after(lines, index)
                paren = re.search(r"\(0x([0-9a-fA-F]+)\)", value)
                key["serial"] = normalize_key_id(paren.group(1) if paren else value)
            elif line.startswith("X509v3 Subject Key Identifier"):
                key["skid"] = normalize_key_id(_after(lines, index))
            elif line.startswith(("Issuer:", "Subject:")):
                cn = _CN.search(line)
                key["issuer" if line.startswith("Issuer:") else "subject"] = cn.group(1).strip() if cn else None
        keys.append(key)
    return keys


def module_signature(fields):
    """{signed, signer, key, hashalgo, id_type} from parse_modinfo fields.

    signed is False only for a whole modinfo (its filename and vermagic lines are
    there) with no signature field; a filtered one (``modinfo | grep``) gives None.
    """
    first = {name: (fields.get(name) or [None])[0] for name in ("signer", "sig_key", "sig_hashalgo", "sig_id")}
    signed = bool(first["signer"] or first["sig_key"] or fields.get("signature")) or None
    if signed is None and fields.get("filename") and fields.get("vermagic"):
        signed = False
    return {
        "signed": signed,
        "signer": first["signer"],
        "key": normalize_key_id(first["sig_key"]),
        "hashalgo": first["sig_hashalgo"],
        "id_type": first["sig_id"],
    }


def parse_load_error(text):
    """modprobe/insmod output -> {refused, module, reason}: refused True when a signature check stopped the load."""
    module = re.search(r"could not insert '([^']+)'", text or "")
    for message, why in _REFUSED:
        if message.lower() in (text or "").lower():
            name = module.group(1) if module else "the module"
            return {
                "refused": True,
                "module": module.group(1) if module else None,
                "reason": "%s was refused (%s): %s" % (name, message, why),
            }
    return {
        "refused": False,
        "module": module.group(1) if module else None,
        "reason": "no signature refusal in the output",
    }


def key_enrolled(signature, keys):
    """The enrolled key whose serial or subject key id is the signature's key id, or None."""
    wanted = signature.get("key")
    for key in keys or []:
        if wanted and wanted in (key.get("serial"), key.get("skid")):
            return key
    return None


def dkms_module_trust(secure_boot, signature, keys, module="amdgpu"):
    """{state, reason}: will Secure Boot let the DKMS ``module`` load?

    ``secure_boot`` is a state above; ``signature`` module_signature of the DKMS
    module file (None: not read); ``keys`` the enrolled MOKs (None: not read).
    Secure Boot off: pass. On: an unsigned module or one whose key is not
    enrolled fails; what was not read is unknown.
    """
    enforcing = (secure_boot or {}).get("enforcing")
    if enforcing is None:
        return {"state": UNKNOWN, "reason": "Secure Boot state unknown: %s" % (secure_boot or {}).get("reason")}
    if not enforcing:
        return {"state": PASS, "reason": "Secure Boot does not enforce signatures (%s)" % secure_boot["state"]}
    if signature is None:
        return {"state": UNKNOWN, "reason": "Secure Boot is on and the %s module's signature was not read" % module}
    if signature["signed"] is None:
        return {
            "state": UNKNOWN,
            "reason": "the %s module's modinfo is incomplete: whether it is signed is unknown" % module,
        }
    if not signature["signed"]:
        return {
            "state": FAIL,
            "reason": "Secure Boot is on and the DKMS %s module is unsigned: the kernel will refuse it" % module,
        }
    if keys is None:
        return {"state": UNKNOWN, "reason": "Secure Boot is on and the enrolled keys were not read"}
    match = key_enrolled(signature, keys)
    if match:
        return {"state": PASS, "reason": "%s is signed by %s, an enrolled key" % (module, signature["signer"])}
    return {
        "state": FAIL,
        "reason": "Secure Boot is on and %s is signed by %s (key %s), which is not enrolled: "
        "the kernel will refuse it" % (module, signature["signer"], signature["key"]),
    }


def install_would_load(secure_boot, signing, cert_enrolled):
    """{state, reason} before an amdgpu-dkms install: will the module it builds load?

    ``signing`` is the DKMS signing set-up ({key, certificate} that exist, as
    parse_dkms_install reports them; empty: DKMS signs nothing); ``cert_enrolled``
    whether that certificate is an enrolled MOK (None: not known).
    """
    enforcing = (secure_boot or {}).get("enforcing")
    if enforcing is None:
        return {"state": UNKNOWN, "reason": "Secure Boot state unknown: %s" % (secure_boot or {}).get("reason")}
    if not enforcing:
        return {"state": PASS, "reason": "Secure Boot does not enforce signatures"}
    if not (signing or {}).get("key") or not (signing or {}).get("certificate"):
        return {"state": FAIL, "reason": "Secure Boot is on and DKMS has no signing key: the module would be refused"}
    if cert_enrolled is None:
        return {
            "state": UNKNOWN,
            "reason": "Secure Boot is on; whether %s is enrolled is not known" % signing["certificate"],
        }
    if not cert_enrolled:
        return {
            "state": FAIL,
            "reason": "Secure Boot is on and %s is not an enrolled MOK: enroll it "
            "(mokutil --import, then reboot) before the install" % signing["certificate"],
        }
    return {"state": PASS, "reason": "DKMS signs with %s, an enrolled MOK" % signing["certificate"]}
