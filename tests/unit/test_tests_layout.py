"""The tests' own layout holds (docs/architecture.md, "Where a test goes"): every test module
lives in a tier's folder, which gives it its marker, and no module imports a test module or a
tier's conftest: what tests share lives in tests/support/."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.tiers import TIERS

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
SHARED = "tests.support"
"""What a module may import from tests/: the support layer."""


def imported(path: Path) -> list[str]:
    """Returns the modules `path` imports from, relative imports spelled with their dots."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            names.extend(
                f"{module}.{alias.name}" if node.module in {"tests", None} else module
                for alias in node.names
            )
    return names


def test_every_test_module_lives_in_a_tier_folder() -> None:
    outside = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("test_*.py")
        if path.relative_to(TESTS).parts[0] not in TIERS
    ]
    assert outside == [], "a test module outside tests/<tier>/ has no tier"


def test_every_other_module_under_tests_is_a_conftest_or_in_the_support_layer() -> None:
    stray = [
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("*.py")
        if not path.name.startswith("test_")
        and path.name not in {"conftest.py", "__init__.py"}
        and path.relative_to(TESTS).parts[0] != "support"
    ]
    assert stray == [], "a helper module belongs in tests/support/"


def test_no_module_imports_a_test_module_or_a_tiers_conftest() -> None:
    crossing = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted([*TESTS.rglob("*.py"), *(ROOT / "bench").rglob("*.py")])
        for name in imported(path)
        if name.startswith(".")
        or (name.startswith("tests.") and not name.startswith(SHARED))
        or name == "tests"
    ]
    assert crossing == [], "move what is shared into tests/support/"
