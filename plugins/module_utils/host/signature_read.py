# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who signed a kernel module, and which keys the MOK list holds: a small DER reader, no openssl.

* module_signer(data): the PKCS#7 signer of a module file's bytes, as the kernel
  appends it (``~Module signature appended~\\n`` after struct module_signature,
  scripts/sign-file): ``{"signer": issuer CN, "sig_key": serial hex, ...}`` in
  the terms of tests/fleet_testing/amdgpu_runtime.py.parse_modinfo, so host.secure_boot's
  module_signature and key_enrolled judge it as they judge modinfo's output.
* certificate_key(der): ``{serial, issuer, subject, sha1, skid}`` of an X.509
  certificate, as host.secure_boot.parse_enrolled_keys gives a mokutil key.
* signature_list_keys(data): the X.509 certificates of an EFI_SIGNATURE_LIST
  sequence (MokListRT).

Only what the check needs is read; a malformed blob raises ValueError. Stdlib only; Python 2.7 compatible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import struct

MAGIC = b"~Module signature appended~\n"
PKEY_ID_PKCS7 = 2
# EFI_CERT_X509_GUID a5c059a1-94e4-4aa7-87b5-ab155c2bf072, as stored (the first three fields little-endian).
EFI_CERT_X509 = b"\xa1\x59\xc0\xa5\xe4\x94\xa7\x4a\x87\xb5\xab\x15\x5c\x2b\xf0\x72"
_CN = "2.5.4.3"
_SKID = "2.5.29.14"
_HASHES = {
    "1.3.14.3.2.26": "sha1",
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
    "2.16.840.1.101.3.4.2.4": "sha224",
}


def _tlv(data, offset):
    """(tag, start of the value, end of the value) of the DER element at ``offset``."""
    data = bytearray(data)
    if offset + 2 > len(data):
        raise ValueError("DER element past the end of the data")
    tag, length = data[offset], data[offset + 1]
    offset += 2
    if length & 0x80:
        count = length & 0x7F
        if not 0 < count <= 4 or offset + count > len(data):
            raise ValueError("DER length of %d bytes is not supported" % count)
        length = 0
        for byte in data[offset:offset + count]:
            length = (length << 8) | byte
        offset += count
    if offset + length > len(data):
        raise ValueError("DER element of %d bytes past the end of the data" % length)
    return tag, offset, offset + length


def _children(data, start, end):
    out = []
    while start < end:
        tag, value, stop = _tlv(data, start)
        out.append((tag, value, stop))
        start = stop
    return out


