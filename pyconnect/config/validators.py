"""Validators with the behaviour, messages and ``str()`` (the docs' "Valid Values") of Java's ``ConfigDef``.

A validator is any callable ``(name, parsed_value) -> None`` that raises
:class:`~pyconnect.errors.ConfigError`; the classes here also render their Java description via ``str``.
They receive the parsed value, which is ``None`` when a key is unset with a ``None`` default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from pyconnect.config.javastr import invalid_value, java_str
from pyconnect.errors import ConfigError


class Validator(Protocol):
    def __call__(self, name: str, value: object) -> None: ...


def _number_str(number: float | int) -> str:
    return java_str(number)


class Range:
    """``Range.atLeast(min)`` / ``Range.between(min, max)``: inclusive bounds, ``None`` rejected."""

    def __init__(self, min: float | None = None, max: float | None = None) -> None:
        self.min = min
        self.max = max

    @classmethod
    def at_least(cls, min: float) -> Range:
        return cls(min, None)

    @classmethod
    def between(cls, min: float, max: float) -> Range:
        return cls(min, max)

    def __call__(self, name: str, value: object) -> None:
        if value is None:
            raise invalid_value(name, None, "Value must be non-null")
        assert isinstance(value, (int, float))
        if self.min is not None and value < self.min:
            raise invalid_value(name, value, f"Value must be at least {_number_str(self.min)}")
        if self.max is not None and value > self.max:
            raise invalid_value(name, value, f"Value must be no more than {_number_str(self.max)}")

    def __str__(self) -> str:
        low = "" if self.min is None else _number_str(self.min)
        high = "" if self.max is None else _number_str(self.max)
        if self.min is None and self.max is None:
            return "[...]"
        if self.min is None:
            return f"[...,{high}]"
        if self.max is None:
            return f"[{low},...]"
        return f"[{low},...,{high}]"


class ValidString:
    """``ValidString.in(...)``: exact, case-sensitive membership."""

    def __init__(self, *valid: str) -> None:
        self.valid = tuple(valid)

    def __call__(self, name: str, value: object) -> None:
        if value not in self.valid:
            raise invalid_value(name, value, "String must be one of: " + ", ".join(self.valid))

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"


class CaseInsensitiveValidString:
    """``CaseInsensitiveValidString.in(...)``: membership ignoring case; the parsed value keeps its case."""

    def __init__(self, *valid: str) -> None:
        self.valid = tuple(v.upper() for v in valid)

    def __call__(self, name: str, value: object) -> None:
        if not isinstance(value, str) or value.upper() not in self.valid:
            raise invalid_value(
                name, value, "String must be one of (case insensitive): " + ", ".join(self.valid)
            )

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid) + "]"


class ValidList:
    """Kafka 4 ``ValidList``: list-level checks, then each element.

    ``ValidList.in_(*valid, allow_empty=True)`` restricts elements to ``valid``;
    ``ValidList.any_non_duplicate_values(allow_empty, allow_null)`` accepts any elements. Both reject
    ``None`` unless ``allow_null``, an empty list unless ``allow_empty``, duplicates, and empty elements.
    ``ConfigDef.parse`` removes duplicates (with a warning) before calling this; ``validate`` does not.
    """

    def __init__(self, valid: Sequence[str], allow_empty: bool, allow_null: bool) -> None:
        self.valid = tuple(valid)
        self.allow_empty = allow_empty
        self.allow_null = allow_null

    @classmethod
    def in_(cls, *valid: str, allow_empty: bool = True) -> ValidList:
        if not allow_empty and not valid:
            raise ValueError("At least one valid string must be provided when empty values are not allowed")
        return cls(valid, allow_empty, False)

    @classmethod
    def any_non_duplicate_values(cls, allow_empty: bool, allow_null: bool) -> ValidList:
        return cls((), allow_empty, allow_null)

    def __call__(self, name: str, value: object) -> None:
        if value is None:
            if self.allow_null:
                return
            raise ConfigError(f"Configuration '{name}' values must not be null.")
        assert isinstance(value, list)
        if not self.allow_empty and not value:
            valid = str(ValidString(*self.valid)) if self.valid else "any non-empty value"
            raise ConfigError(f"Configuration '{name}' must not be empty. Valid values include: {valid}")
        if len(set(value)) != len(value):
            raise ConfigError(f"Configuration '{name}' values must not be duplicated.")
        for element in value:
            if isinstance(element, str):
                if not element:
                    raise ConfigError(f"Configuration '{name}' values must not be empty.")
                if self.valid:
                    ValidString(*self.valid)(name, element)

    def __str__(self) -> str:
        return str(ValidString(*self.valid)) if self.valid else ""


class NonEmptyString:
    """Rejects ``""``; ``None`` passes."""

    def __call__(self, name: str, value: object) -> None:
        if value == "":
            raise invalid_value(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"


class NonNullValidator:
    def __call__(self, name: str, value: object) -> None:
        if value is None:
            raise invalid_value(name, "null", "entry must be non null")

    def __str__(self) -> str:
        return "non-null string"


class NonEmptyStringWithoutControlChars:
    """Rejects ``""`` and ISO control characters (reported as decimal code points); ``None`` passes."""

    def __call__(self, name: str, value: object) -> None:
        if value is None:
            return
        assert isinstance(value, str)
        if not value:
            raise invalid_value(name, value, "String may not be empty")
        bad = [str(ord(c)) for c in value if ord(c) <= 0x1F or 0x7F <= ord(c) <= 0x9F]
        if bad:
            raise invalid_value(
                name,
                value,
                "String may not contain control sequences but had the following ASCII chars: "
                + ", ".join(bad),
            )

    def __str__(self) -> str:
        return "non-empty string without ISO control characters"


class ListSize:
    """``ListSize.atMostOfSize(n)``."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size

    def __call__(self, name: str, value: object) -> None:
        assert isinstance(value, list)
        if len(value) > self.max_size:
            raise invalid_value(name, value, f"exceeds maximum list size of [{self.max_size}].")

    def __str__(self) -> str:
        return f"List containing maximum of {self.max_size} elements"


class CompositeValidator:
    """All validators must pass, checked in order; described as their descriptions joined by ``, ``."""

    def __init__(self, *validators: Validator) -> None:
        self.validators = validators

    def __call__(self, name: str, value: object) -> None:
        for validator in self.validators:
            validator(name, value)

    def __str__(self) -> str:
        return ", ".join(str(v) for v in self.validators)


class LambdaValidator:
    """``LambdaValidator.with(check, description)``: an ad-hoc check with a fixed description."""

    def __init__(self, check: Callable[[str, object], None], description: str) -> None:
        self.check = check
        self.description = description

    def __call__(self, name: str, value: object) -> None:
        self.check(name, value)

    def __str__(self) -> str:
        return self.description
