# -*- coding: utf-8 -*-
# Copyright: rocm-fleet contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fingerprints of the primary keys in an OpenPGP keyring, binary or ASCII-armored (RFC 4880, RFC 9580).

apt trusts whatever keys the Signed-By file holds, so a compliance check must
read that file itself rather than ask gpg (which may be absent on the host).

* v4 fingerprint: SHA-1 over 0x99, a 2-octet body length and the public key packet body.
* v5 (LibrePGP): SHA-256 over 0x9A, a 4-octet length and the body.
* v6 (RFC 9580): SHA-256 over 0x9B, a 4-octet length and the body.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import hashlib
import re
import struct

PUBLIC_KEY_TAG = 6
ARMOR_BEGIN = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
_ARMOR_END = re.compile(r"^-----END PGP PUBLIC KEY BLOCK-----\s*$")
_FINGERPRINT_PREFIX = {
    4: (b"\x99", ">H", hashlib.sha1),
    5: (b"\x9a", ">I", hashlib.sha256),
    6: (b"\x9b", ">I", hashlib.sha256),
}
CRC24_INIT = 0xB704CE
CRC24_POLY = 0x1864CFB


class OpenPgpError(ValueError):
    """Data that is not an OpenPGP keyring; the message says where it stopped making sense."""


def normalize_fingerprint(text):
    """'E8C5 8744 ...', '0xE8C58744...' -> upper-case hex without blanks."""
    value = re.sub(r"\s+", "", str(text or "")).upper()
    return value[2:] if value.startswith("0X") else value


def keyring_fingerprints(data):
    """Fingerprints (upper-case hex) of every primary key in ``data`` (bytes), in file order."""
    if data.lstrip()[:len(ARMOR_BEGIN)] == ARMOR_BEGIN.encode("ascii"):
        data = dearmor_all(data.decode("ascii", "replace"))
    fingerprints = []
    for tag, body in iter_packets(data):
        if tag == PUBLIC_KEY_TAG:
            fingerprints.append(fingerprint_of_key_body(body))
    if not fingerprints:
        raise OpenPgpError("no public key packet found")
    return fingerprints


def fingerprint_of_key_body(body):
    if not body:
        raise OpenPgpError("empty public key packet")
    version = bytearray(body)[0]
    if version not in _FINGERPRINT_PREFIX:
        raise OpenPgpError("public key packet version %d has no supported fingerprint (v4, v5, v6 do)" % version)
    prefix, length_format, digest = _FINGERPRINT_PREFIX[version]
    return digest(prefix + struct.pack(length_format, len(body)) + body).hexdigest().upper()


def iter_packets(data):
    """Yield ``(tag, body)`` for each packet, in both the old and the new length formats."""
    data = bytearray(data)
    offset = 0
    while offset < len(data):
        header = data[offset]
        if not header & 0x80:
            raise OpenPgpError("octet %d is not a packet header (0x%02x)" % (offset, header))
        if header & 0x40:
            tag = header & 0x3F
            body, offset = _new_format_body(data, offset + 1)
        else:
            tag = (header >> 2) & 0x0F
            body, offset = _old_format_body(data, offset + 1, header & 0x03)
        yield tag, bytes(body)


def _take(data, offset, length):
    if length < 0 or offset + length > len(data):
        raise OpenPgpError("packet at octet %d runs past the end of the data" % offset)
    return data[offset:offset + length], offset + length


def _old_format_body(data, offset, length_type):
    if length_type == 3:  # indeterminate: the packet runs to the end
        return data[offset:], len(data)
    size = (1, 2, 4)[length_type]
    raw, offset = _take(data, offset, size)
    length = 0
    for octet in raw:
        length = (length << 8) | octet
    return _take(data, offset, length)


def _new_format_body(data, offset):
    body = bytearray()
    while True:
        raw, offset = _take(data, offset, 1)
        first = raw[0]
        if first < 192:
            length = first
        elif first < 224:
            raw, offset = _take(data, offset, 1)
            length = ((first - 192) << 8) + raw[0] + 192
        elif first == 255:
            raw, offset = _take(data, offset, 4)
            length = struct.unpack(">I", bytes(raw))[0]
        else:  # partial body length: this chunk, then another length follows
            chunk, offset = _take(data, offset, 1 << (first & 0x1F))
            body.extend(chunk)
            continue
        chunk, offset = _take(data, offset, length)
        body.extend(chunk)
        return body, offset


def dearmor_all(text):
    """Binary content of every public key block in ``text``, concatenated: apt and gpg read them all, so a key
    in a second block is a key the file makes trusted."""
    lines = text.splitlines()
    starts = [index for index, line in enumerate(lines) if line.strip() == ARMOR_BEGIN]
    if not starts:
        raise OpenPgpError("no '%s' line" % ARMOR_BEGIN)
    return b"".join(_dearmor_block(lines, start) for start in starts)


def dearmor(text):
    """Binary content of the first public key block in ``text``; checks the CRC-24 when present."""
    lines = text.splitlines()
    try:
        start = [line.strip() for line in lines].index(ARMOR_BEGIN)
    except ValueError:
        raise OpenPgpError("no '%s' line" % ARMOR_BEGIN) from None
    return _dearmor_block(lines, start)


def _dearmor_block(lines, start):
    payload, checksum, in_headers = [], None, True
    for line in lines[start + 1:]:
        line = line.strip()
        if _ARMOR_END.match(line):
            break
        if in_headers:
            # A blank line ends the headers; a line without ':' means there were none.
            if not line or ":" not in line:
                in_headers = False
            if in_headers:
                continue
        if line.startswith("=") and len(line) == 5:
            checksum = line[1:]
        elif line:
            payload.append(line)
    else:
        raise OpenPgpError("armor has no END line")
    try:
        data = base64.b64decode("".join(payload), validate=True)
        expected = base64.b64decode(checksum, validate=True) if checksum else None
    except (binascii.Error, ValueError) as exc:
        raise OpenPgpError("armor is not valid base64: %s" % exc) from None
    if expected is not None and struct.pack(">I", crc24(data))[1:] != expected:
        raise OpenPgpError("armor checksum does not match its content")
    return data


def crc24(data):
    crc = CRC24_INIT
    for octet in bytearray(data):
        crc ^= octet << 16
        for _index in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= CRC24_POLY
    return crc & 0xFFFFFF
