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
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
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
    "pyconnect/herder/zombie_fencing.py": HERDER_CORE,
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


# -- aiokafka internals: reached only through pyconnect/kafka/aiokafka_seam.py -----------------------

AIOKAFKA_SEAM = "pyconnect/kafka/aiokafka_seam.py"
SEAM_ONLY_STRINGS = (
    "._sender",
    "._fetcher",
    "._client._",
    "_max_request_size",
    "_send_produce_req",
    "_proc_fetch_request",
)
"""Spelled (in code: not in comments or docstrings) only by the seam."""
_REFLECTION = ("getattr", "hasattr", "setattr", "delattr")
NOT_AIOKAFKA = {
    ("pyconnect/worker/submitted_records.py", "_in_flight"): "the records' owner's own in-flight count",
}
"""(module, name): a private name the seam reaches in aiokafka, read here on a pyconnect object."""


def seam_privates(root: Path) -> frozenset[str]:
    """The aiokafka private names the seam reaches: every ``_name`` (not dunder) it reads, writes or
    passes to ``getattr``/``setattr`` on an object other than its own ``self``."""
    names = set()
    for node in ast.walk(ast.parse((root / AIOKAFKA_SEAM).read_text())):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                names.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _REFLECTION:
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and _private(node.args[1].value):
                names.add(str(node.args[1].value))
    return frozenset(names)


def _private(name: object) -> bool:
    return isinstance(name, str) and name.startswith("_") and not name.startswith("__")


def _code_text(source: str) -> str:
    """``source`` without comments and docstrings, its tokens joined by spaces (none around a dot), with ``self._``
    and ``cls._`` (a pyconnect object's own attributes) written ``self_``/``cls_``."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add((first.lineno, first.col_offset))
    kept = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT or (token.type == tokenize.STRING and token.start in docstrings):
            continue
        kept.append(token.string)
    return re.sub(r"\b(self|cls)\._", r"\1_", " ".join(kept).replace(" . ", "."))


def aiokafka_internal_violations(root: Path, privates: frozenset[str]) -> list[str]:
    """Where a module of pyconnect/ other than the seam reaches aiokafka internals: reads or writes one
    of ``privates`` on anything but its own ``self``/``cls`` (or names it to getattr and kin), assigns
    to an attribute of a name imported from aiokafka, or spells one of SEAM_ONLY_STRINGS in code."""
    found = []
    for path in sorted((root / "pyconnect").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == AIOKAFKA_SEAM:
            continue
        source = path.read_text()
        tree = ast.parse(source)
        from_aiokafka = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "aiokafka":
                from_aiokafka |= {alias.asname or alias.name for alias in node.names}
            elif isinstance(node, ast.Import):
                from_aiokafka |= {
                    (alias.asname or alias.name).split(".")[0]
                    for alias in node.names
                    if alias.name.split(".")[0] == "aiokafka"
                }
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                owner = node.value
                own = isinstance(owner, ast.Name) and owner.id in ("self", "cls")
                if node.attr in privates and not own and (rel, node.attr) not in NOT_AIOKAFKA:
                    found.append(f"{rel}:{node.lineno} reaches aiokafka's {node.attr}")
                root_name = owner
                while isinstance(root_name, ast.Attribute):
                    root_name = root_name.value
                if (
                    isinstance(node.ctx, (ast.Store, ast.Del))
                    and isinstance(root_name, ast.Name)
                    and root_name.id in from_aiokafka
                ):
                    found.append(f"{rel}:{node.lineno} replaces {ast.unparse(node)}")
            elif (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _REFLECTION
            ):
                args = node.args
                if len(args) > 1 and isinstance(args[1], ast.Constant) and args[1].value in privates:
                    found.append(f"{rel}:{node.lineno} reaches aiokafka's {args[1].value} by {node.func.id}")
                if (
                    node.func.id in ("setattr", "delattr")
                    and args
                    and isinstance(args[0], ast.Name)
                    and args[0].id in from_aiokafka
                ):
                    found.append(f"{rel}:{node.lineno} replaces an attribute of {args[0].id}")
        code = _code_text(source)
        found.extend(f"{rel} spells {s!r}" for s in SEAM_ONLY_STRINGS if s in code)
    return found


def test_only_the_aiokafka_seam_reaches_aiokafka_internals() -> None:
    privates = seam_privates(ROOT)
    assert {
        "_sender",
        "_send_produce_req",
        "_fetcher",
        "_records",
        "_topics",
        "_max_request_size",
    } <= privates
    violations = aiokafka_internal_violations(ROOT, privates)
    assert not violations, "reach aiokafka internals through pyconnect.kafka.aiokafka_seam:\n" + "\n".join(
        violations
    )


def test_the_aiokafka_internals_checker_flags_each_kind(tmp_path: Path) -> None:
    (tmp_path / "pyconnect" / "kafka").mkdir(parents=True)
    (tmp_path / AIOKAFKA_SEAM).write_text(
        "def f(producer):\n    return producer._sender, getattr(producer, '_txn_manager', None)\n"
    )
    (tmp_path / "pyconnect" / "kafka" / "bad.py").write_text(
        '"""Mentions ._sender and _send_produce_req in a docstring: allowed."""\n'
        "from aiokafka.producer.sender import Sender\n"
        "import aiokafka\n"
        "Sender._send_produce_req = None\n"
        "aiokafka.conn.x = 1\n"
        "setattr(Sender, 'y', 2)\n"
        "def g(producer, self):\n"
        "    self._sender = 1  # own attribute: allowed; a comment with ._fetcher: allowed\n"
        "    return producer._sender, getattr(producer, '_txn_manager', None), producer.client._topics\n"
    )
    privates = seam_privates(tmp_path)
    assert privates == {"_sender", "_txn_manager"}
    found = aiokafka_internal_violations(tmp_path, privates)
    assert found == [
        "pyconnect/kafka/bad.py:4 replaces Sender._send_produce_req",
        "pyconnect/kafka/bad.py:5 replaces aiokafka.conn.x",
        "pyconnect/kafka/bad.py:6 replaces an attribute of Sender",
        "pyconnect/kafka/bad.py:9 reaches aiokafka's _sender",
        "pyconnect/kafka/bad.py:9 reaches aiokafka's _txn_manager by getattr",
        "pyconnect/kafka/bad.py spells '._sender'",
        "pyconnect/kafka/bad.py spells '_send_produce_req'",
    ], found
