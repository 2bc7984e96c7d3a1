"""Plugins that exist only for tests, registered as entry points by ``entry_points/`` (see ``REGISTRY``).

``entry_points/`` holds the metadata of a distribution named ``pyconnect-test-plugins``: a worker
process with :data:`PYTHON_PATH` on its ``PYTHONPATH`` finds these plugins through
``importlib.metadata`` entry points exactly as it finds an installed distribution's, without
installing anything or adding test code to the project's own entry points.
"""

from __future__ import annotations

from pathlib import Path

REGISTRY = Path(__file__).parent / "entry_points"
ROOT = Path(__file__).resolve().parents[2]
PYTHON_PATH = (str(ROOT), str(REGISTRY))
"""What a worker process needs on its path to load the test plugins (the repository, the registry)."""
