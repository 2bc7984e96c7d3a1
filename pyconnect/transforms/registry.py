"""The built-in transformations and predicates under the class names Java's worker reports.

Nested ``$Key``/``$Value`` variants keep Java's binary names
(``org.apache.kafka.connect.transforms.InsertField$Value``); aliases are computed by the plugin
registry from the simple name as Java's ``PluginUtils.computeAliases`` does, where the simple name
of a nested class is the part after ``$`` (so ``Value`` and ``Key`` are ambiguous and dropped, while
``Filter``, ``RegexRouter`` or ``TopicNameMatches`` resolve).
"""

from __future__ import annotations

from pyconnect.transforms.base import Predicate, Transformation
from pyconnect.transforms.cast import CastKey, CastValue
from pyconnect.transforms.fields import InsertFieldKey, InsertFieldValue, ReplaceFieldKey, ReplaceFieldValue
from pyconnect.transforms.flatten import FlattenKey, FlattenValue
from pyconnect.transforms.headers import DropHeaders, HeaderFromKey, HeaderFromValue, InsertHeader
from pyconnect.transforms.mask import MaskFieldKey, MaskFieldValue
from pyconnect.transforms.predicates import HasHeaderKey, RecordIsTombstone, TopicNameMatches
from pyconnect.transforms.reshape import (
    ExtractFieldKey,
    ExtractFieldValue,
    HoistFieldKey,
    HoistFieldValue,
    SetSchemaMetadataKey,
    SetSchemaMetadataValue,
    ValueToKey,
)
from pyconnect.transforms.routers import Filter, RegexRouter, TimestampRouter
from pyconnect.transforms.timestamps import TimestampConverterKey, TimestampConverterValue

_PACKAGE = "org.apache.kafka.connect.transforms."

BUILTIN_TRANSFORMATIONS: dict[str, type[Transformation]] = {
    _PACKAGE + "Cast$Key": CastKey,
    _PACKAGE + "Cast$Value": CastValue,
    _PACKAGE + "DropHeaders": DropHeaders,
    _PACKAGE + "ExtractField$Key": ExtractFieldKey,
    _PACKAGE + "ExtractField$Value": ExtractFieldValue,
    _PACKAGE + "Filter": Filter,
    _PACKAGE + "Flatten$Key": FlattenKey,
    _PACKAGE + "Flatten$Value": FlattenValue,
    _PACKAGE + "HeaderFrom$Key": HeaderFromKey,
    _PACKAGE + "HeaderFrom$Value": HeaderFromValue,
    _PACKAGE + "HoistField$Key": HoistFieldKey,
    _PACKAGE + "HoistField$Value": HoistFieldValue,
    _PACKAGE + "InsertField$Key": InsertFieldKey,
    _PACKAGE + "InsertField$Value": InsertFieldValue,
    _PACKAGE + "InsertHeader": InsertHeader,
    _PACKAGE + "MaskField$Key": MaskFieldKey,
    _PACKAGE + "MaskField$Value": MaskFieldValue,
    _PACKAGE + "RegexRouter": RegexRouter,
    _PACKAGE + "ReplaceField$Key": ReplaceFieldKey,
    _PACKAGE + "ReplaceField$Value": ReplaceFieldValue,
    _PACKAGE + "SetSchemaMetadata$Key": SetSchemaMetadataKey,
    _PACKAGE + "SetSchemaMetadata$Value": SetSchemaMetadataValue,
    _PACKAGE + "TimestampConverter$Key": TimestampConverterKey,
    _PACKAGE + "TimestampConverter$Value": TimestampConverterValue,
    _PACKAGE + "TimestampRouter": TimestampRouter,
    _PACKAGE + "ValueToKey": ValueToKey,
}

BUILTIN_PREDICATES: dict[str, type[Predicate]] = {
    _PACKAGE + "predicates.HasHeaderKey": HasHeaderKey,
    _PACKAGE + "predicates.RecordIsTombstone": RecordIsTombstone,
    _PACKAGE + "predicates.TopicNameMatches": TopicNameMatches,
}
