"""Moved to :mod:`benchmarks.scripted_world` (the one scripted world, shipped with the package); this name
stays for tests written before the move. New tests import ``benchmarks.scripted_world``."""

from benchmarks.scripted_world import provider, respond

__all__ = ["provider", "respond"]
