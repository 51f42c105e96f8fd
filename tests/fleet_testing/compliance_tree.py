"""A host's files as a temp tree, and one compliance item evaluated against it (shared by the compliance tests)."""

import os

from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.core import HostView
from ansible_collections.rocm_fleet.core.plugins.module_utils.compliance.evaluate import evaluate_item


def write(root, path, data, mode=0o644):
    """Write text or bytes at ``path`` under ``root`` with ``mode`` (as os.chmod takes it), whatever the umask."""
    full = root / path.lstrip("/")
    full.parent.mkdir(parents=True, exist_ok=True)
    (full.write_bytes if isinstance(data, bytes) else full.write_text)(data)
    os.chmod(full, mode)
    return full


def check(root, kind, item_id="ROCM-TEST-001", **fields):
    """Evaluate one item of ``kind``; ``role``/``label``/``repair`` go on the item, everything else into ``expect``."""
    item = {"id": item_id, "kind": kind, "expect": fields}
    for key in ("role", "label", "repair"):
        if key in fields:
            item[key] = fields.pop(key)
    return evaluate_item(item, 0, HostView(str(root)))
