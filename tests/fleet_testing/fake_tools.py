"""Fake GPU tools on PATH that print real captures, for tests through the module's entry point."""

import json
import stat
import sys
from pathlib import Path

FAKE_TOOL = """#!{python}
import json, sys, time
spec = json.load(open({spec!r}))
answer = spec["responses"].get("\\x1f".join(sys.argv[1:]), spec["default"])
if answer.get("sleep"):
    time.sleep(answer["sleep"])
if answer.get("stdout_file"):
    sys.stdout.buffer.write(open(answer["stdout_file"], "rb").read())
sys.stderr.write(answer.get("stderr", ""))
sys.exit(answer.get("rc", 0))
"""
ARGPARSE_REJECT = {"rc": 2, "stderr": "usage: rocm-smi [-h]\nrocm-smi: error: unrecognized arguments: --json\n"}


def install_fake_tool(bin_dir: Path, name: str, responses: dict, default: dict | None = None) -> Path:
    """responses: {tuple(args): {"rc", "stdout_file", "stderr", "sleep"}}; unknown args get ``default``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    spec = bin_dir / (name + ".json")
    spec.write_text(json.dumps({
        "responses": {"\x1f".join(args): answer for args, answer in responses.items()},
        "default": default or {"rc": 1, "stderr": "unsupported\n"},
    }))
    tool = bin_dir / name
    tool.write_text(FAKE_TOOL.format(python=sys.executable, spec=str(spec)))
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return tool
