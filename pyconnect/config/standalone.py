"""StandaloneConfig: Java's StandaloneConfig.

The common worker keys (``WorkerConfig``'s base ConfigDef with client SSL keys) plus the required
``offset.storage.file.filename``; no group or internal-topic keys.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.providers import resolve_config_variables
from pyconnect.config.security_keys import SECURITY_KEYS
from pyconnect.config.types import Importance, Type
from pyconnect.config.worker import REMOVED_KEYS, WorkerConfig
from pyconnect.config.worker_keys import WORKER_KEYS

log = logging.getLogger(__name__)

OFFSET_STORAGE_FILE_FILENAME = "offset.storage.file.filename"
_DISTRIBUTED_ONLY_FROM = "group.id"

STANDALONE_KEYS: tuple[ConfigKey, ...] = (
    *WORKER_KEYS[: [k.name for k in WORKER_KEYS].index(_DISTRIBUTED_ONLY_FROM)],
    *(k for k in SECURITY_KEYS if k.name.startswith("ssl.")),
    ConfigKey(
        OFFSET_STORAGE_FILE_FILENAME,
        Type.STRING,
        importance=Importance.HIGH,
        documentation="File to store source connector offsets",
    ),
)
STANDALONE_CONFIG_DEF = ConfigDef(STANDALONE_KEYS)
_STANDALONE_ATTRIBUTES = {key.name.replace(".", "_"): key.name for key in STANDALONE_CONFIG_DEF}


class StandaloneConfig(WorkerConfig):
    """Parsed standalone worker config; the same typed view as :class:`WorkerConfig`."""

    definition = STANDALONE_CONFIG_DEF
    connector_offsets_topics_permitted = False

    def __init__(self, props: Mapping[str, Any], *, environ: Mapping[str, str] | None = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)
        self._originals = resolve_config_variables(props, self._environ)
        self._values = self.definition.parse(self._originals)
        for removed in REMOVED_KEYS:
            if removed in self._originals:
                log.warning(
                    "The worker has been configured with the removed property %r; it is ignored", removed
                )

    def __getattr__(self, attribute: str) -> Any:
        name = _STANDALONE_ATTRIBUTES.get(attribute)
        if name is None:
            raise AttributeError(attribute)
        return self._values[name]
