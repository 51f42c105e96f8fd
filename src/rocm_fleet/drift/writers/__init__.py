"""Write one drift report in every form: JSON, JUnit XML, HTML and a Prometheus textfile."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from rocm_fleet.drift.model import DriftReport
from rocm_fleet.drift.writers.html import write_html
from rocm_fleet.drift.writers.json import write_json
from rocm_fleet.drift.writers.junit import write_junit
from rocm_fleet.drift.writers.prometheus import TEXTFILE_NAME, write_prometheus

# format -> (file name suffix after the basename, writer)
FORMATS: dict[str, tuple[str, Callable[[DriftReport, Path], Path]]] = {
    "json": (".json", write_json),
    "junit": (".junit.xml", write_junit),
    "html": (".html", write_html),
    "prometheus": (".prom", write_prometheus),
}


def write_all(
    report: DriftReport,
    out_dir: str | Path,
    basename: str = "drift",
    formats: Iterable[str] | None = None,
    textfile_dir: str | Path | None = None,
) -> dict[str, Path]:
    """Write ``report`` into ``out_dir`` as ``<basename><suffix>`` per format; return format -> path.

    With ``textfile_dir`` the Prometheus form also goes there as
    ``rocm_fleet_drift.prom`` (key "textfile"), where node_exporter reads it.
    """
    chosen = list(FORMATS) if formats is None else list(dict.fromkeys(formats))
    unknown = [name for name in chosen if name not in FORMATS]
    if unknown:
        raise ValueError(f"unknown report format {unknown[0]!r}; choose from {', '.join(FORMATS)}")
    out_dir = Path(out_dir)
    paths = {}
    for name in chosen:
        suffix, writer = FORMATS[name]
        paths[name] = writer(report, out_dir / f"{basename}{suffix}")
    if textfile_dir is not None:
        paths["textfile"] = write_prometheus(report, Path(textfile_dir) / TEXTFILE_NAME)
    return paths
