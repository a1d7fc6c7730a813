"""Opening a run's page: whether it must be rebuilt, and a browser that may not exist."""

from __future__ import annotations

import logging
import webbrowser
from pathlib import Path

from benchmarks.run_folder.layout import MANIFEST_FILE, PAGE_FILE, RESULTS_FILE

__all__ = ["open_page", "page_is_current"]

log = logging.getLogger(__name__)


def page_is_current(run_dir: str | Path) -> bool:
    """True when ``run_dir`` holds a page written after its results and manifest last changed."""
    run_dir = Path(run_dir)
    page = run_dir / PAGE_FILE
    if not page.exists():
        return False
    sources = [run_dir / name for name in (RESULTS_FILE, MANIFEST_FILE) if (run_dir / name).exists()]
    return all(page.stat().st_mtime >= s.stat().st_mtime for s in sources)


def open_page(path: str | Path) -> bool:
    """Open ``path`` in the user's web browser; True when a browser took it.

    Never raises for lack of a browser (a server, a container, CI): :mod:`webbrowser` finding none, or
    failing to start one, returns False and the caller prints the path instead. ``$BROWSER`` is honoured
    as :mod:`webbrowser` does.
    """
    uri = Path(path).resolve().as_uri()
    try:
        return bool(webbrowser.open(uri))
    except (webbrowser.Error, OSError) as exc:
        log.info("no browser opened %s: %s", uri, exc)
        return False
