"""The house's floors hold: no import cycle, the engine free of torch and of the upper
floors, nothing importing the entry scripts (docs/architecture.md). The page names only
modules (and names inside them) that exist, and every module; each package's docstring
names each of its modules.

The imports are read here with `ast` from the source files themselves, every ``import``
statement wherever it stands (inside functions and under ``TYPE_CHECKING`` too), so the
check does not rely on the import-linter contract that `scripts/check.sh` also runs.
"""

from __future__ import annotations

import ast
import re
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


# docs/architecture.md names the modules that exist, and every one of them ----------------

PAGE = ROOT / "docs" / "architecture.md"
_TICKED = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"(?:engine|agents|vrhcaby)(?:\.\w+)*")
_PATH = re.compile(r"[\w/]*\w\.py")


def _defined(path: Path) -> set[str]:
    """The names a module's source binds at its top level (defs, classes, assignments,
    imports), read with `ast`: what ``module.name`` on the page may name."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            if "__all__" in names and isinstance(node.value, ast.List | ast.Tuple):
                # names a package gives on first use (a module ``__getattr__``)
                names.update(str(e.value) for e in node.value.elts if isinstance(e, ast.Constant))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _floor_dirs(row: str) -> list[Path]:
    """The folders a table row's first cell names (`vrhcaby.play` -> vrhcaby/play; a module
    floor such as `vrhcaby.analysis` -> its folder), where the row's bare file names live."""
    first = re.split(r"(?<!\\)\|", row)[1] if row.startswith("|") else ""
    dirs = []
    for name in _TICKED.findall(first):
        if name in MODULES:
            path = MODULES[name]
            dirs.append(path.parent)
    return dirs


def _rows(text: str) -> list[tuple[str, list[str]]]:
    """Each line of the page (fenced blocks dropped) with its backticked names."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return [(line, _TICKED.findall(line)) for line in text.split("\n")]


def _missing(text: str) -> list[str]:
    """The names of modules, files and module attributes the page gives that the tree
    lacks (an independent walk of the tree: files and their top-level names)."""
    packages = [ROOT / p for p in PACKAGES]
    out = []
    for line, names in _rows(text):
        floors = _floor_dirs(line)
        for name in names:
            if _DOTTED.fullmatch(name):
                parts = name.split(".")
                k = max(i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in MODULES)
                module = ".".join(parts[:k])
                if k < len(parts) and parts[k] not in _defined(MODULES[module]):
                    out.append(name)
            elif _PATH.fullmatch(name) or (name.endswith("/") and "/" in name[:-1]):
                bases = [ROOT, *packages, ROOT / "vrhcaby"]
                if "/" not in name.rstrip("/"):  # a bare file: in its row's floor
                    found = (
                        any((d / name).exists() for d in floors)
                        if floors
                        else any(p.name == name for p in ROOT.rglob(name) if ".venv" not in p.parts)
                    )
                else:
                    found = any((base / name).exists() for base in bases)
                if not found:
                    out.append(name)
    return out


def _unnamed(text: str) -> list[str]:
    """The project's modules the page names nowhere: not by dotted name (nor a name inside
    it), path, or bare file name or stem in a line that names its package."""
    ticked = {name for _, names in _rows(text) for name in names}
    out = []
    for module, path in MODULES.items():
        if path.name in {"__init__.py", "__main__.py"}:
            continue
        package, _, stem = module.rpartition(".")
        rel = path.relative_to(ROOT).as_posix()
        by_path = {t for t in ticked if "/" in t and rel.endswith("/" + t)}
        if by_path or any(t in (module, rel) or t.startswith(module + ".") for t in ticked):
            continue
        if any(
            (package in names or MODULES[package].parent in _floor_dirs(line))
            and ({stem, path.name} & set(names))
            for line, names in _rows(text)
        ):
            continue
        out.append(module)
    return out


def test_the_architecture_check_finds_what_is_wrong() -> None:
    """The checks below see a name that is gone and a module left out."""
    assert _missing("`vrhcaby.learn.td` `learn/td.py` `vrhcaby.analysis.rank_plays`") == [
        "vrhcaby.learn.td",
        "learn/td.py",
        "vrhcaby.analysis.rank_plays",
    ]
    row = "| `vrhcaby.play` | `tournament.py`, `nothing.py` |"
    assert _missing(row) == ["nothing.py"]
    assert "vrhcaby.play.stats" in _unnamed(row)
    assert "vrhcaby.play.tournament" not in _unnamed(row)
    assert not _missing("`vrhcaby.nn.net.load_evaluator` `engine/plain.py` `engine.parse_dice`")


def test_architecture_names_only_modules_that_exist() -> None:
    assert _missing(PAGE.read_text(encoding="utf-8")) == []


def test_architecture_names_every_module() -> None:
    assert _unnamed(PAGE.read_text(encoding="utf-8")) == []


def test_each_package_docstring_names_its_modules() -> None:
    """A package's ``__init__`` docstring says what each of its modules holds: each is
    named there in backquotes (``stem``, its dotted name, or a name inside it)."""
    left_out = []
    for package, path in MODULES.items():
        if path.name != "__init__.py":
            continue
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        named = set(re.findall(r"`+([\w.]+)", doc))
        for module in MODULES:
            parent, _, stem = module.rpartition(".")
            if parent != package or stem == "__main__":
                continue
            inside = (stem + ".", module + ".")
            if not any(n in {stem, module} or n.startswith(inside) for n in named):
                left_out.append(module)
    assert left_out == []
