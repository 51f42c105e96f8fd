"""AMD-named packages of one ROCm Core SDK 10.x release for one of AMD's directories (debian12, debian13).

TheRock's package shape (build_tools/packaging/linux/package.json @ 89553ce3), cut down to what the
lab needs (catalog.py lists every difference from AMD's packages):

    amdrocm-core-sdk<S>[-<gfx>] -> amdrocm-core-dev<S>[-<gfx>], amdrocm-developer-tools<S>, amdrocm-opencl<S>
    amdrocm-core-dev<S>[-<gfx>] -> amdrocm-core<S>[-<gfx>], amdrocm-runtime-dev<S>, amdrocm-llvm-dev<S>
    amdrocm<S>[-<gfx>]          -> amdrocm-core<S>[-<gfx>]
    amdrocm-core<S>[-<gfx>]     -> amdrocm-base<S>, -sysdeps, -llvm, -runtime, -amdsmi, amdrocm-blas<S>[-<gfx>]
                                   (its postinst/prerm: AMD's update-alternatives scripts)
    amdrocm-developer-tools<S>  -> amdrocm-base<S>, amdrocm-amdsmi<S>

<S> is the series (10.0); a name without -<gfx> is the every-target package. Dependencies are exact
(= <release>-<build>) as TheRock writes them. Every package refuses to unpack beside the legacy stream
(scripts.amdrocm_preinst, the lab's guard). Real software: amdrocm-base carries Debian's rocminfo
binaries, amdrocm-amdsmi Debian's amd-smi CLI and Python library laid out as AMD's relocatable tree
(<prefix>/libexec/amdsmi_cli, <prefix>/share/amd_smi, <prefix>/bin/amd-smi -> ../libexec/amdsmi_cli/
amdsmi_cli.py), loading Debian's libamd_smi.so.27 by its SONAME. amdrocm-runtime carries Debian's
libamdhip64 and libhsa-runtime64, amdrocm-amdsmi its libamd_smi, in <prefix>/lib as TheRock's ``lib``
component lays them out (libraries.py). Nothing carries rocm-smi.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import tempfile
from pathlib import Path

from rocm_fleet.lab.mirror import libraries, scripts
from rocm_fleet.lab.mirror.amd_packages import Tools
from rocm_fleet.lab.mirror.catalog import CORE_SDK_TARGETS, CoreSdkRelease
from rocm_fleet.lab.mirror.debs import DebSpec

HOMEPAGE = "https://github.com/ROCm/TheRock"
PLACEHOLDER = (
    "rocm-fleet lab placeholder of AMD's {name} {version} (ROCm Core SDK {release}).\n"
    "It carries the name, version and dependencies of AMD's package, not its software.\n"
)
AMD_SMI_CLI = "libexec/amdsmi_cli/amdsmi_cli.py"  # relative to the prefix
# Debian's packages of a generation the 10.x repositories never serve: no ROCm SMI in 10.x, and
# Debian's amd-smi (its /usr/bin/amd-smi) is replaced by amdrocm-amdsmi's tree.
NOT_SERVED = ("rocm-smi", "librocm-smi64-1", "amd-smi")


def amd_smi_files(deb: Path, cache: Path | None = None) -> tuple[dict[str, tuple[int, bytes]], str]:
    """Debian's amd-smi CLI and Python library, keyed by their path under an AMD prefix, and its Depends
    (kept as they are: libamd-smi27 (= 10.1-1), python3, ...). ``cache``: where the result of one .deb is kept."""
    kept = cache / "core-sdk" / f"{deb.name}.json" if cache else None
    if kept and kept.is_file():
        saved = json.loads(kept.read_text())
        files = {path: (mode, base64.b64decode(body)) for path, (mode, body) in saved["files"].items()}
        return files, saved["depends"]
    files, depends = _extract_amd_smi(deb)
    if kept:
        kept.parent.mkdir(parents=True, exist_ok=True)
        encoded = {path: [mode, base64.b64encode(body).decode()] for path, (mode, body) in files.items()}
        partial = kept.with_name(f".{kept.name}.{os.getpid()}")
        partial.write_text(json.dumps({"files": encoded, "depends": depends}))
        os.replace(partial, kept)
    return files, depends


def _extract_amd_smi(deb: Path) -> tuple[dict[str, tuple[int, bytes]], str]:
    depends = subprocess.run(
        ["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True, text=True, check=True
    ).stdout.strip()
    files: dict[str, tuple[int, bytes]] = {}
    with tempfile.TemporaryDirectory(prefix="amd-smi-") as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        root = Path(tmp)
        trees = (("usr/libexec/amdsmi_cli", "libexec/amdsmi_cli"), ("usr/share/amd_smi", "share/amd_smi"))
        for source, target in trees:
            for path in sorted((root / source).rglob("*")):
                if path.is_file() and not path.is_symlink() and "__pycache__" not in path.parts:
                    files[f"{target}/{path.relative_to(root / source).as_posix()}"] = (
                        path.stat().st_mode & 0o777,
                        path.read_bytes(),
                    )
    return files, depends


def release_packages(
    release: CoreSdkRelease, directory: str, tools: Tools, amd_smi: tuple[dict, str] | None
) -> list[DebSpec]:
    """Every package of ``release`` in AMD's ``directory``; ``amd_smi`` is amd_smi_files() of the
    generation's amd-smi, None where Debian packages none (then amdrocm-amdsmi is a placeholder)."""
    series, prefix, version = release.series, release.prefix, release.deb_version

    def name(base: str, target: str | None = None) -> str:
        return f"{base}{series}-{target}" if target else f"{base}{series}"

    def pin(base: str, target: str | None = None) -> str:
        return f"{name(base, target)} (= {version})"

    def spec(base: str, description: str, target: str | None = None, depends=(), placeholder: str | None = None):
        package = DebSpec(
            name=name(base, target),
            version=version,
            description=description,
            homepage=HOMEPAGE,
            depends=list(depends),
            scripts={"preinst": scripts.amdrocm_preinst(prefix)},
        )
        if placeholder:
            note = PLACEHOLDER.format(name=package.name, version=version, release=release.version)
            package.files[f"{prefix}/{placeholder}"] = note.encode()
        return package

    sysdeps = spec(
        "amdrocm-sysdeps",
        "ROCm platform system dependencies and required packages",
        placeholder=f"share/doc/{name('amdrocm-sysdeps')}/LAB-PLACEHOLDER",
    )
    llvm = spec(
        "amdrocm-llvm",
        "AMD LLVM compiler infrastructure for ROCm",
        depends=[pin("amdrocm-sysdeps")],
        placeholder="llvm/LAB-PLACEHOLDER",
    )
    llvm.files[f"{prefix}/amdgcn/bitcode/LAB-PLACEHOLDER"] = llvm.files[f"{prefix}/llvm/LAB-PLACEHOLDER"]
    runtime = spec(
        "amdrocm-runtime",
        "AMD HIP runtime libraries for running GPU programs on the ROCm platform",
        depends=[pin("amdrocm-sysdeps"), pin("amdrocm-llvm")],
    )
    for library in ("libamdhip64", "libhsa-runtime64"):
        libraries.carry(runtime, f"{prefix}/lib", tools.libraries[library])
    base = spec(
        "amdrocm-base",
        "ROCm essential utilities and system management components",
        depends=[pin("amdrocm-runtime"), pin("amdrocm-sysdeps"), tools.rocminfo_depends],
        placeholder="libexec/rocm-core/LAB-PLACEHOLDER",
    )
    # AMD's .info/version holds the release (10.0.0); the legacy rocm-core's holds <release>-<build>.
    base.files[f"{prefix}/.info/version"] = f"{release.version}\n".encode()
    # Every directory amdrocm-core's postinst links (/opt/rocm/include, ...) exists once ROCm Base is installed.
    note = base.files[f"{prefix}/libexec/rocm-core/LAB-PLACEHOLDER"]
    base.files[f"{prefix}/include/rocm-core/LAB-PLACEHOLDER"] = note
    for binary, content in tools.rocminfo_files.items():
        base.files[f"{prefix}/bin/{binary}"] = content
    amdsmi = spec(
        "amdrocm-amdsmi",
        "AMD GPU system management library for monitoring and control",
        depends=[pin("amdrocm-sysdeps")],
    )
    if amd_smi:
        files, depends = amd_smi
        amdsmi.depends.append(depends)
        for path, content in files.items():
            amdsmi.files[f"{prefix}/{path}"] = content
        amdsmi.symlinks[f"{prefix}/bin/amd-smi"] = f"../{AMD_SMI_CLI}"
        libraries.carry(amdsmi, f"{prefix}/lib", tools.libraries["libamd_smi"])
    else:
        note = PLACEHOLDER.format(name=amdsmi.name, version=version, release=release.version)
        note += f"Debian {tools.suite.suite} packages no amd-smi: this package carries no amd-smi binary.\n"
        amdsmi.files[f"{prefix}/share/doc/{amdsmi.name}/LAB-PLACEHOLDER"] = note.encode()
    opencl = spec(
        "amdrocm-opencl",
        "AMD ROCm OpenCL runtime implementation for GPU compute",
        depends=[pin("amdrocm-runtime"), pin("amdrocm-sysdeps")],
        placeholder=f"share/doc/{name('amdrocm-opencl')}/LAB-PLACEHOLDER",
    )
    runtime_dev = spec(
        "amdrocm-runtime-dev",
        "AMD HIP runtime development files",
        depends=[pin("amdrocm-runtime")],
        placeholder="include/hip/LAB-PLACEHOLDER",
    )
    llvm_dev = spec(
        "amdrocm-llvm-dev",
        "AMD LLVM compiler development files",
        depends=[pin("amdrocm-llvm")],
        placeholder="llvm/include/LAB-PLACEHOLDER",
    )
    tools_meta = spec(
        "amdrocm-developer-tools",
        "ROCm development tools metapackage with profiling and debugging",
        depends=[pin("amdrocm-base"), pin("amdrocm-amdsmi")],
    )
    specs = [sysdeps, llvm, runtime, base, amdsmi, opencl, runtime_dev, llvm_dev, tools_meta]
    for target in (*CORE_SDK_TARGETS, None):
        which = f"GPU target {target}" if target else "every GPU target"
        blas = spec(
            "amdrocm-blas",
            f"AMD BLAS library ({which})",
            target,
            depends=[pin("amdrocm-runtime")],
            placeholder=f"lib/rocblas/library/LAB-PLACEHOLDER-{target or 'all'}",
        )
        core = spec(
            "amdrocm-core",
            f"ROCm core runtime metapackage with essential GPU libraries ({which})",
            target,
            depends=[
                pin("amdrocm-base"),
                pin("amdrocm-sysdeps"),
                pin("amdrocm-llvm"),
                pin("amdrocm-runtime"),
                pin("amdrocm-blas", target),
                pin("amdrocm-amdsmi"),
            ],
        )
        core.scripts["postinst"] = scripts.amdrocm_core_postinst(release.version, prefix)
        core.scripts["prerm"] = scripts.amdrocm_core_prerm(release.version, prefix)
        rocm = spec(
            "amdrocm",
            f"ROCm Base: core runtime environment to run ROCm applications ({which})",
            target,
            depends=[pin("amdrocm-core", target)],
        )
        dev = spec(
            "amdrocm-core-dev",
            f"ROCm Developer Essentials: core development metapackage ({which})",
            target,
            depends=[pin("amdrocm-core", target), pin("amdrocm-runtime-dev"), pin("amdrocm-llvm-dev")],
        )
        sdk = spec(
            "amdrocm-core-sdk",
            f"ROCm Full Suite: the complete ROCm Core SDK ({which})",
            target,
            depends=[pin("amdrocm-core-dev", target), pin("amdrocm-developer-tools"), pin("amdrocm-opencl")],
        )
        specs += [blas, core, rocm, dev, sdk]
    return specs
