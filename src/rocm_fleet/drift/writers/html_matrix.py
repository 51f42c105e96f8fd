"""Inline SVG picture of a host's GPU link matrix: a coloured grid with labels and a legend.

Each cell also carries a letter, so the picture reads without colour vision,
and a <title> tooltip naming the pair and the link.
"""

from __future__ import annotations

from html import escape

from rocm_fleet.drift.model import GpuSummary

# link type -> (fill colour, text colour, letter in the cell, legend label)
LINK_STYLES = {
    "XGMI": ("#2f9e5b", "#ffffff", "X", "xGMI"),
    "PCIE": ("#e3a12f", "#1f1f1f", "P", "PCIe"),
    "UNKNOWN": ("#c8ccd2", "#1f1f1f", "?", "unknown"),
    "SELF": ("#50575f", "#ffffff", "", "self"),
}
LABEL_WIDTH = 58
HEADER_HEIGHT = 26
LEGEND_HEIGHT = 34


def _cell_size(count: int) -> int:
    # 8 GPUs draw at 34 px a cell; big partitioned nodes shrink down to 12 px.
    return max(12, min(34, 300 // max(count, 1)))


def _legend(y: int) -> list[str]:
    parts = []
    x = 0
    for fill, text_colour, letter, label in LINK_STYLES.values():
        parts.append(f'<rect x="{x}" y="{y}" width="16" height="16" rx="2" fill="{fill}"/>')
        if letter:
            parts.append(
                f'<text x="{x + 8}" y="{y + 12}" font-size="10" text-anchor="middle" '
                f'fill="{text_colour}">{letter}</text>'
            )
        parts.append(f'<text x="{x + 21}" y="{y + 12.5}" font-size="12" fill="#333">{escape(label)}</text>')
        x += 28 + 7 * len(label)
    return parts


def render_link_matrix(host: str, gpu: GpuSummary) -> str:
    """SVG for ``gpu.link_type``; the caller checks that the matrix exists."""
    matrix = gpu.link_type or []
    count = len(matrix)
    cell = _cell_size(count)
    show_letters = cell >= 18
    grid = cell * count
    width = max(LABEL_WIDTH + grid + 4, 330)
    height = HEADER_HEIGHT + grid + 12 + LEGEND_HEIGHT
    label_size = 11 if cell >= 18 else 8
    numa = gpu.numa_affinity or []
    parts = [
        f'<svg class="links" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="GPU link matrix of {escape(host)}">',
        f"<title>GPU link matrix of {escape(host)}</title>",
        '<g font-family="DejaVu Sans, Arial, sans-serif">',
    ]
    for index in range(count):
        centre = LABEL_WIDTH + index * cell + cell / 2
        parts.append(
            f'<text x="{centre}" y="{HEADER_HEIGHT - 8}" font-size="{label_size}" text-anchor="middle" '
            f'fill="#333">{index}</text>'
        )
        node = f" (NUMA {numa[index]})" if index < len(numa) and numa[index] is not None else ""
        parts.append(
            f'<text x="{LABEL_WIDTH - 6}" y="{HEADER_HEIGHT + index * cell + cell / 2 + 4}" '
            f'font-size="{label_size}" text-anchor="end" fill="#333">GPU{index}<title>GPU{index}'
            f"{escape(node)}</title></text>"
        )
    for row, links in enumerate(matrix):
        for column, link in enumerate(links):
            fill, text_colour, letter, label = LINK_STYLES.get(link, LINK_STYLES["UNKNOWN"])
            x = LABEL_WIDTH + column * cell
            y = HEADER_HEIGHT + row * cell
            parts.append(
                f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" rx="3" fill="{fill}">'
                f"<title>GPU{row} to GPU{column}: {escape(label)}</title></rect>"
            )
            if show_letters and letter:
                parts.append(
                    f'<text x="{x + (cell - 2) / 2}" y="{y + (cell - 2) / 2 + 4}" font-size="11" '
                    f'text-anchor="middle" fill="{text_colour}" pointer-events="none">{letter}</text>'
                )
    parts.extend(_legend(HEADER_HEIGHT + grid + 12))
    parts.append("</g></svg>")
    return "".join(parts)
