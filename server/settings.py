"""Typed settings, section `recitation`, one set per workspace folder.

Values come from `initializationOptions` (nested under "recitation" or flat) and from
`workspace/configuration` for each folder. Each bad field is reported and falls back to
its default; the other fields still apply.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

import cattrs
from cattrs.gen import make_dict_unstructure_fn, override

SECTION = "recitation"

SeverityName = Literal["error", "warning", "information", "hint", "off"]
CompletionMode = Literal["warn", "block", "off"]
AttributionStyle = Literal["comment", "spdx"]
Underline = Literal["all", "firstLine"]
# the index of the public code a folder depends on: offered at first run, built at once, or
# neither (and not used)
WorkspaceIndexMode = Literal["offer", "auto", "off"]


@dataclass
class SeveritySettings:
    """Diagnostic severity per match kind."""

    recitation: SeverityName = "warning"
    license: SeverityName = "hint"
    repetitive: SeverityName = "hint"
    inventory: SeverityName = "hint"
    idiom: SeverityName = "hint"

    def for_kind(self, kind: str) -> str:
        return getattr(self, kind, "warning") if kind in _SEVERITY_KINDS else "warning"


_SEVERITY_KINDS = {f.name for f in dataclasses.fields(SeveritySettings)}


@dataclass
class Settings:
    enable: bool = True
    index_path: str = ""  # "" = the default index; an https:// URL: an index service
    remote_index: str = ""  # an index service used together with index_path ("" = none)
    min_tokens: int = 60
    context_tokens: int = 200
    min_insert_words: int = 10
    scan_on_open: bool = False
    severity: SeveritySettings = field(default_factory=SeveritySettings)
    completion_mode: CompletionMode = "warn"
    attribution_style: AttributionStyle = "comment"  # the quick fix: a comment or SPDX tags
    underline: Underline = "all"  # "firstLine": only a long quote's first line is underlined
    workspace_index: WorkspaceIndexMode = "offer"
    # the folder's code files are watched: code written outside the editor (another program
    # writing files) is checked too (file_watch.py)
    watch_files: bool = True


# Limits on numeric settings: (smallest, largest).
_BOUNDS = {
    "min_tokens": (1, 100_000),
    "context_tokens": (0, 100_000),
    "min_insert_words": (1, 100_000),
}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _strict_bool(value: Any, _type: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"expected true or false, got {value!r}")


def _strict_int(value: Any, _type: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError(f"expected a whole number, got {value!r}")


def _strict_str(value: Any, _type: Any) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"expected a string, got {value!r}")


def make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=False)
    conv.register_structure_hook(bool, _strict_bool)
    conv.register_structure_hook(int, _strict_int)
    conv.register_structure_hook(str, _strict_str)
    for cls in (Settings, SeveritySettings):
        renames = {f.name: override(rename=camel(f.name)) for f in dataclasses.fields(cls)}
        conv.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, conv, **renames))
    return conv


converter = make_converter()


def unwrap(raw: Any) -> dict[str, Any]:
    """The settings object inside `raw`: `{"recitation": {...}}` or the object itself."""
    if not isinstance(raw, dict):
        return {}
    inner = raw.get(SECTION)
    if isinstance(inner, dict):
        return inner
    return raw


def merge(*layers: Any) -> dict[str, Any]:
    """Later layers override earlier ones; the `severity` object merges per kind."""
    out: dict[str, Any] = {}
    for layer in layers:
        if not isinstance(layer, dict):
            continue
        for key, value in layer.items():
            if key == "severity" and isinstance(value, dict) and isinstance(out.get(key), dict):
                out[key] = {**out[key], **value}
            else:
                out[key] = value
    return out


def _structure_fields(cls: type, raw: dict[str, Any], where: str, problems: list[str]) -> Any:
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        key = camel(f.name)
        if key not in raw or raw[key] is None:
            continue
        value = raw[key]
        label = f"{where}.{key}"
        if dataclasses.is_dataclass(hints[f.name]):
            if isinstance(value, dict):
                values[f.name] = _structure_fields(hints[f.name], value, label, problems)
            else:
                problems.append(f"{label}: expected an object, got {value!r}")
            continue
        try:
            parsed = converter.structure(value, hints[f.name])
        except Exception as exc:  # cattrs raises several error types; all mean "invalid"
            reason = str(exc) if isinstance(exc, ValueError) else ""
            if typing.get_origin(hints[f.name]) is Literal:
                choices = ", ".join(repr(c) for c in typing.get_args(hints[f.name]))
                reason = f"expected one of {choices}, got {value!r}"
            problems.append(f"{label}: {reason or f'invalid value {value!r}'}")
            continue
        bounds = _BOUNDS.get(f.name)
        if bounds and not bounds[0] <= parsed <= bounds[1]:
            problems.append(f"{label}: {parsed} is outside {bounds[0]}..{bounds[1]}")
            continue
        values[f.name] = parsed
    return cls(**values)


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Typed settings from a raw object, and a message for every field that was invalid."""
    problems: list[str] = []
    if raw is not None and not isinstance(raw, dict):
        return Settings(), [f"{SECTION}: expected an object, got {raw!r}"]
    return _structure_fields(Settings, unwrap(raw or {}), SECTION, problems), problems


def to_dict(settings: Settings) -> dict[str, Any]:
    """The camelCase JSON form."""
    return converter.unstructure(settings)


def layered_settings(*layers: Any) -> tuple[Settings, list[str]]:
    """Settings from layers applied in order (initializationOptions, pushed settings, the
    folder's `workspace/configuration`); `None` layers are skipped."""
    problems: list[str] = []
    usable = []
    for layer in layers:
        if layer is None:
            continue
        if not isinstance(layer, dict):
            problems.append(f"{SECTION}: expected an object, got {layer!r}")
            continue
        usable.append(unwrap(layer))
    settings, more = parse_settings(merge(*usable))
    return settings, problems + more
