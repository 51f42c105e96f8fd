"""Installed kernels, the one a boot runs, module signatures and when a Secure Boot kernel refuses amdgpu."""

import struct
from pathlib import Path

from rocm_fleet.lab import kernels, modsign

RELEASE = kernels.machine_kernel()
DKMS = "6.16.13-2327507.24.04"


def install_dkms_stub(root: Path, kernel: str = RELEASE) -> Path:
    built = root / f"var/lib/dkms/amdgpu/{DKMS}/{kernel}/x86_64/module/amdgpu.ko"
    built.parent.mkdir(parents=True)
    built.write_text(f"version=6.16.13\nsrcversion=LABX\nvermagic={kernel} SMP mod_unload modversions\n")
    installed = root / f"usr/lib/modules/{kernel}/updates/dkms/amdgpu.ko"
    installed.parent.mkdir(parents=True)
    installed.write_bytes(built.read_bytes())
    return installed


def test_the_boot_runs_the_kernel_of_boot_image():
    assert kernels.booted_kernel("BOOT_IMAGE=/boot/vmlinuz-6.1.0-19-amd64 root=UUID=x ro") == "6.1.0-19-amd64"
    assert kernels.booted_kernel("root=/dev/sda1 ro") == RELEASE
    # GRUB's blscfg (RHEL family): the image on the /boot partition, named with GRUB's device.
    rhel = "5.14.0-570.17.1.el9_6.x86_64"
    assert kernels.booted_kernel(f"BOOT_IMAGE=(hd0,gpt2)/vmlinuz-{rhel} root=UUID=x ro rhgb quiet") == rhel
    assert kernels.next_kernel_release("6.1.0-18-amd64") == "6.1.0-19-amd64"
    assert kernels.next_kernel_release("6.18.44-fc-v657") == "6.19.0-1-amd64"


def test_a_new_kernel_without_amdgpu_has_no_module_to_load(tmp_path):
    kernels.install_kernel(tmp_path, "6.19.0-1-amd64", with_amdgpu=False)
    assert (tmp_path / "boot/vmlinuz-6.19.0-1-amd64").is_file()
    assert (tmp_path / "usr/lib/modules/6.19.0-1-amd64/modules.dep").is_file()
    refusal = kernels.amdgpu_refusal(tmp_path, "6.19.0-1-amd64", False, [])
    assert refusal == "modprobe: FATAL: Module amdgpu not found in directory /lib/modules/6.19.0-1-amd64"
    assert kernels.amdgpu_refusal(tmp_path, RELEASE, True, []) is None  # the machine's in-tree driver
    kernels.remove_kernel(tmp_path, "6.19.0-1-amd64")
    assert not (tmp_path / "boot/vmlinuz-6.19.0-1-amd64").exists()
    assert not (tmp_path / "usr/lib/modules/6.19.0-1-amd64").exists()


def test_with_amdgpu_dkms_builds_for_the_new_kernel_too(tmp_path):
    install_dkms_stub(tmp_path)
    kernels.install_kernel(tmp_path, "6.19.0-1-amd64", with_amdgpu=True)
    module = tmp_path / "usr/lib/modules/6.19.0-1-amd64/updates/dkms/amdgpu.ko"
    assert "vermagic=6.19.0-1-amd64 " in module.read_text()
    assert (tmp_path / f"var/lib/dkms/amdgpu/{DKMS}/6.19.0-1-amd64/x86_64/module/amdgpu.ko").is_file()
    assert kernels.amdgpu_refusal(tmp_path, "6.19.0-1-amd64", False, []) is None


def test_without_dkms_the_new_kernel_brings_its_in_tree_amdgpu(tmp_path):
    kernels.install_kernel(tmp_path, "6.19.0-1-amd64", with_amdgpu=True)
    assert (tmp_path / "usr/lib/modules/6.19.0-1-amd64/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko").is_file()
    assert kernels.amdgpu_refusal(tmp_path, "6.19.0-1-amd64", True, []) is None  # distribution-signed


def test_signature_trailer_is_what_sign_file_appends(tmp_path):
    module = install_dkms_stub(tmp_path)
    assert modsign.generate_dkms_key(tmp_path) is True
    assert modsign.generate_dkms_key(tmp_path) is False  # dkms keeps an existing key
    original = module.read_bytes()
    signed = modsign.sign(original, tmp_path / modsign.DKMS_KEY, tmp_path / modsign.DKMS_CERTIFICATE)
    assert signed.endswith(b"~Module signature appended~\n")
    algo, hash_, id_type, signer_len, key_id_len, sig_len = struct.unpack(">BBBBB3xI", signed[-40:-28])
    assert (algo, hash_, id_type, signer_len, key_id_len) == (0, 0, 2, 0, 0)
    payload, pkcs7 = modsign.split_signature(signed)
    assert payload == original and len(pkcs7) == sig_len and pkcs7[0] == 0x30  # DER SEQUENCE
    assert (
        modsign.split_signature(modsign.sign(signed, tmp_path / modsign.DKMS_KEY, tmp_path / modsign.DKMS_CERTIFICATE))[
            0
        ]
        == original
    )


def test_secure_boot_refuses_unsigned_and_untrusted_dkms_modules(tmp_path):
    module = install_dkms_stub(tmp_path)
    certificate = (
        lambda: (modsign.generate_dkms_key(tmp_path), (tmp_path / modsign.DKMS_CERTIFICATE).read_bytes())[1]
    )()
    assert kernels.amdgpu_refusal(tmp_path, RELEASE, False, []) is None  # Secure Boot off: anything loads
    assert kernels.amdgpu_refusal(tmp_path, RELEASE, True, [certificate]) == modsign.KEY_REJECTED  # unsigned
    module.write_bytes(
        modsign.sign(module.read_bytes(), tmp_path / modsign.DKMS_KEY, tmp_path / modsign.DKMS_CERTIFICATE)
    )
    assert kernels.amdgpu_refusal(tmp_path, RELEASE, True, []) == modsign.KEY_REJECTED  # key not enrolled
    assert kernels.amdgpu_refusal(tmp_path, RELEASE, True, [b"not a certificate", certificate]) is None
    assert modsign.KEY_REJECTED.endswith("Key was rejected by service")


def test_a_rhel_kernel_package_leaves_its_image_in_the_modules_directory_for_kernel_install(tmp_path):
    kernels.install_kernel(tmp_path, "6.19.0-1-amd64", with_amdgpu=False, boot_loader="bls")
    modules = tmp_path / "usr/lib/modules/6.19.0-1-amd64"
    assert {"vmlinuz", "System.map", "config"} <= {path.name for path in modules.iterdir()}
    assert not (tmp_path / "boot").exists()  # kernel-install's plugins put it there
    for name in ("vmlinuz", "initramfs", "System.map"):  # what kernel-install left in /boot
        (tmp_path / "boot").mkdir(exist_ok=True)
        (tmp_path / f"boot/{name}-6.19.0-1-amd64{'.img' if name == 'initramfs' else ''}").write_bytes(b"")
    kernels.remove_kernel(tmp_path, "6.19.0-1-amd64")
    assert not modules.exists() and not any((tmp_path / "boot").iterdir())
