"""What a session imports of the package: only what the session asked for.

The plugin is an entry point, so it is imported into every pytest session of its environment,
and pytest may compile each of its modules from source in every process (no bytecode cache of
its own to read: ``PYTHONDONTWRITEBYTECODE``, a read-only install). An inert session must pay for
the option declarations alone; the runner's short record-mode sessions must not load what only a
record, a store or JUnit XML needs. Each session runs in a fresh process and writes, at its end,
the package's modules it had loaded.
"""

from __future__ import annotations

import pytest

#: What an inert session may load: the entry point, its options and the errors they raise.
INERT = {"pytest_evidence", "pytest_evidence.plugin", "pytest_evidence.options", "pytest_evidence.errors"}
#: What only a session that writes a record needs.
RECORD_ONLY = {
    "pytest_evidence.finish",
    "pytest_evidence.assemble",
    "pytest_evidence.store",
    "pytest_evidence.junit_properties",
    "pytest_evidence.summary",
    "pytest_evidence.environment",  # the runner probes each side's environment itself
}
#: The optional concerns, each loaded only when its option asks for it.
OPTIONAL = {
    "pytest_evidence.deps",
    "pytest_evidence.netguard",
    "pytest_evidence.sockguard",
    "pytest_evidence.select",
    "pytest_evidence.scope",
}


@pytest.fixture(autouse=True)
def _not_a_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """This suite may itself run in an xdist worker: the sessions it starts must not think so."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)


def _loaded(pytester: pytest.Pytester, *args: str) -> dict[str, set[str]]:
    """The package's modules each process of the session had loaded at its very end, by process:
    ``main``, or the xdist worker's name."""
    pytester.makeconftest(
        """
        import os
        import sys

        import pytest

        @pytest.hookimpl(trylast=True)
        def pytest_unconfigure(config):
            names = sorted(m for m in sys.modules if m.split(".")[0] == "pytest_evidence")
            with open("loaded-%s.txt" % os.environ.get("PYTEST_XDIST_WORKER", "main"), "w") as fh:
                fh.write("\\n".join(names))
        """
    )
    pytester.makepyfile(test_a="def test_a():\n    pass\n", test_b="def test_b():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return {p.stem[len("loaded-") :]: set(p.read_text().split()) for p in pytester.path.glob("loaded-*.txt")}


def test_an_inert_session_loads_the_option_declarations_only(pytester: pytest.Pytester) -> None:
    loaded = _loaded(pytester)["main"]
    assert "pytest_evidence.plugin" in loaded, "the entry point did not load: nothing was measured"
    assert loaded <= INERT, sorted(loaded - INERT)


RECORD_MODE = ("-p", "evidence", "--evidence-record-mode", "--evidence-stream=s.jsonl", "--evidence-watch=watch.txt")


def test_a_record_mode_session_loads_no_record_store_junit_or_unasked_code(pytester: pytest.Pytester) -> None:
    (pytester.path / "watch.txt").write_text("json\n")
    loaded = _loaded(pytester, *RECORD_MODE)["main"]
    assert "pytest_evidence.recorder" in loaded
    assert not loaded & (RECORD_ONLY | OPTIONAL), sorted(loaded & (RECORD_ONLY | OPTIONAL))
    assert "json/__init__.py" in (pytester.path / "s.jsonl").read_text()  # the watch did run


def test_an_optional_concern_is_loaded_when_asked_for(pytester: pytest.Pytester) -> None:
    (pytester.path / "watch.txt").write_text("json\n")
    (pytester.path / "ids.txt").write_text("test_a.py::test_a\n")
    (pytester.path / "files.txt").write_text("test_a.py\n")
    asked = ("--evidence-no-network", "--evidence-deps=.", "--evidence-select=ids.txt", "--evidence-collect=files.txt")
    loaded = _loaded(pytester, *RECORD_MODE, *asked)["main"]
    assert OPTIONAL <= loaded, sorted(OPTIONAL - loaded)


def test_a_session_that_writes_the_record_loads_what_it_needs(pytester: pytest.Pytester) -> None:
    loaded = _loaded(pytester, "-p", "evidence", "--evidence-out=e.json")["main"]
    assert RECORD_ONLY <= loaded, sorted(RECORD_ONLY - loaded)
    assert (pytester.path / "e.json").exists()


def test_an_xdist_worker_loads_neither_the_recorder_nor_the_store(pytester: pytest.Pytester) -> None:
    """Its reports go to the controller, which alone streams, assembles and keeps the store."""
    loaded = _loaded(pytester, "-p", "evidence", "--evidence-out=e.json", "-n", "2")
    workers = {name: modules for name, modules in loaded.items() if name != "main"}
    assert sorted(workers) == ["gw0", "gw1"] and RECORD_ONLY <= loaded["main"]
    for modules in workers.values():
        kept = modules & (RECORD_ONLY | {"pytest_evidence.recorder"})
        assert not kept, sorted(kept)
