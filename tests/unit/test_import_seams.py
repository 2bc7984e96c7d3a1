"""The import seams of design.md, enforced over the source tree.

- aiokafka is imported only under pyconnect/kafka/, aiohttp only under pyconnect/rest/ and by the OAuth
  token POST of the Kafka clients (pyconnect/kafka/token_endpoint.py), pyspark only under spark_analytics/,
  uvloop only by pyconnect/event_loop.py, testcontainers and docker only by the test-cluster backends.
- pyconnect/protocol/, the MM2 record codecs (connectors/mirror/records.py, checkpoint_records.py) and the
  pure offset-translation core (connectors/mirror/offsets/translation.py, sync_writer.py,
  remote_cluster_utils.py) import only the standard library (and the codecs, and the replication policy).
- the sans-IO herder core (pyconnect/herder/core.py, requests.py, effects.py, backoff.py, signing.py) and
  the config topic's reader state (pyconnect/stores/config_state.py, config_events.py) import only the
  standard library and each other (and the protocol codecs and the error tree).
- the fetch-session core (pyconnect/kafka/fetch_session.py), the produce-frame encoder
  (pyconnect/kafka/produce_frames.py) and the fetch-response reader (pyconnect/kafka/fetch_answers.py)
  import only the standard library.
- the metrics package (registry, stats, exposition) imports only the standard library, itself, the
  protocol package (for the status states) and pyconnect.event_loop (to name the running loop).
- the example connector package (examples/*/src/) imports only the standard library, itself and what a
  connector author sees: pyconnect.api, pyconnect.config and pyconnect.errors.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT_PACKAGES = ("pyconnect", "connectors", "spark_analytics", "benchmarks")

OWNERS: dict[str, tuple[str, ...]] = {
    "aiokafka": ("pyconnect/kafka/",),
    "aiohttp": ("pyconnect/rest/", "pyconnect/kafka/token_endpoint.py"),
    "pyspark": ("spark_analytics/",),
    "uvloop": ("pyconnect/event_loop.py",),
    "testcontainers": ("pyconnect/testing/backends.py",),
    "docker": ("pyconnect/testing/backends.py",),
}
HERDER_CORE = (
    "pyconnect.protocol",
    "pyconnect.errors",
    "pyconnect.config.providers",
    "pyconnect.stores.config_events",
    "pyconnect.stores.config_state",
    "pyconnect.herder.effects",
    "pyconnect.herder.backoff",
    "pyconnect.herder.signing",
    "pyconnect.herder.core",
)
STDLIB_ONLY: dict[str, tuple[str, ...]] = {
    "pyconnect/protocol/": ("pyconnect.protocol",),
    "connectors/mirror/records.py": (),
    "connectors/mirror/checkpoint_records.py": ("connectors.mirror.records",),
    "connectors/mirror/offsets/translation.py": (
        "connectors.mirror.records",
        "connectors.mirror.checkpoint_records",
    ),
    "connectors/mirror/offsets/sync_writer.py": ("connectors.mirror.records",),
    "connectors/mirror/offsets/remote_cluster_utils.py": (
        "connectors.mirror.records",
        "connectors.mirror.checkpoint_records",
        "connectors.mirror.policy",
    ),
    "pyconnect/stores/config_events.py": ("pyconnect.protocol",),
    "pyconnect/stores/config_state.py": (
        "pyconnect.protocol",
        "pyconnect.errors",
        "pyconnect.stores.config_events",
    ),
    "pyconnect/herder/effects.py": ("pyconnect.protocol",),
    "pyconnect/herder/backoff.py": (),
    "pyconnect/herder/signing.py": ("pyconnect.errors",),
    "pyconnect/herder/core.py": HERDER_CORE,
    "pyconnect/herder/requests.py": HERDER_CORE,
    "pyconnect/metrics/": (
        "pyconnect.metrics",
        "pyconnect.protocol",
        "pyconnect.event_loop",
        "pyconnect.conditions",
    ),
    "pyconnect/conditions.py": (),
    "pyconnect/kafka/fetch_session.py": (),
    "pyconnect/kafka/produce_frames.py": (),
    "pyconnect/kafka/fetch_answers.py": (),
}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    module: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} imports {self.module}: {self.rule}"


def imported_modules(source: str, module_package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import; relative imports resolved against the package."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module_package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                found.append((node.lineno, f"{base}.{node.module}" if node.module else base))
            elif node.module:
                found.append((node.lineno, node.module))
    return found


def check_tree(root: Path) -> list[Violation]:
    violations = []
    for package in PRODUCT_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            dotted = rel[: -len(".py")].replace("/", ".")
            module_package = (
                dotted.rsplit(".", 1)[0] if not rel.endswith("__init__.py") else dotted[: -len(".__init__")]
            )
            for line, module in imported_modules(path.read_text(), module_package):
                top = module.split(".")[0]
                owners = OWNERS.get(top)
                if owners and not any(rel.startswith(o) for o in owners):
                    violations.append(
                        Violation(rel, line, module, f"{top} belongs to {', '.join(owners)} only")
                    )
                for scope, allowed in STDLIB_ONLY.items():
                    if rel.startswith(scope) and top not in sys.stdlib_module_names and top != "__future__":
                        if not any(module == a or module.startswith(a + ".") for a in allowed):
                            violations.append(
                                Violation(rel, line, module, f"{scope} imports only the standard library")
                            )
    return violations


def test_source_tree_respects_the_seams() -> None:
    violations = check_tree(ROOT)
    assert not violations, "\n".join(map(str, violations))


def test_checker_flags_each_kind_of_violation(tmp_path: Path) -> None:
    files = {
        "pyconnect/herder/leader.py": "import aiokafka\nfrom aiohttp import web\n",
        "pyconnect/protocol/codec.py": "import msgspec\nfrom . import primitives\nfrom pyconnect.errors import X\n",
        "connectors/mirror/records.py": "from pyconnect.protocol import primitives\n",
        "spark_analytics/audit.py": "import pyspark.sql\n",
        "benchmarks/run.py": "from pyspark.sql import SparkSession\n",
        "pyconnect/kafka/log.py": "from aiokafka import AIOKafkaConsumer\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = {(v.path, v.module) for v in check_tree(tmp_path)}
    assert found == {
        ("pyconnect/herder/leader.py", "aiokafka"),
        ("pyconnect/herder/leader.py", "aiohttp"),
        ("pyconnect/protocol/codec.py", "msgspec"),
        ("pyconnect/protocol/codec.py", "pyconnect.errors"),
        ("connectors/mirror/records.py", "pyconnect.protocol"),
        ("benchmarks/run.py", "pyspark.sql"),
    }


AUTHOR_SURFACE = ("pyconnect.api", "pyconnect.config", "pyconnect.errors")


def author_surface_violations(root: Path) -> list[Violation]:
    """Imports of examples/*/src/<package>/ beyond the stdlib, the package itself and AUTHOR_SURFACE."""
    violations = []
    for path in sorted(root.glob("examples/*/src/*/**/*.py")):
        rel = path.relative_to(root).as_posix()
        own = rel.split("/")[3]
        for line, module in imported_modules(path.read_text(), own):
            top = module.split(".")[0]
            if top in sys.stdlib_module_names or top in ("__future__", own):
                continue
            if not any(module == a or module.startswith(a + ".") for a in AUTHOR_SURFACE):
                violations.append(Violation(rel, line, module, "an example imports only the author surface"))
    return violations


def test_the_example_connector_uses_only_the_author_surface(tmp_path: Path) -> None:
    assert list(ROOT.glob("examples/*/src/*/**/*.py")), "no example connector package found"
    violations = author_surface_violations(ROOT)
    assert not violations, "\n".join(map(str, violations))
    bad = tmp_path / "examples" / "x" / "src" / "pkg" / "mod.py"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "import json\nfrom pkg import y\nfrom pyconnect.api.sink import SinkTask\nimport pyconnect.worker\n"
    )
    assert [v.module for v in author_surface_violations(tmp_path)] == ["pyconnect.worker"]
