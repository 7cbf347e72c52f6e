"""Strict reading of the server's JSON: a required field that is missing, or any field of the
wrong type, is a ProtocolError naming its path (``results[0].hits[2].score``), never a default."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, TypeVar

from .errors import ProtocolError

T = TypeVar("T")

_MISSING = object()


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "object"}.get(
        type(v), type(v).__name__
    )


def _is(v: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(v, str)
    if kind == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if kind == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if kind == "boolean":
        return isinstance(v, bool)
    if kind == "list":
        return isinstance(v, list)
    if kind == "object":
        return isinstance(v, dict)
    if kind == "any":
        return True
    raise ValueError(f"unknown JSON kind {kind!r}")


def _check(v: Any, kind: str, where: str) -> Any:
    """v, when it is of JSON type kind (a number as a float), else a ProtocolError naming where."""
    if not _is(v, kind):
        raise ProtocolError(f"{where}: want {kind}, got {_type_name(v)}")
    if kind == "number":
        return float(v)
    return v


class Obj:
    """One JSON object of an answer, read field by field; where is its path for errors."""

    def __init__(self, value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise ProtocolError(f"{where}: want object, got {_type_name(value)}")
        self.d = value
        self.where = where

    def _path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def req(self, key: str, kind: str) -> Any:
        """A required field of JSON type kind (string, integer, number, boolean, list, object)."""
        v = self.d.get(key, _MISSING)
        if v is _MISSING:
            raise ProtocolError(f"{self._path(key)}: required field missing")
        return _check(v, kind, self._path(key))

    def opt(self, key: str, kind: str, nullable: bool = False) -> Any:
        """An optional field: None when absent (or null where the API allows null)."""
        v = self.d.get(key, _MISSING)
        if v is _MISSING or (v is None and nullable):
            return None
        return _check(v, kind, self._path(key))

    def req_nullable(self, key: str, kind: str) -> Any:
        """A required field that may be null."""
        v = self.d.get(key, _MISSING)
        if v is _MISSING:
            raise ProtocolError(f"{self._path(key)}: required field missing")
        if v is None:
            return None
        return _check(v, kind, self._path(key))

    def obj(self, key: str, required: bool = True) -> Optional["Obj"]:
        v = self.req(key, "object") if required else self.opt(key, "object")
        return None if v is None else Obj(v, self._path(key))

    def objs(self, key: str, parse: Callable[["Obj"], T], required: bool = True) -> Optional[List[T]]:
        """A list of objects, each read by parse."""
        v = self.req(key, "list") if required else self.opt(key, "list")
        if v is None:
            return None
        return [parse(Obj(x, f"{self._path(key)}[{i}]")) for i, x in enumerate(v)]

    def items(self, key: str, kind: str, required: bool = True, nullable_items: bool = False) -> Optional[List[Any]]:
        """A list of scalars of one JSON type."""
        v = self.req(key, "list") if required else self.opt(key, "list")
        if v is None:
            return None
        return [
            None if (x is None and nullable_items) else _check(x, kind, f"{self._path(key)}[{i}]")
            for i, x in enumerate(v)
        ]

    def mapping(self, key: str, kind: str, required: bool = False) -> Optional[Dict[str, Any]]:
        """An object whose values are all of one JSON type (scores, sources)."""
        v = self.req(key, "object") if required else self.opt(key, "object")
        if v is None:
            return None
        return {k: _check(x, kind, f"{self._path(key)}.{k}") for k, x in v.items()}


def list_of(value: Any, where: str, parse: Callable[[Obj], T]) -> List[T]:
    """A top-level JSON list of objects."""
    if not isinstance(value, list):
        raise ProtocolError(f"{where or 'answer'}: want list, got {_type_name(value)}")
    return [parse(Obj(x, f"{where}[{i}]")) for i, x in enumerate(value)]
