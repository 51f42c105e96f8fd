"""The tool runner: raw bytes a tool prints become text the parsers can read."""

import sys

from ansible_collections.rocm_fleet.core.plugins.module_utils.common.runner import make_runner
from ansible_collections.rocm_fleet.core.plugins.module_utils.gpu.model import clean_lines

# A rocm-smi banner line of a real capture, as a C tool prints it in 8-bit CSI colour (raw
# 0x9b bytes, not UTF-8) and with the reset `tput sgr0` prints.
BANNER = "============================ ROCm System Management Interface ============================"


def printing_tool(tmp_path, data):
    script = tmp_path / "tool"
    script.write_text("#!%s\nimport sys\nsys.stdout.buffer.write(%r)\n" % (sys.executable, data))
    script.chmod(0o755)
    return make_runner(str(script), timeout=30)


def test_raw_8bit_csi_bytes_are_stripped_not_replaced(tmp_path):
    data = b"\x9b1;32m" + BANNER.encode() + b"\x9b0m\x1b(B\x1b[m\n"
    rc, stdout, _ = printing_tool(tmp_path, data)([])
    assert rc == 0 and clean_lines(stdout) == [BANNER]


def test_utf8_is_kept_and_other_bad_bytes_become_replacement_characters(tmp_path):
    _, stdout, _ = printing_tool(tmp_path, "47.0\u00b0C ".encode() + b"\xff\n")([])
    assert stdout == "47.0\u00b0C \ufffd\n"
