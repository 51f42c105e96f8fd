"""The drift HTML report in a real browser: it renders, draws every link matrix, and raises no page error.

Chromium is driven over the DevTools pipe (chromium_page.py): page exceptions,
console errors, failed loads and any request that leaves the file fail the
test. The screenshot is kept next to the report for a human to look at.
"""

from __future__ import annotations

import pytest
from fleet_testing.chromium_page import find_chromium, open_page, png_pixels
from fleet_testing.drift_samples import three_host_report

from rocm_fleet.drift.writers.html import write_html

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_chromium() is None, reason="chromium is not installed (apt-get install chromium)"),
]

PAGE_FACTS = {
    "title": "document.title",
    "svg_matrices": "document.querySelectorAll('svg.links').length",
    "matrix_cells": "Array.from(document.querySelectorAll('svg.links')).map(s => s.querySelectorAll('rect').length)",
    "host_sections": "document.querySelectorAll('section.host').length",
    "open_diffs": "Array.from(document.querySelectorAll('details[open] pre')).map(p => p.innerText).join('\\n')",
    "grid_rows": "document.querySelectorAll('table.grid tbody tr').length",
    "compliant_lines": "document.querySelectorAll('#compliant li').length",
    "page_width": "document.documentElement.scrollWidth",
}


def test_report_renders_in_headless_chromium(tmp_path):
    report = three_host_report()
    page = write_html(report, tmp_path / "drift.html")
    result = open_page(page, PAGE_FACTS, width=1400, height=1800)
    (tmp_path / "drift.png").write_bytes(result.screenshot)

    assert result.errors == []
    assert result.requests == [page.resolve().as_uri()]
    facts = result.values
    assert facts["title"] == "rocm-fleet drift: 1 drifted of 3 hosts"
    # The compliant host is one line of the compliant list, with no section, grid row or matrix of its own.
    assert facts["host_sections"] == 2
    assert facts["grid_rows"] == 2
    assert facts["compliant_lines"] == 1
    # The drifted 8-GPU host: 64 cells plus 4 legend swatches; the unreachable host has none.
    assert facts["svg_matrices"] == 1
    assert facts["matrix_cells"] == [68]
    assert "+Pin: release o=repo.radeon.com,n=6.3.1" in facts["open_diffs"]
    assert facts["page_width"] <= 1400, "the page must not scroll sideways at 1400 px"

    assert result.screenshot.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(result.screenshot) > 50_000
    width, step, rows = png_pixels(result.thumbnail)
    pixels = {row[x : x + 3] for row in rows for x in range(0, width * step, step)}
    assert len(pixels) > 200, "the screenshot is (nearly) one colour"
    green = {pixel for pixel in pixels if pixel[1] > 140 and pixel[0] < 90 and pixel[2] < 120}
    assert green, "no xGMI-green cells in the screenshot"
