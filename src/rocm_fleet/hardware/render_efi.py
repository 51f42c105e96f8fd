"""/sys/firmware/efi of a UEFI-booted server: the Secure Boot variables and shim's MOK list.

efivarfs shows each variable as one file named ``<Name>-<vendor GUID>``: 4 bytes of
attributes (little-endian u32), then the data (fs/efivarfs/file.c efivarfs_file_read).
SecureBoot and SetupMode are UEFI global variables of one byte each (1 enabled / setup
mode, 0 not); shim mirrors the MOK list to the runtime as MokListRT (shim mok.c,
SHIM_LOCK_GUID) and, since Linux 5.10, as the raw table /sys/firmware/efi/mok-variables/MokListRT
(drivers/firmware/efi/mokvar-table.c). The list is EFI_SIGNATURE_LISTs (UEFI spec 32.4.1):
SignatureType GUID, SignatureListSize, SignatureHeaderSize, SignatureSize (u32 LE), then
EFI_SIGNATURE_DATA entries (owner GUID + an X.509 certificate in DER). A BIOS boot has no
/sys/firmware/efi at all.
"""

from __future__ import annotations

import struct
import uuid

EFI_GLOBAL_VARIABLE = "8be4df61-93ca-11d2-aa0d-00e098032b8c"
SHIM_LOCK_GUID = "605dab50-e046-4300-abb6-3dd810dd8b23"
EFI_CERT_X509_GUID = "a5c059a1-94e4-4aa7-87b5-ab155c2bf072"
# EFI_VARIABLE_BOOTSERVICE_ACCESS | EFI_VARIABLE_RUNTIME_ACCESS: volatile variables the firmware/shim set each boot.
VOLATILE_RUNTIME = 0x00000006
EFIVARS = "firmware/efi/efivars"


def efi_variable(data, attributes=VOLATILE_RUNTIME):
    """An efivarfs file's content."""
    return struct.pack("<I", attributes) + data


def signature_list(certificates, owner=SHIM_LOCK_GUID):
    """One EFI_SIGNATURE_LIST of X.509 certificates per certificate (sizes differ, as mokutil writes them)."""
    blob = b""
    for der in certificates:
        entry = uuid.UUID(owner).bytes_le + der
        header = struct.pack("<III", 28 + len(entry), 0, len(entry))
        blob += uuid.UUID(EFI_CERT_X509_GUID).bytes_le + header + entry
    return blob


def parse_signature_list(blob):
    """The DER certificates of an EFI_SIGNATURE_LIST sequence (X.509 entries only)."""
    certificates, offset = [], 0
    while offset + 28 <= len(blob):
        kind = str(uuid.UUID(bytes_le=blob[offset : offset + 16]))
        list_size, header_size, entry_size = struct.unpack("<III", blob[offset + 16 : offset + 28])
        start = offset + 28 + header_size
        if kind == EFI_CERT_X509_GUID and entry_size > 16:
            for entry in range(start, offset + list_size, entry_size):
                certificates.append(blob[entry + 16 : entry + entry_size])
        offset += list_size or len(blob)
    return certificates


def render_efi(profile, write_bytes):
    """Write /sys/firmware/efi for a UEFI profile through ``write_bytes(relpath, data)``."""
    if profile.boot_firmware != "uefi":
        return
    write_bytes("firmware/efi/fw_platform_size", b"64\n")
    write_bytes("%s/SecureBoot-%s" % (EFIVARS, EFI_GLOBAL_VARIABLE), efi_variable(bytes([int(profile.secure_boot)])))
    # User mode (platform key enrolled): how a server leaves the factory, Secure Boot on or off.
    write_bytes("%s/SetupMode-%s" % (EFIVARS, EFI_GLOBAL_VARIABLE), efi_variable(b"\x00"))
    if profile.mok_certificates:
        mok = signature_list(profile.mok_certificates)
        write_bytes("%s/MokListRT-%s" % (EFIVARS, SHIM_LOCK_GUID), efi_variable(mok))
        write_bytes("firmware/efi/mok-variables/MokListRT", mok)