def _oid(raw):
    raw = bytearray(raw)
    if not raw:
        raise ValueError("empty OID")
    parts, value = [raw[0] // 40, raw[0] % 40], 0
    for byte in raw[1:]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            parts.append(value)
            value = 0
    return ".".join(str(part) for part in parts)


def _hex(raw):
    """An INTEGER's bytes as hex without leading zeros (as normalize_key_id writes a serial)."""
    return "".join("%02x" % byte for byte in bytearray(raw)).lstrip("0") or "0"


def _common_name(data, start, end):
    """The CN of a Name (SEQUENCE OF SET OF AttributeTypeAndValue), or None."""
    for _tag, set_start, set_end in _children(data, start, end):
        for _tag2, attr_start, attr_end in _children(data, set_start, set_end):
            parts = _children(data, attr_start, attr_end)
            if len(parts) == 2 and parts[0][0] == 0x06 and _oid(data[parts[0][1]:parts[0][2]]) == _CN:
                return bytes(data[parts[1][1]:parts[1][2]]).decode("utf-8", "replace")
    return None


def certificate_key(der):
    """{serial, issuer, subject, sha1, skid} of a DER X.509 certificate."""
    _tag, start, end = _tlv(der, 0)
    _tag, tbs_start, tbs_end = _children(der, start, end)[0]
    fields = _children(der, tbs_start, tbs_end)
    if fields and fields[0][0] == 0xA0:  # [0] version
        fields = fields[1:]
    if len(fields) < 5 or fields[0][0] != 0x02:
        raise ValueError("not an X.509 certificate (no serial number)")
    skid = None
    for tag, value, stop in fields[5:]:
        if tag == 0xA3:  # [3] extensions
            skid = _skid(der, value, stop)
    return {
        "serial": _hex(der[fields[0][1]:fields[0][2]]),
        "issuer": _common_name(der, fields[2][1], fields[2][2]),
        "subject": _common_name(der, fields[4][1], fields[4][2]),
        "sha1": hashlib.sha1(bytes(der[:end])).hexdigest(),
        "skid": skid,
    }


def _skid(der, start, end):
    _tag, seq_start, seq_end = _tlv(der, start)
    for _tag2, ext_start, ext_end in _children(der, seq_start, seq_end):
        parts = _children(der, ext_start, ext_end)
        if parts and _oid(der[parts[0][1]:parts[0][2]]) == _SKID:
            _t, inner, inner_end = _tlv(der, parts[-1][1])  # OCTET STRING holding an OCTET STRING
            return _hex(der[inner:inner_end])
    return None


def signature_list_keys(data):
    """The X.509 keys of an EFI_SIGNATURE_LIST sequence; other signature types (hashes) are passed over."""
    data, keys, offset = bytes(data), [], 0
    while offset + 28 <= len(data):
        kind = data[offset:offset + 16]
        list_size, header_size, sig_size = struct.unpack("<III", data[offset + 16:offset + 28])
        if list_size < 28 or offset + list_size > len(data) or sig_size <= 16:
            raise ValueError("EFI_SIGNATURE_LIST at byte %d has an impossible size" % offset)
        entry = offset + 28 + header_size
        while kind == EFI_CERT_X509 and entry + sig_size <= offset + list_size:
            keys.append(certificate_key(data[entry + 16:entry + sig_size]))  # after the 16-byte owner GUID
            entry += sig_size
        offset += list_size
    if offset != len(data):
        raise ValueError("%d bytes after the last EFI_SIGNATURE_LIST" % (len(data) - offset))
    return keys


def module_signer(data):
    """modinfo-like fields of a module's appended signature: {} when it has none; ValueError when unreadable."""
    data = bytes(data)
    if not data.endswith(MAGIC):
        return {}
    info_end = len(data) - len(MAGIC)
    if info_end < 12:
        raise ValueError("module signature trailer without its module_signature struct")
    _algo, _hash, id_type, _signer_len, _key_len, sig_len = struct.unpack(">BBBBB3xI", data[info_end - 12:info_end])
    if id_type != PKEY_ID_PKCS7:
        raise ValueError("module signature id_type %d is not PKCS#7" % id_type)
    blob = data[info_end - 12 - sig_len:info_end - 12]
    if len(blob) != sig_len:
        raise ValueError("module signature of %d bytes is longer than the file" % sig_len)
    issuer, serial, hash_oid = _pkcs7_signer(blob)
    return {"signer": [issuer or ""], "sig_key": [serial], "sig_hashalgo": [_HASHES.get(hash_oid, hash_oid)],
            "sig_id": ["PKCS#7"]}


def _pkcs7_signer(blob):
    """(issuer CN, serial hex, digest OID) of the first SignerInfo of a CMS SignedData ContentInfo."""
    _tag, start, end = _tlv(blob, 0)
    content = _children(blob, start, end)
    if len(content) < 2 or content[1][0] != 0xA0:
        raise ValueError("the module signature is not a PKCS#7 ContentInfo")
    _tag, sd_start, sd_end = _tlv(blob, content[1][1])
    signed = _children(blob, sd_start, sd_end)
    tag, set_start, set_end = signed[-1]
    if tag != 0x31:
        raise ValueError("PKCS#7 SignedData without signerInfos")
    _tag, si_start, si_end = _children(blob, set_start, set_end)[0]
    info = _children(blob, si_start, si_end)
    sid_tag, sid_start, sid_end = info[1]
    if sid_tag != 0x30:
        raise ValueError("the PKCS#7 signer is named by subject key id, not issuer and serial")
    name, serial = _children(blob, sid_start, sid_end)[:2]
    digest = _children(blob, info[2][1], info[2][2])[0]
    return _common_name(blob, name[1], name[2]), _hex(blob[serial[1]:serial[2]]), _oid(blob[digest[1]:digest[2]])
