"""Config loading: defaults, then a TOML file, then key=value overrides, strictly typed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from vrhcaby.base.config import ConfigError, flatten, format_table, load_config, to_dict


@dataclass(frozen=True)
class Inner:
    rate: float = 0.1
    sizes: tuple[int, ...] = (3,)
    flag: bool = False

    def __post_init__(self) -> None:
        if self.rate < 0:
            raise ValueError("rate must not be negative")


@dataclass(frozen=True)
class Outer:
    name: str = "base"
    count: int = 5
    inner: Inner = field(default_factory=Inner)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


def test_defaults_then_file_then_overrides(tmp_path: Path) -> None:
    assert load_config(Outer) == Outer()
    path = write(tmp_path, 'name = "file"\ncount = 7\n[inner]\nrate = 2\nsizes = [4, 5]\n')
    cfg = load_config(Outer, path)
    assert cfg == Outer("file", 7, Inner(2.0, (4, 5), False))
    assert isinstance(cfg.inner.rate, float)
    cfg = load_config(Outer, path, ["count=9", "inner.flag=true", "name=cli", "inner.sizes=[1]"])
    assert cfg == Outer("cli", 9, Inner(2.0, (1,), True))


@pytest.mark.parametrize(
    ("text", "overrides", "message"),
    [
        ("colour = 1\n", [], "unknown config key 'colour'"),
        ("[inner]\nspeed = 1\n", [], "unknown config key 'inner.speed'"),
        ("count = 1.5\n", [], "'count' must be int"),
        ("count = true\n", [], "'count' must be int"),
        ("[inner]\nsizes = 3\n", [], "'inner.sizes' must be a list"),
        ("", ["inner.rate=fast"], "'inner.rate' must be float"),
        ("", ["nokey"], "key=value"),
        ("", ["inner=3"], "'inner' is a table"),
        ("", ["inner.rate=-1"], "rate must not be negative"),
        ("name = \n", [], "not valid TOML"),
    ],
)
def test_errors_name_the_key(tmp_path: Path, text: str, overrides: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(Outer, write(tmp_path, text), overrides)


def test_missing_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(Outer, tmp_path / "nope.toml")


def test_table_and_dict_forms() -> None:
    cfg = Outer()
    inner = {"rate": 0.1, "sizes": [3], "flag": False}
    assert to_dict(cfg) == {"name": "base", "count": 5, "inner": inner}
    assert flatten(cfg)["inner.sizes"] == [3]
    table = format_table(cfg).splitlines()
    assert table[:2] == ["|key|value|", "|-|-|"]
    assert "|inner.rate|0.1|" in table and len(table) == 2 + 5
