"""Configuration: ``.properties`` files, declarative config tables, the worker config, config providers."""

from pyconnect.config.definition import NO_DEFAULT, ConfigDef, ConfigKey, ConfigValue
from pyconnect.config.types import Importance, Password, Type, Width

__all__ = ["NO_DEFAULT", "ConfigDef", "ConfigKey", "ConfigValue", "Importance", "Password", "Type", "Width"]
