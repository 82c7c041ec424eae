"""The built-in example: a small shop package with an off-by-one bug at B, and candidates.

One builder serves the demo (``evidence-runner demo``) and the end-to-end tests, so the example
a user sees is the example the tests certify. Every candidate is a real commit on top of B.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
from dataclasses import dataclass

PRICE_B = '''"""Prices for the example shop."""


def bulk_discount(qty: int) -> float:
    """10% off from 10 items on."""
    if qty > 10:
        return 0.10
    return 0.0


def total(unit: float, qty: int) -> float:
    return round(unit * qty * (1 - bulk_discount(qty)), 2)


def price_label(amount: float) -> str:
    return "%.2f" % amount
'''

CLI = '''"""``python -m shop.cli QTY``: the total for QTY items at 2.00."""

from __future__ import annotations

import sys

from shop.price import price_label, total


def main(argv: list[str]) -> None:
    print(price_label(total(2.0, int(argv[0]))))


if __name__ == "__main__":
    main(sys.argv[1:])
'''

TEST_CLI = """import pathlib
import subprocess
import sys

import pytest

import shop

ROOT = pathlib.Path(shop.__file__).resolve().parent.parent


@pytest.mark.integration
def test_cli_prints_the_total():
    out = subprocess.run([sys.executable, "-m", "shop.cli", "3"], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "6.00"
"""

TEST_PRICE = """from shop.price import bulk_discount, total


def test_small_order_has_no_discount():
    assert bulk_discount(3) == 0.0


def test_large_order_discount():
    assert bulk_discount(50) == 0.10


def test_total_small():
    assert total(2.0, 3) == 6.0
"""

TEST_CART = """from shop.cart import Cart


def test_cart_total():
    cart = Cart()
    cart.add(2.0, 3)
    assert cart.total() == 6.0
"""

CART = '''"""A cart sums line totals."""

from shop.price import total


class Cart:
    def __init__(self) -> None:
        self.lines: list[tuple[float, int]] = []

    def add(self, unit: float, qty: int) -> None:
        self.lines.append((unit, qty))

    def total(self) -> float:
        return sum(total(unit, qty) for unit, qty in self.lines)
'''

REPRODUCER = """from shop.price import bulk_discount


def test_ten_items_get_discount():
    assert bulk_discount(10) == 0.10
"""

FIXED = PRICE_B.replace("qty > 10", "qty >= 10")

CONFTEST_REWRITE = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""

REPRODUCER_ONLINE = """import urllib.request

from shop.price import bulk_discount


def test_ten_items_get_discount():
    try:
        urllib.request.urlopen("http://example.com/discounts", timeout=5)
    except OSError:
        pass
    assert bulk_discount(10) == 0.10
"""

BASELINE_FILES = {
    "shop/__init__.py": '"""The example shop."""\n',
    "shop/price.py": PRICE_B,
    "shop/cart.py": CART,
    "tests/test_price.py": TEST_PRICE,
    "tests/test_cart.py": TEST_CART,
    "shop/cli.py": CLI,
    "tests/integration/test_cli.py": TEST_CLI,
    "pyproject.toml": (
        '[project]\nname = "shop"\nversion = "0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n'
        'markers = ["integration: end-to-end runs of the command line"]\n\n'
        "[tool.mypy]\nwarn_unused_ignores = true\n"
    ),
}

#: Candidate name -> (what it is, files it writes over B, paths it deletes).
CANDIDATES: dict[str, tuple[str, dict[str, str], tuple[str, ...]]] = {
    "honest-fix": (
        "fixes the boundary and adds a reproducer",
        {"shop/price.py": FIXED, "tests/test_boundary.py": REPRODUCER},
        (),
    ),
    "no-fix": ("adds the reproducer but leaves the bug", {"tests/test_boundary.py": REPRODUCER}, ()),
    "vacuous": (
        "a 'fix' whose new test passes on the buggy code too",
        {
            "shop/price.py": PRICE_B.replace('"""10% off', '"""Ten percent off'),
            "tests/test_boundary.py": REPRODUCER.replace("bulk_discount(10)", "bulk_discount(11)"),
        },
        (),
    ),
    "regression": (
        "fixes the boundary but breaks large orders",
        {
            "shop/price.py": FIXED.replace("return 0.10", "return 0.10 if qty < 20 else 0.0"),
            "tests/test_boundary.py": REPRODUCER,
        },
        (),
    ),
    "flaky-fix": (
        "fixes the bug with a reproducer that passes one run in two",
        {
            "shop/price.py": FIXED,
            "tests/test_boundary.py": REPRODUCER
            + """

import pathlib

_FLIP = pathlib.Path(__file__).with_name(".flip")


def test_flip_flop():
    n = int(_FLIP.read_text()) if _FLIP.exists() else 0
    _FLIP.write_text(str(n + 1))
    assert n % 2 == 1
""",
        },
        (),
    ),
    "empty": (
        "deletes every test",
        {"shop/price.py": FIXED},
        ("tests/test_price.py", "tests/test_cart.py", "tests/integration/test_cli.py"),
    ),
    "syntax-error": (
        "a fix with a syntax error",
        {
            "shop/price.py": FIXED.replace(
                "def bulk_discount(qty: int) -> float:", "def bulk_discount(qty: int) -> float"
            ),
            "tests/test_boundary.py": REPRODUCER,
        },
        (),
    ),
    "undefined-name": (
        "a fix that also references an undefined name",
        {
            "shop/price.py": FIXED + "\n\ndef describe() -> str:\n    return undefined_label\n",
            "tests/test_boundary.py": REPRODUCER,
        },
        (),
    ),
    "lint-warning": (
        "an honest fix with an unused import (a warning, not a halt)",
        {"shop/price.py": "import os\n" + FIXED, "tests/test_boundary.py": REPRODUCER},
        (),
    ),
    "type-error": (
        "a fix that passes its tests but does not type-check",
        {
            "shop/price.py": FIXED.replace("if qty >= 10:", 'threshold: int = "10"\n    if qty >= int(threshold):'),
            "tests/test_boundary.py": REPRODUCER,
        },
        (),
    ),
    "integration-break": (
        "fixes the bug but breaks the command line, which only an integration test runs",
        {"shop/price.py": FIXED.replace('"%.2f" % amount', '"%.1f" % amount'), "tests/test_boundary.py": REPRODUCER},
        (),
    ),
    "skip-tamper": (
        "breaks large orders and skips the test that notices",
        {
            "shop/price.py": FIXED.replace("return 0.10", "return 0.10 if qty < 20 else 0.0"),
            "tests/test_boundary.py": REPRODUCER,
            "tests/test_price.py": TEST_PRICE.replace(
                "def test_large_order_discount", "import pytest\n\n\n@pytest.mark.skip\ndef test_large_order_discount"
            ),
        },
        (),
    ),
    "conftest-tamper": (
        "leaves the bug and adds a conftest that reports every failure as a pass",
        {"tests/test_boundary.py": REPRODUCER, "tests/conftest.py": CONFTEST_REWRITE},
        (),
    ),
    "deselect-tamper": (
        "breaks large orders and deselects the test that notices in addopts",
        {
            "shop/price.py": FIXED.replace("return 0.10", "return 0.10 if qty < 20 else 0.0"),
            "tests/test_boundary.py": REPRODUCER,
            "pyproject.toml": BASELINE_FILES["pyproject.toml"].replace(
                'pythonpath = ["."]',
                'pythonpath = ["."]\naddopts = "--deselect tests/test_price.py::test_large_order_discount"',
            ),
        },
        (),
    ),
    "os-exit": (
        "a fix whose module ends the test process with os._exit(0) when imported",
        {"shop/price.py": "import os\n\nos._exit(0)\n" + FIXED, "tests/test_boundary.py": REPRODUCER},
        (),
    ),
    "network": (
        "a fix whose reproducer calls a web service first",
        {"shop/price.py": FIXED, "tests/test_boundary.py": REPRODUCER_ONLINE},
        (),
    ),
}

#: What each candidate must get from ``certify``: (verdict, tier that halted, or None).
EXPECTED = {
    "honest-fix": ("CERTIFIED", None),
    "no-fix": ("REJECTED", "T3"),
    "vacuous": ("INCONCLUSIVE", "T3"),
    "regression": ("REJECTED", "T4"),
    "flaky-fix": ("INCONCLUSIVE", "T3"),
    "empty": ("REJECTED", None),
    "syntax-error": ("REJECTED", "T0"),
    "undefined-name": ("REJECTED", "T1"),
    "lint-warning": ("CERTIFIED", None),
    "type-error": ("REJECTED", "T2"),
    "integration-break": ("REJECTED", "T6"),
    # Attacks on the referee stop the climb at the integrity check: REJECTED, no tier halted.
    "skip-tamper": ("REJECTED", None),
    "conftest-tamper": ("REJECTED", None),
    "deselect-tamper": ("REJECTED", None),
    "os-exit": ("REJECTED", None),
    "network": ("INCONCLUSIVE", None),
}

#: The named detection (kind, detail) each adversarial candidate must leave in its record.
EXPECTED_DETECTIONS = {
    "empty": ("empty_collection", None),
    "flaky-fix": ("flaky_quarantined", None),
    "skip-tamper": ("tamper", "skip_marker"),
    "conftest-tamper": ("tamper", "new_conftest"),
    "deselect-tamper": ("tamper", "pytest_config"),
    "os-exit": ("source_interference", "os_exit"),
    "network": ("network_blocked", None),
}


@dataclass(frozen=True)
class ExampleRepo:
    path: pathlib.Path
    baseline: str
    candidates: dict[str, str]  # name -> commit sha

    def certify_args(self, name: str, out: pathlib.Path, store: pathlib.Path | None = None) -> list[str]:
        """``evidence-runner certify`` arguments for candidate ``name`` against B."""
        args = ["--repo", str(self.path), "--baseline", self.baseline, "--candidate", self.candidates[name]]
        return [*args, "--out", str(out), *(["--store", str(store)] if store else [])]


#: Who commits in repositories the project builds itself (the example, the benchmarks): fixed, so
#: that building them never depends on the machine's git configuration.
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "pytest-evidence example",
    "GIT_AUTHOR_EMAIL": "example@pytest-evidence.invalid",
    "GIT_COMMITTER_NAME": "pytest-evidence example",
    "GIT_COMMITTER_EMAIL": "example@pytest-evidence.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(path: pathlib.Path, *args: str) -> str:
    env = dict(os.environ, **GIT_IDENTITY)
    proc = subprocess.run(["git", *args], cwd=path, env=env, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _write(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def build(dest: pathlib.Path) -> ExampleRepo:
    """Create the example repository in ``dest``: B on ``main``, one branch per candidate."""
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q", "-b", "main")
    _write(dest, BASELINE_FILES)
    (dest / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.flip\n")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "B: bulk discount starts at 11 items (bug)")
    baseline = _git(dest, "rev-parse", "HEAD")
    shas: dict[str, str] = {}
    for name, (what, files, deleted) in CANDIDATES.items():
        _git(dest, "checkout", "-q", "-b", name, baseline)
        _write(dest, files)
        for path in deleted:
            (dest / path).unlink()
        _git(dest, "add", "-A")
        _git(dest, "commit", "-q", "-m", "candidate %s: %s" % (name, what))
        shas[name] = _git(dest, "rev-parse", "HEAD")
    _git(dest, "checkout", "-q", "main")
    return ExampleRepo(dest, baseline, shas)
