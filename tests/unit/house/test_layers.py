"""The layers of ``pyconnect/`` and ``connectors/``, bottom to top, and the two rules they keep.

A module may import modules of its own layer and of the layers below it, never of a layer above. From the
bottom:

1. **foundation**: the error tree (``pyconnect/errors.py``) and the small standalone pieces everything may
   use: the package's version (``pyconnect/__init__.py``), conditions, concurrency helpers, the event loop
   choice, logging context and guard, the Java regex translation, what a plugin is (``plugin_desc.py``),
   the Maven cache and the command-line REST client (``rest_client.py``). Standard library only, and each
   other.
2. **wire formats**: ``pyconnect/protocol/``, the sans-IO Connect group protocol and internal-topic records.
3. **config**: ``pyconnect/config/``, config tables, ``.properties``, providers, TLS stores, every Kafka
   client config.
4. **metrics**: ``pyconnect/metrics/``, Kafka's metric model and its exposition (the status states come
   from the wire formats).
5. **mirror status view**: ``pyconnect/mirror_status/``, the pure flow status over metric readings (and
   ``pyconnect status``, which reads a worker with the REST client of the foundation).
6. **connector API**: ``pyconnect/api/``, what a connector author sees: data, connectors, tasks, converters.
7. **transformations**: ``pyconnect/transforms/``, the SMTs and predicates over the connector API, and the
   ``transforms`` config syntax (which resolves classes through ``plugin_desc.PluginCatalog``).
8. **Kafka clients**: ``pyconnect/kafka/``, aiokafka and the raw record paths (the sink consumer hands out
   the connector API's ``SinkRecord``; client metrics).
9. **stores**: ``pyconnect/stores/``, the internal topics over the Kafka clients.
10. **worker**: ``pyconnect/worker/``, plugins, connector and task lifecycles.
11. **herder**: ``pyconnect/herder/``, the cluster brain over the worker and the stores.
12. **REST**: ``pyconnect/rest/``, the REST API over the herder.
13. **runtime**: ``pyconnect/runtime.py``, the composition root of a worker.
14. **connectors**: ``connectors/``, the hosted connectors, on top of the runtime's API (the runtime finds
    them by class name only, never imports them).
15. **applications**: the command lines and tools that use all of the above: ``cli.py``,
    ``cli_offsets.py``, ``cli_failback.py``, ``cli_cutover.py``, ``__main__.py``, ``mirror_maker.py`` (dedicated MirrorMaker over the MM2 connectors' config),
    ``pyconnect/strimzi/`` and the test harness ``pyconnect/testing/``.

The rules:

(a) No module imports a module of a higher layer. Every import counts: at module level, inside a
    function, and under ``if TYPE_CHECKING:`` too (none is exempt: a type-only dependency is still one).
    A lower module that must name what a higher one provides declares the contract as a ``Protocol``
    and the higher module fulfils it (``config.client_configs.WorkerSettings``,
    ``worker.task_assembly.TaskHost``, ``herder.source_fencing.FencingHerder``,
    ``plugin_desc.PluginCatalog``).
(b) No import cycle between modules: over module-level imports (those under ``if TYPE_CHECKING:``
    included, since two modules naming each other cannot be read apart even for types; imports inside
    functions are not followed). Each cycle is reported as a chain ``a -> b -> a``.

Every module belongs to exactly one layer and every entry of :data:`LAYERS` names at least one module: a new
module is placed here when it is created.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("pyconnect", "connectors")

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "foundation",
        (
            "pyconnect",
            "pyconnect.errors",
            "pyconnect.conditions",
            "pyconnect.concurrency",
            "pyconnect.event_loop",
            "pyconnect.log_context",
            "pyconnect.log_guard",
            "pyconnect.java_regex",
            "pyconnect.plugin_desc",
            "pyconnect.maven_cache",
            "pyconnect.rest_client",
        ),
    ),
    ("wire formats", ("pyconnect.protocol.*",)),
    ("config", ("pyconnect.config.*",)),
    ("metrics", ("pyconnect.metrics.*",)),
    ("mirror status view", ("pyconnect.mirror_status.*",)),
    ("connector API", ("pyconnect.api.*",)),
    ("transformations", ("pyconnect.transforms.*",)),
    ("Kafka clients", ("pyconnect.kafka.*",)),
    ("stores", ("pyconnect.stores.*",)),
    ("worker", ("pyconnect.worker.*",)),
    ("herder", ("pyconnect.herder.*",)),
    ("REST", ("pyconnect.rest.*",)),
    ("runtime", ("pyconnect.runtime",)),
    ("connectors", ("connectors.*",)),
    (
        "applications",
        (
            "pyconnect.__main__",
            "pyconnect.cli",
            "pyconnect.cli_offsets",
            "pyconnect.cli_failback",
            "pyconnect.cli_cutover",
            "pyconnect.mirror_maker",
            "pyconnect.strimzi.*",
            "pyconnect.testing.*",
        ),
    ),
)
"""Bottom to top. ``name`` is that module only; ``name.*`` is the package and everything under it."""


@dataclass(frozen=True)
class Import:
    line: int
    target: str
    module_level: bool


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of :data:`PACKAGES` under ``root``."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _resolve(modules: dict[str, Path], module: str, name: str | None) -> str | None:
    """The module of ours an import names: ``module.name`` when that is a module, else the longest
    prefix of ``module`` that is one; ``None`` for anything outside :data:`PACKAGES`."""
    if module.split(".")[0] not in PACKAGES:
        return None
    if name is not None and f"{module}.{name}" in modules:
        return f"{module}.{name}"
    while module not in modules and "." in module:
        module = module.rsplit(".", 1)[0]
    return module if module in modules else None


def imports_of(modules: dict[str, Path], module: str) -> list[Import]:
    """Every import of ``module`` that names a module of ours; ``module_level`` is false inside a function
    (an ``if TYPE_CHECKING:`` block at module level is module level)."""
    path = modules[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(statements: list[ast.stmt], module_level: bool) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _resolve(modules, alias.name, None)
                    if target is not None:
                        found.append(Import(node.lineno, target, module_level))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1])
                    source = f"{base}.{node.module}" if node.module else base
                else:
                    source = node.module or ""
                for alias in node.names:
                    target = _resolve(modules, source, alias.name)
                    if target is not None:
                        found.append(Import(node.lineno, target, module_level))
            else:
                inner = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    for child in getattr(node, field, ()):
                        if isinstance(child, ast.ExceptHandler | ast.match_case):
                            visit(child.body, module_level and not inner)
                        else:
                            visit([child], module_level and not inner)

    visit(ast.parse(path.read_text()).body, True)
    return found


def _matches(pattern: str, module: str) -> bool:
    if pattern.endswith(".*"):
        package = pattern[:-2]
        return module == package or module.startswith(package + ".")
    return module == pattern


def layer_of(modules: dict[str, Path]) -> tuple[dict[str, int], list[str]]:
    """Each module's layer index, and the problems: a module in no layer or in two, an unused entry."""
    layers: dict[str, int] = {}
    problems: list[str] = []
    for module in modules:
        hits = [i for i, (_, patterns) in enumerate(LAYERS) for p in patterns if _matches(p, module)]
        if len(hits) != 1:
            names = [LAYERS[i][0] for i in hits]
            problems.append(f"{module} is in {len(hits)} layers {names}: place it in exactly one")
        if hits:
            layers[module] = hits[0]
    for name, patterns in LAYERS:
        for pattern in patterns:
            if not any(_matches(pattern, m) for m in modules):
                problems.append(f"layer {name}: {pattern} names no module")
    return layers, problems


