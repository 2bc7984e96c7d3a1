"""Every exception class defined in ``pyconnect/`` and ``connectors/`` is under the error tree.

Each module of both packages is imported (``pkgutil.walk_packages``) and every class it defines (nested
ones included) that is an ``Exception`` must be a :class:`pyconnect.errors.ConnectError`, so that its
``retriable`` and ``http_status`` are declared and the REST layer answers it in one place. A class may
keep a builtin base its callers catch next to the tree's class (``class TlsConfigError(ConfigError,
ValueError)``).

Nothing is skipped silently: :data:`NOT_IMPORTED` are the modules that cannot be imported without running
something, and the test checks they define no class; :data:`EXEMPT` are the exceptions that stay outside
the tree, each with the reason, and the test checks each is still defined and still outside (remove an
entry when its class joins the tree).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import connectors
import pyconnect
from pyconnect.errors import ConnectError
from tests.unit.house.test_import_seams import STDLIB_ONLY

ROOT = Path(__file__).resolve().parents[3]

NOT_IMPORTED = {
    "pyconnect.__main__": "``python -m pyconnect``: importing it runs the command line (sys.exit(main()))",
    "pyconnect.strimzi.__main__": "``python -m pyconnect.strimzi``: importing it runs the launcher",
}

STDLIB_CODEC = "its module may import only the standard library (test_import_seams), so not pyconnect.errors"

EXEMPT = {
    "pyconnect.kafka.oauth_login.OAuthLoginError": (
        "raised into aiokafka by the OAUTHBEARER token provider: it must be aiokafka's "
        "AuthenticationFailedError, which aiokafka handles as a failed authentication; what reaches the "
        "runtime is turned into the tree's AuthenticationError by pyconnect.kafka.access.access_error, "
        "whose first test (isinstance KafkaAccessError) a tree base would short-circuit"
    ),
    "pyconnect.config.oauthbearer.ClientConfigError": (
        "the ValueError of the client-config translation (pyconnect.kafka.clients lets it escape; "
        "pyconnect.kafka.admin_client turns it into a ConfigError naming the cluster). Under the tree it "
        "would change answers: zombie fencing wraps a ConnectError as 'Failed to perform zombie fencing: "
        "...' (the task's trace and PUT /connectors/{c}/fence would change), and the REST offsets of a "
        "connector with its own offsets topic answer 500 'ClientConfigError: ...' today. Joining the tree "
        "takes translating it at the client factories, as admin_client does, and deciding those answers"
    ),
    "pyconnect.kafka.topics.TopicAdminError": (
        "an internal topic that cannot be created escapes 'pyconnect distributed' as a RuntimeError with "
        "its traceback, and a REST offsets request creating a connector's own offsets "
        "topic answers 500 'TopicAdminError: ...'; under the tree the command line would print one line "
        "and REST would answer the bare message. Joining the tree takes deciding those two outputs"
    ),
    "pyconnect.protocol.primitives.ProtocolError": STDLIB_CODEC,
    "pyconnect.protocol.internal_records.InternalRecordError": STDLIB_CODEC,
    "pyconnect.kafka.fetch_answers.TruncatedFetchResponse": STDLIB_CODEC,
    "connectors.mirror.records.RecordFormatError": STDLIB_CODEC,
}
"""Qualified class name -> why it is not a ConnectError."""


def module_names() -> list[str]:
    names: list[str] = []

    def refuse(name: str) -> None:
        raise AssertionError(f"cannot walk into {name}")

    for package in (pyconnect, connectors):
        names.append(package.__name__)
        names.extend(
            info.name
            for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".", onerror=refuse)
        )
    return names


def _classes(owner: object, module: str, prefix: str = "") -> Iterator[type]:
    """The classes ``module`` defines in ``owner`` (the module, or a class: its nested classes)."""
    for value in list(vars(owner).values()):
        if inspect.isclass(value) and value.__module__ == module and value.__qualname__.startswith(prefix):
            if value is not owner:
                yield value
                yield from _classes(value, module, value.__qualname__ + ".")


def defined_exceptions() -> list[type[BaseException]]:
    """Every exception class defined by an imported module of both packages."""
    found: list[type[BaseException]] = []
    for name in module_names():
        if name in NOT_IMPORTED:
            continue
        module = importlib.import_module(name)
        found.extend(cls for cls in _classes(module, name) if issubclass(cls, BaseException))
    return found


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def test_the_walk_finds_every_module_file() -> None:
    on_disk = set()
    for package in ("pyconnect", "connectors"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            on_disk.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    assert on_disk == set(module_names())


def test_modules_not_imported_define_no_class() -> None:
    for name in NOT_IMPORTED:
        path = ROOT / (name.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text())
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)], name


def test_every_exception_is_a_connect_error() -> None:
    outside = [
        f"{_qualified(cls)} ({', '.join(b.__name__ for b in cls.__bases__)})"
        for cls in defined_exceptions()
        if not issubclass(cls, ConnectError) and _qualified(cls) not in EXEMPT
    ]
    assert not outside, "not under pyconnect.errors.ConnectError:\n" + "\n".join(outside)


@pytest.mark.parametrize("name", sorted(EXEMPT))
def test_each_exemption_still_holds(name: str) -> None:
    found = {_qualified(cls): cls for cls in defined_exceptions()}
    assert name in found, f"{name} is no longer defined: drop its exemption"
    assert not issubclass(found[name], ConnectError), f"{name} is in the tree now: drop its exemption"
    if EXEMPT[name] == STDLIB_CODEC:
        path = found[name].__module__.replace(".", "/") + ".py"
        assert any(path.startswith(scope) for scope in STDLIB_ONLY), f"{path} is not standard-library only"


def test_every_class_of_the_tree_declares_retriable_and_a_status() -> None:
    for cls in [*defined_exceptions(), ConnectError]:
        if issubclass(cls, ConnectError):
            assert isinstance(cls.retriable, bool), _qualified(cls)
            assert isinstance(cls.http_status, int) and 400 <= cls.http_status < 600, _qualified(cls)
