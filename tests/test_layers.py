"""The house's import arrows all point down (DEVELOPING.md's picture, checked on every module).

Every import in rankbench/, at module level or inside a function, is resolved to the part of the
house it lands in; a part may import only the parts listed for it below. A new module that
imports upwards (a ranker reading the config, a protocol calling the engine) fails here.
"""

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "rankbench"
BASE = {"errors"}
ALLOWED = {
    "cli": {"app", "__init__"} | BASE,
    "__main__": {"cli"},
    "app": {"config", "components", "engine", "report", "registry", "runfolder", "utils", "params"} | BASE,
    "engine": {"protocols", "rankers", "features", "datasets", "preprocess", "config", "runfolder",
               "components", "registry", "params", "metrics", "utils", "__init__"} | BASE,
    "report": {"config", "runfolder", "registry", "metrics", "utils"} | BASE,
    "protocols": {"rankers", "datasets", "metrics", "params", "components", "registry", "records", "utils"} | BASE,
    "rankers": {"params", "registry", "metrics", "utils"} | BASE,
    "features": {"datasets", "preprocess", "params", "registry", "utils"} | BASE,
    "datasets": {"params", "registry", "utils"} | BASE,
    "preprocess": {"params", "registry"} | BASE,
    "config": {"components", "registry", "params", "metrics"} | BASE,
    "runfolder": {"records", "utils"} | BASE,
    "records": {"metrics", "utils"} | BASE,
    "components": {"registry", "params", "utils"} | BASE,
    "registry": {"params", "utils"} | BASE,
    "params": BASE,
    "metrics": set(),
    "utils": BASE,
    "errors": set(),
    "__init__": set(),
}
# within rankers/, protocols may use only the contracts, not an algorithm
PROTOCOL_MAY_USE = {"rankers.base", "datasets.base"}


def part_of(path: Path) -> str:
    rel = path.relative_to(PKG)
    return rel.parts[0].removesuffix(".py")


def imports(path: Path):
    """(target module path inside rankbench, e.g. 'rankers.base') of every rankbench import."""
    tree = ast.parse(path.read_text())
    here = path.relative_to(PKG).with_suffix("").parts
    pkg = here[:-1]  # a module's package, and an __init__'s own (its folder)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                mod = ".".join(base + tuple(node.module.split("."))) if node.module else ".".join(base)
            elif node.module and node.module.startswith("rankbench"):
                mod = node.module.removeprefix("rankbench").lstrip(".")
            else:
                continue
            if node.module:
                yield mod or "__init__"
            # a name imported from a package may be a module of its own (``from . import build``)
            yield from (f"{mod}.{a.name}".lstrip(".") for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("rankbench"):
                    yield a.name.removeprefix("rankbench").lstrip(".") or "__init__"


def test_every_import_points_down():
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        part = part_of(path)
        for target in imports(path):
            top = target.split(".")[0] or "__init__"
            if not (PKG / top).is_dir() and not (PKG / f"{top}.py").is_file():
                top = "__init__"  # a name of the package itself, e.g. __version__
            if top == part:
                continue
            if top not in ALLOWED[part]:
                bad.append(f"{path.relative_to(PKG.parent)} imports rankbench.{target} ({part} -> {top})")
            elif part == "protocols" and top in ("rankers", "datasets") and \
                    ".".join(target.split(".")[:2]) not in PROTOCOL_MAY_USE:
                bad.append(f"{path.relative_to(PKG.parent)} imports an algorithm: rankbench.{target}")
    assert not bad, "\n".join(bad)


def test_every_part_is_declared():
    parts = {part_of(p) for p in PKG.rglob("*.py")}
    assert parts <= set(ALLOWED), parts - set(ALLOWED)


def modules() -> dict[str, Path]:
    """'report.build' -> its file, for every module of rankbench ('' is the package itself)."""
    out = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(PKG).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def find_circle(graph: dict[str, set[str]]) -> list[str]:
    """One circle of ``graph`` (module -> the modules it imports) as [a, b, ..., a], or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt, path + [nxt])):
                return found
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return []


def test_find_circle_finds_a_planted_circle():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]


def test_no_module_imports_itself_through_others():
    """No import circle between modules, inside a part too (report's plots and build once formed one):
    every import counts, those inside functions too, and importing ``a.b`` runs ``a``'s __init__."""
    mods = modules()
    graph = {}
    for name, path in mods.items():
        graph[name] = set()
        for target in imports(path):
            target = "" if target == "__init__" else target
            bits = target.split(".")
            graph[name] |= {m for m in (".".join(bits[:i]) for i in range(len(bits) + 1)) if m in mods and m != name}
    assert len(graph) > 100 and sum(map(len, graph.values())) > 500  # the walk sees the house
    assert not find_circle(graph), " -> ".join(find_circle(graph))


def test_the_parts_allowed_form_no_circle():
    """The parts' allowed imports (ALLOWED) are a ladder: no part may reach itself through others."""
    graph = {part: {t for t in allowed if t != part} for part, allowed in ALLOWED.items()}
    assert not find_circle(graph), " -> ".join(find_circle(graph))


def test_developing_names_only_files_that_exist():
    """Every file or folder DEVELOPING.md names (links, `paths`, the picture's modules) is in the tree:
    at the root, under rankbench/, or, a bare module name, somewhere in rankbench/."""
    root = PKG.parent
    text = (root / "DEVELOPING.md").read_text()
    picture = text.split("```")[1]
    named = set(re.findall(r"\]\(([^)#]+)", text)) | set(re.findall(r"`([\w./-]+(?:\.py|\.md|\.yaml|/))`", text))
    named |= set(re.findall(r"[\w/]+\.py|\b[a-z_]+/", picture))
    built = {"site/"}  # what make docs writes
    missing = [n for n in sorted(named - built) if not ((root / n).exists() or (PKG / n).exists()
                                                       or ("/" not in n.rstrip("/") and any(PKG.rglob(n.rstrip("/")))))]
    assert len(named) > 40 and not missing, missing
