"""The connector keys that bound a source task's waits for its target (pyconnect's, not Java's).

- ``pyconnect.target.wait.max.ms`` (:data:`~pyconnect.kafka.target_waits.WAIT_MAX_CONFIG`, any source
  connector): how long a batch may wait for a target partition that is missing or refuses it before
  the task fails; absent: for ever, as Java's producer blocks in ``send``. A value must be a LONG of at
  least 1: :func:`check_target_wait` adds the error (naming the key) to a validation, so connector
  create and update answer 400 and ``/config/validate`` counts it.
- ``pyconnect.mirror.target.latency.ms`` (a mirror flow's target latency): when present, the target is
  called unreachable (TARGET_UNREACHABLE) after half of it (at least 1 s) without an acknowledgement;
  otherwise after 15 s.

:func:`target_label` names the target in the conditions: by the task's ``target.cluster.alias`` when
it has one (a mirror task), as ``target cluster B (host:port)``.

:func:`wait_bounds` reads both from a connector config (an invalid value counts as absent: it never
gets past validation).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping

from pyconnect.config.definition import ConfigValue
from pyconnect.kafka.target_waits import DEFAULT_UNREACHABLE_AFTER_S, WAIT_MAX_CONFIG, WaitBounds
from pyconnect.mirror_status.core import TARGET_LATENCY_CONFIG, duration_ms_error, target_latency_ms

MIN_WAIT_MAX_MS = 1
MIN_UNREACHABLE_AFTER_S = 1.0


def target_wait_error(value: str | None) -> str | None:
    """Why ``value`` is not a valid ``pyconnect.target.wait.max.ms`` (``None``: valid or absent)."""
    return duration_ms_error(WAIT_MAX_CONFIG, value, minimum=MIN_WAIT_MAX_MS)


def check_target_wait(config: Mapping[str, str], values: MutableMapping[str, ConfigValue]) -> None:
    """Add the error of an invalid ``pyconnect.target.wait.max.ms`` in ``config`` to ``values``."""
    value = config.get(WAIT_MAX_CONFIG)
    error = target_wait_error(value)
    if error is not None:
        values.setdefault(WAIT_MAX_CONFIG, ConfigValue(WAIT_MAX_CONFIG, value)).errors.append(error)


def target_label(cluster: str, task_config: Mapping[str, str]) -> str:
    """``cluster`` (the worker's ``cluster <bootstrap servers>``) with the task's target alias, if any."""
    alias = task_config.get("target.cluster.alias")
    if not alias:
        return cluster
    servers = cluster.removeprefix("cluster ").strip() if cluster.startswith("cluster ") else ""
    return f"target cluster {alias} ({servers})" if servers else f"target cluster {alias}"


def wait_bounds(config: Mapping[str, str]) -> WaitBounds:
    """The :class:`~pyconnect.kafka.target_waits.WaitBounds` of a source connector's config."""
    value = config.get(WAIT_MAX_CONFIG)
    wait_max_s = None if value is None or target_wait_error(value) else int(value.strip()) / 1000
    unreachable_after_s = DEFAULT_UNREACHABLE_AFTER_S
    if config.get(TARGET_LATENCY_CONFIG) is not None:
        unreachable_after_s = max(MIN_UNREACHABLE_AFTER_S, target_latency_ms(config) / 2000)
    return WaitBounds(wait_max_s, unreachable_after_s)
