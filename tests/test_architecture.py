"""The house's floors hold: no import cycle, the engine free of torch and of the upper
floors, nothing importing the entry scripts (docs/architecture.md).

The imports are read here with `ast` from the source files themselves, every ``import``
statement wherever it stands (inside functions and under ``TYPE_CHECKING`` too), so the
check does not rely on the import-linter contract that `scripts/check.sh` also runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "agents", "vrhcaby")
SCRIPTS = ("train", "evaluate")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _imported(name: str, path: Path) -> set[str]:
    """Every name an import statement of the module reaches (module or package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from package import module` imports that module; any other name
            # imported that way comes from the package (or module) itself.
            subs = {f"{module}.{alias.name}" for alias in node.names}
            out.update(subs & MODULES.keys())
            if subs - MODULES.keys():
                out.add(module)
    return out


def _project_module(target: str) -> str | None:
    """The project module an imported name belongs to (a name inside a module counts as
    the module), or None outside the project."""
    while target:
        if target in MODULES:
            return target
        target = target.rpartition(".")[0]
    return None


def _graph() -> dict[str, set[str]]:
    graph = {}
    for name, path in MODULES.items():
        targets = {_project_module(t) for t in _imported(name, path)}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the list of modules along it, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_import_graph_reader_finds_a_cycle_when_there_is_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_anywhere() -> None:
    graph = _graph()
    assert len(graph) > 60 and graph["agents.td"], "the reader found the project's modules"
    assert _cycle(graph) is None


def test_the_engine_imports_no_torch_and_nothing_above_it() -> None:
    for name, path in MODULES.items():
        if name.split(".")[0] != "engine":
            continue
        tops = {t.split(".")[0] for t in _imported(name, path)}
        assert not tops & {"torch", "agents", "vrhcaby", "ray"}, name


def test_nothing_imports_the_entry_scripts() -> None:
    sources = dict(MODULES)
    sources.update({f"bench.{p.stem}": p for p in (ROOT / "bench").glob("*.py")})
    for name, path in sources.items():
        tops = {t.split(".")[0] for t in _imported(name, path)}
        assert not tops & set(SCRIPTS), f"{name} imports an entry script"
