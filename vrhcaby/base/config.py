"""Typed configuration: dataclass defaults, then a TOML file, then ``key=value`` overrides.

Generic over any (possibly nested) dataclass whose fields are ``bool``, ``int``,
``float``, ``str``, ``tuple[T, ...]`` of those, or another such dataclass (a TOML table;
overrides address it with dots, ``td.lam=0.7``). Unknown keys and values of the wrong
type are errors (`ConfigError`, one line naming the key), never silently ignored, and so
is a float that is not finite (TOML's ``nan`` and ``inf``).
Override values are read as TOML values (``0.7``, ``[40, 40]``, ``true``, ``"x"``); a
bare word is taken as a string where a string is expected (``name=long``).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class ConfigError(ValueError):
    """A config file or override that does not fit the config's fields."""


def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _coerce(key: str, tp: Any, value: Any) -> Any:
    """`value` checked (and minimally converted) against the field type `tp`."""
    origin = typing.get_origin(tp)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list | tuple):
            raise ConfigError(f"config key {key!r} must be a list, got {value!r}")
        return tuple(_coerce(key, args[0], v) for v in value)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None or value == "none":
            return None
        return _coerce(key, members[0], value)
    ok = {
        bool: isinstance(value, bool),
        int: isinstance(value, int) and not isinstance(value, bool),
        float: isinstance(value, int | float) and not isinstance(value, bool),
        str: isinstance(value, str),
    }.get(tp)
    if ok is None:
        raise ConfigError(f"config key {key!r} has unsupported type {_type_name(tp)}")
    if not ok:
        raise ConfigError(
            f"config key {key!r} must be {_type_name(tp)}, got {type(value).__name__} {value!r}"
        )
    if tp is float and not math.isfinite(value):
        raise ConfigError(f"config key {key!r} must be a finite number, got {value!r}")
    return float(value) if tp is float else value


def _merge(cls: type, values: dict[str, Any], updates: dict[str, Any], prefix: str) -> None:
    """Check `updates` (a nested dict) against `cls` and write them into `values`."""
    types_ = _field_types(cls)
    for name, value in updates.items():
        key = prefix + name
        if name not in types_:
            known = ", ".join(types_)
            raise ConfigError(f"unknown config key {key!r} (known here: {known})")
        tp = types_[name]
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            if not isinstance(value, dict):
                raise ConfigError(f"config key {key!r} is a table, got {value!r}")
            _merge(tp, values[name], value, key + ".")
        else:
            values[name] = _coerce(key, tp, value)


def _parse_override(text: str) -> tuple[list[str], Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"override must look like key=value, got {text!r}")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return key.strip().split("."), value


def _build(cls: type[T], values: dict[str, Any], prefix: str = "") -> T:
    kwargs = {}
    for name, tp in _field_types(cls).items():
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            kwargs[name] = _build(tp, values[name], f"{prefix}{name}.")
        else:
            kwargs[name] = _coerce(prefix + name, tp, values[name])
    try:
        return cls(**kwargs)
    except ValueError as exc:
        raise ConfigError(f"bad config: {exc}") from None


def to_dict(config: Any) -> dict[str, Any]:
    """The config as nested plain dicts (tuples as lists), ready for TOML-like output."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value):
            out[f.name] = to_dict(value)
        else:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def load_config(cls: type[T], path: str | Path | None = None, overrides: Sequence[str] = ()) -> T:
    """An instance of dataclass `cls`: its defaults, updated by the TOML file at `path`
    (if any), then by each ``key=value`` in `overrides`."""
    values = to_dict(cls())
    if path is not None:
        path = Path(path)
        try:
            document = tomllib.loads(path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"config file not found: {path}") from None
        except IsADirectoryError:
            raise ConfigError(f"config file {path} is a directory, not a TOML file") from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise ConfigError(f"config file {path} cannot be read: {reason}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
        _merge(cls, values, document, "")
    for text in overrides:
        keys, value = _parse_override(text)
        nested: Any = value
        for k in reversed(keys):
            nested = {k: nested}
        _merge(cls, values, nested, "")
    return _build(cls, values)


def flatten(config: Any) -> dict[str, Any]:
    """Dotted key -> value for every leaf of the config (a dataclass, or its `to_dict`)."""
    out: dict[str, Any] = {}

    def walk(d: dict[str, Any], prefix: str) -> None:
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v, f"{prefix}{k}.")
            else:
                out[prefix + k] = v

    walk(config if isinstance(config, dict) else to_dict(config), "")
    return out


def format_table(config: Any) -> str:
    """The config as a two-column markdown table (for logs and TensorBoard's text tab)."""
    rows = [f"|{k}|{v}|" for k, v in flatten(config).items()]
    return "\n".join(["|key|value|", "|-|-|", *rows])
