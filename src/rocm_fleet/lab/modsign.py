"""Kernel module signatures as scripts/sign-file appends them, and the check the kernel makes.

A signed module is ``<module><PKCS#7 DER><struct module_signature>~Module signature appended~\\n``
(include/linux/module_signature.h: u8 algo, hash, id_type (2 = PKEY_ID_PKCS7), signer_len,
key_id_len, pad[3], __be32 sig_len). The PKCS#7 is detached, without signed attributes or
certificates (sign-file: CMS_NOATTR | CMS_NOCERTS | CMS_BINARY), so the kernel finds the key in
its keyrings: with Secure Boot on, the built-in and platform keys plus shim's MOK list. A module
without a signature, or one no trusted key made, fails with EKEYREJECTED: modprobe prints
"Key was rejected by service".

DKMS 3 signs with /var/lib/dkms/mok.key and mok.pub (a DER certificate), which it generates
with openssl when they are missing; the lab makes them the same way.
"""

from __future__ import annotations

import struct
import subprocess
import tempfile
from pathlib import Path

MAGIC = b"~Module signature appended~\n"
PKEY_ID_PKCS7 = 2
SIGNATURE_INFO = struct.Struct(">BBBBB3xI")
DKMS_KEY = "var/lib/dkms/mok.key"
DKMS_CERTIFICATE = "var/lib/dkms/mok.pub"
KEY_REJECTED = "modprobe: ERROR: could not insert 'amdgpu': Key was rejected by service"


def split_signature(data: bytes) -> tuple[bytes, bytes | None]:
    """(module without its signature, PKCS#7 DER or None when unsigned)."""
    if not data.endswith(MAGIC) or len(data) < len(MAGIC) + SIGNATURE_INFO.size:
        return data, None
    info_start = len(data) - len(MAGIC) - SIGNATURE_INFO.size
    *_, id_type, _signer, _key_id, sig_len = SIGNATURE_INFO.unpack(data[info_start : info_start + SIGNATURE_INFO.size])
    if id_type != PKEY_ID_PKCS7 or sig_len > info_start:
        return data, None
    return data[: info_start - sig_len], data[info_start - sig_len : info_start]


def generate_dkms_key(root: Path) -> bool:
    """Create the DKMS signing key pair as dkms 3 does; False when it already exists."""
    key, certificate = root / DKMS_KEY, root / DKMS_CERTIFICATE
    if key.exists() and certificate.exists():
        return False
    key.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["openssl", "req", "-new", "-x509", "-nodes", "-days", "36500", "-subj", "/CN=DKMS module signing key",
         "-newkey", "rsa:2048", "-keyout", str(key), "-outform", "DER", "-out", str(certificate)],
        check=True, capture_output=True,
    )  # fmt: skip
    key.chmod(0o600)
    return True


def sign(data: bytes, key: Path, certificate_der: Path) -> bytes:
    """The module with a fresh signature (an old one is replaced)."""
    payload, _ = split_signature(data)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "module").write_bytes(payload)
        _openssl("x509", "-inform", "DER", "-in", str(certificate_der), "-out", str(work / "cert.pem"))
        _openssl(
            "cms",
            "-sign",
            "-binary",
            "-noattr",
            "-nocerts",
            "-nosmimecap",
            "-md",
            "sha512",
            "-outform",
            "DER",
            "-in",
            str(work / "module"),
            "-signer",
            str(work / "cert.pem"),
            "-inkey",
            str(key),
            "-out",
            str(work / "sig"),
        )
        pkcs7 = (work / "sig").read_bytes()
    return payload + pkcs7 + SIGNATURE_INFO.pack(0, 0, PKEY_ID_PKCS7, 0, 0, len(pkcs7)) + MAGIC


def signed_by_any(data: bytes, certificates_der: list[bytes]) -> bool:
    """Whether one of the certificates made the module's signature (what the kernel's keyring check decides)."""
    payload, pkcs7 = split_signature(data)
    if pkcs7 is None:
        return False
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "module").write_bytes(payload)
        (work / "sig").write_bytes(pkcs7)
        for number, der in enumerate(certificates_der):
            (work / f"{number}.der").write_bytes(der)
            pem = work / f"{number}.pem"
            if _openssl("x509", "-inform", "DER", "-in", str(work / f"{number}.der"), "-out", str(pem), check=False):
                continue
            verify = [
                "cms",
                "-verify",
                "-binary",
                "-inform",
                "DER",
                "-in",
                str(work / "sig"),
                "-content",
                str(work / "module"),
                "-certfile",
                str(pem),
                "-nointern",
                "-noverify",
                "-out",
                "/dev/null",
            ]
            if _openssl(*verify, check=False) == 0:
                return True
    return False


def _openssl(*arguments: str, check: bool = True) -> int:
    result = subprocess.run(["openssl", *arguments], capture_output=True)
    if check and result.returncode:
        raise RuntimeError(f"openssl {arguments[0]}: {result.stderr.decode(errors='replace').strip()}")
    return result.returncode