def upward_imports(root: Path) -> list[str]:
    """Rule (a): every import of a module of a higher layer, as ``path:line``; and the layer problems."""
    modules = module_files(root)
    layers, problems = layer_of(modules)
    for module, path in modules.items():
        if module not in layers:
            continue
        for imp in imports_of(modules, module):
            if imp.target in layers and layers[imp.target] > layers[module]:
                problem = (
                    f"{path.relative_to(root)}:{imp.line} ({LAYERS[layers[module]][0]}) imports "
                    f"{imp.target} ({LAYERS[layers[imp.target]][0]})"
                )
                if problem not in problems:
                    problems.append(problem)
    return problems


def import_cycles(root: Path) -> list[list[str]]:
    """Rule (b): one chain ``[a, b, ..., a]`` per strongly connected group of modules."""
    modules = module_files(root)
    graph = {
        m: sorted({i.target for i in imports_of(modules, m) if i.module_level and i.target != m})
        for m in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(start: str) -> None:  # Tarjan's algorithm, iterative
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return [_chain(graph, set(group)) for group in groups]


def _chain(graph: dict[str, list[str]], group: set[str]) -> list[str]:
    """A shortest cycle through the group's first module, found breadth-first inside the group."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in graph[node]:
            if nxt == start:
                return paths[node] + [start]
            if nxt in group and nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start}")  # a strongly connected group always has one


def test_no_module_imports_a_higher_layer() -> None:
    problems = upward_imports(ROOT)
    assert not problems, "\n".join(problems)


def test_no_import_cycle() -> None:
    cycles = import_cycles(ROOT)
    assert not cycles, "\n".join(" -> ".join(chain) for chain in cycles)


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checkers_flag_upward_imports_and_cycles(tmp_path: Path) -> None:
    files = {name: "" for name in ("pyconnect/__init__.py", "connectors/__init__.py")}
    files.update(
        {
            "pyconnect/errors.py": "from pyconnect.kafka import clients\n",  # up, at module level
            "pyconnect/kafka/__init__.py": "",
            "pyconnect/kafka/clients.py": (
                "from typing import TYPE_CHECKING\n"
                "from pyconnect.errors import X\n"
                "if TYPE_CHECKING:\n"
                "    from pyconnect.rest import server\n"  # up, for types only: counts too
                "def f():\n"
                "    from pyconnect.rest.server import serve\n"  # up, in a function
            ),
            "pyconnect/rest/__init__.py": "",
            "pyconnect/rest/server.py": "from . import routing\n",
            "pyconnect/rest/routing.py": "from pyconnect.rest import server\n",
            "pyconnect/runtime.py": "",
            "pyconnect/cli.py": "import pyconnect.runtime\n",
            "pyconnect/unplaced.py": "",
        }
    )
    _tree(tmp_path, files)
    problems = upward_imports(tmp_path)
    assert "pyconnect.unplaced is in 0 layers []: place it in exactly one" in problems
    assert "pyconnect/errors.py:1 (foundation) imports pyconnect.kafka.clients (Kafka clients)" in problems
    assert "pyconnect/kafka/clients.py:6 (Kafka clients) imports pyconnect.rest.server (REST)" in problems
    assert "pyconnect/kafka/clients.py:4 (Kafka clients) imports pyconnect.rest.server (REST)" in problems
    assert "layer connectors: connectors.* names no module" not in problems  # connectors/__init__.py
    assert "layer wire formats: pyconnect.protocol.* names no module" in problems
    cycles = import_cycles(tmp_path)
    assert sorted(" -> ".join(c) for c in cycles) == [
        "pyconnect.errors -> pyconnect.kafka.clients -> pyconnect.errors",
        "pyconnect.rest.routing -> pyconnect.rest.server -> pyconnect.rest.routing",
    ]
