"""What a change to a Python file did outside function bodies, judged on B's side and on C's.

B's record attributes a test to the functions it reached. A changed line inside a function body
is seen there; a changed line that runs when something else runs is not. This module says, for
the changed lines of one file, what else changed:

* a changed module-level statement, class-body statement or definition header (decorators,
  bases, defaults, the ``def``/``class`` line: a definition added, removed or renamed) changes
  the *names* it binds -- and, inside a class, the class's name; a change that is not a pure
  binding (``names.Binding``) is a *side effect*. The header of a method that is on both sides
  under one name and the same decorators, not a dunder, changes that name only: whoever calls
  it reached it on B (its span holds its header), whoever reads it without calling reads the
  name, while the class's set of names -- what an override, ``hasattr`` or duck typing sees --
  is as it was;
* a definition that runs a changed line outside its own body is an *executor*: a class whose
  header or body outside its methods changed (its methods live in a changed class), a function
  whose nested definition's header changed (the function runs that header each time it runs).
  A function's own header is held by its own span already;
* a changed function that rebinds module-level names through ``global``, a changed module
  ``__getattr__`` or ``__dir__``, and a class-creation hook added, removed or redefined
  (``__init_subclass__``: every subclass statement runs it at import) act on names nobody can
  list: side effects too.

Lines are the exact lines the diff removed (B) or added (C); a pure insertion has no B line.
"""

from __future__ import annotations

import ast
from collections.abc import Collection
from dataclasses import dataclass

from pytest_evidence import syntax
from runner.names import CREATION_HOOKS, Unit, defined, first_line, header_end, units

#: Module-level functions that serve names nobody can list.
_DYNAMIC = frozenset({"__getattr__", "__dir__"})


@dataclass(frozen=True)
class ModuleChange:
    names: frozenset[str]  # module-level and class-level names whose binding changed
    side_effects: tuple[str, ...]  # why the change may act beyond those names (none: empty)
    executors: frozenset[str]  # qualnames of definitions that run a changed line outside their own body


def module_change(
    b_tree: ast.Module, c_tree: ast.Module, b_lines: Collection[int], c_lines: Collection[int]
) -> ModuleChange:
    names: set[str] = set()
    effects: list[str] = []
    executors: set[str] = set()
    trees, changed = {"B": b_tree, "C": c_tree}, {"B": b_lines, "C": c_lines}
    found = {side: units(tree) for side, tree in trees.items()}
    imported = {side: {(u.scope, i) for u in found[side] for i in u.binding.imports} for side in trees}
    for side, other in (("B", "C"), ("C", "B")):
        tree, lines = trees[side], changed[side]
        for unit in found[side]:
            touched = sorted(line for line in lines if unit.start <= line <= unit.end)
            rebound = {i.bound for i in unit.binding.imports if (unit.scope, i) not in imported[other]}
            if not touched or (unit.binding.imports and not rebound):
                continue  # an import line that gained or lost other names: these are bound as before
            scope = unit.scope.split(".") if unit.scope else []
            names.update(rebound - {""} or unit.binding.names, () if _kept_method(unit, found[other]) else scope)
            if not unit.function:
                executors.update(".".join(scope[: i + 1]) for i in range(len(scope)))
            if unit.binding.effect:
                effects.append("%s (line %d on %s)" % (unit.binding.effect, touched[0], side))
            hooks = sorted(unit.binding.names & CREATION_HOOKS) if scope else []
            if hooks:  # a subclass statement anywhere runs it, binding nothing changed
                effects.append("%s.%s changed (line %d on %s)" % (unit.scope, hooks[0], touched[0], side))
            dynamic = sorted(unit.binding.names & _DYNAMIC) if not scope else []
            if dynamic:
                effects.append("module %s changed (line %d on %s)" % (dynamic[0], touched[0], side))
        for qualname, node in defined(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            span = set(range(first_line(node), (node.end_lineno or node.lineno) + 1))
            if not span.intersection(lines):
                continue
            if span.difference(_bodies(node)).intersection(lines):
                executors.add(qualname)
            rebinds = sorted({n for sub in syntax.walk(node) if isinstance(sub, ast.Global) for n in sub.names})
            if rebinds:
                effects.append(
                    "%s rebinds module-level %s through global (on %s)" % (qualname, ", ".join(rebinds), side)
                )
    return ModuleChange(frozenset(names), tuple(effects), frozenset(executors))


def _kept_method(unit: Unit, other: Collection[Unit]) -> bool:
    """``unit`` is the header of a method, not a dunder, that the other side has too, under the
    same decorators (``@abstractmethod`` added changes what every subclass may do)."""
    if not (unit.function and unit.scope) or any(n.startswith("__") and n.endswith("__") for n in unit.binding.names):
        return False
    decorators = [ast.dump(d) for d in unit.decorators]
    return any(
        o.function
        and o.scope == unit.scope
        and o.binding.names == unit.binding.names
        and [ast.dump(d) for d in o.decorators] == decorators
        for o in other
    )


def _bodies(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int]:
    """Lines of ``node`` that run when something else runs: its header (its caller's scope
    runs it), and the bodies of functions nested in it (they run when called)."""
    lines = set(range(first_line(node), header_end(node) + 1))
    for sub in syntax.walk(node):
        if sub is not node and isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines.update(range(header_end(sub) + 1, (sub.end_lineno or sub.lineno) + 1))
    return lines
