"""The HTML report in a real browser: headless Chromium, driven by Selenium, no network.

The parser tests read what the page says; these check what only a browser can -- that the page's
script runs under its own Content Security Policy, that the filters leave exactly the right rows
on screen, and that loading the page logs nothing to the console (an error or warning there is a
broken page, or markup that escaped into it). Skipped, saying why, where Chromium, chromedriver or
Selenium is not installed (``apt-get install chromium chromium-driver``, ``pip install selenium``).
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import Record
from test_export_html import HOSTILE_ID, hostile

from pytest_evidence.model import EvidenceRecord
from runner.exports import html

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "docs"))
from screenshot import CHROMIUM_FLAGS  # docs/ holds the one list of flags

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = pytest.mark.skipif(
    not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)),
    reason="no headless browser: apt-get install chromium chromium-driver (%s, %s)" % (CHROMIUM, CHROMEDRIVER),
)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install selenium")
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402 - only once selenium is known here
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

Records = dict[str, tuple[pathlib.Path, Record]]

#: The screenshot script's flags (headless, offline, no profile state; ``--no-sandbox`` because
#: Chromium refuses to start as root without it), at the size the filters are clicked at.
FLAGS = (*CHROMIUM_FLAGS, "--window-size=1280,1600")


@pytest.fixture
def browser(tmp_path: pathlib.Path) -> Iterator[Any]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, "--user-data-dir=%s" % (tmp_path / "profile")):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option("prefs", {"download.default_directory": str(tmp_path / "downloads")})
    # Both paths given: Selenium Manager, which would look for drivers online, is never asked.
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER, log_output=str(tmp_path / "chromedriver.log"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        yield driver
    finally:
        driver.quit()


def open_report(browser: Any, record: EvidenceRecord, tmp_path: pathlib.Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(html.render(record), encoding="utf-8")
    browser.get(page.as_uri())


def visible_rows(browser: Any) -> list[str]:
    rows = browser.find_elements(By.CSS_SELECTOR, "#tests tbody tr.test")
    return [r.get_attribute("data-test") for r in rows if r.is_displayed()]


def downloaded(folder: pathlib.Path, timeout: float = 10.0) -> pathlib.Path:
    """The one file the browser saved into ``folder``, once it is whole: a browser may create
    the file's final name empty before it writes (Firefox's placeholder beside its ``.part``),
    so the file must have content and no partial download be left beside it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = list(folder.glob("*.json"))
        partial = [p for p in folder.iterdir() if p.suffix in (".part", ".crdownload")] if folder.exists() else []
        if done and not partial and done[0].stat().st_size > 0:
            (path,) = done
            return path
        time.sleep(0.1)
    raise AssertionError("nothing saved into %s within %.0f s" % (folder, timeout))


def console(browser: Any) -> list[dict[str, Any]]:
    """What the page logged that is more than information: errors and warnings."""
    entries: list[dict[str, Any]] = browser.get_log("browser")
    return [e for e in entries if e["level"] in ("SEVERE", "WARNING")]


def test_filters_leave_exactly_the_matching_rows_and_the_console_stays_silent(
    browser: Any, example_records: Records, tmp_path: pathlib.Path
) -> None:
    doc = example_records["honest-fix"][1]
    open_report(browser, EvidenceRecord.from_dict(doc), tmp_path)
    everything = [r["test_id"] for r in doc["results"]]
    assert browser.find_element(By.ID, "filters").is_displayed()  # the script ran: it shows the filters
    assert visible_rows(browser) == everything
    assert browser.find_element(By.ID, "shown").text == "%d of %d shown" % (len(everything), len(everything))

    Select(browser.find_element(By.ID, "filter-bc")).select_by_value("bug-discriminating")
    assert visible_rows(browser) == ["tests/test_boundary.py::test_ten_items_get_discount"]
    assert browser.find_element(By.ID, "shown").text == "1 of %d shown" % len(everything)

    Select(browser.find_element(By.ID, "filter-bc")).select_by_value("")
    Select(browser.find_element(By.ID, "filter-tier")).select_by_value("T4")
    assert visible_rows(browser) == [
        "tests/test_cart.py::test_cart_total",
        "tests/test_price.py::test_small_order_has_no_discount",
        "tests/test_price.py::test_large_order_discount",
        "tests/test_price.py::test_total_small",
    ]
    browser.find_element(By.ID, "filter-text").send_keys("small")
    assert visible_rows(browser) == [
        "tests/test_price.py::test_small_order_has_no_discount",
        "tests/test_price.py::test_total_small",
    ]
    browser.find_element(By.CSS_SELECTOR, "#filters button[type=reset]").click()
    assert visible_rows(browser) == everything

    # a count in the B x C grid filters the rows to its class
    browser.find_element(By.CSS_SELECTOR, "#bc-grid button[data-value='regression-only']").click()
    assert Select(browser.find_element(By.ID, "filter-bc")).first_selected_option.get_attribute("value") == (
        "regression-only"
    )
    regression_only = [r for r in everything if doc["annotations"].get(r, {}).get("bc_class") == "regression-only"]
    assert visible_rows(browser) == regression_only and len(regression_only) == 5
    assert console(browser) == []


def test_a_failure_unfolds_a_hostile_test_id_runs_nothing_and_the_record_saves_whole(
    browser: Any, example_records: Records, tmp_path: pathlib.Path
) -> None:
    record = hostile(EvidenceRecord.from_dict(example_records["regression"][1]))
    open_report(browser, record, tmp_path)
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 - reading it is what raises when no alert is open
    assert browser.find_elements(By.TAG_NAME, "img") == []
    row = browser.find_element(By.CSS_SELECTOR, "#tests tbody tr.test[data-tier='T3']")
    assert row.get_attribute("data-test") == HOSTILE_ID
    assert row.find_element(By.CSS_SELECTOR, "td.test-id").text == HOSTILE_ID

    failed = browser.find_element(By.CSS_SELECTOR, "tr[data-test='tests/test_price.py::test_large_order_discount']")
    excerpt = failed.find_element(By.CSS_SELECTOR, "pre.excerpt")
    assert not excerpt.is_displayed()
    failed.find_element(By.TAG_NAME, "summary").click()
    assert excerpt.is_displayed() and "assert 0.0 == 0.1" in excerpt.text

    Select(browser.find_element(By.ID, "filter-outcome")).select_by_value("fail")
    assert visible_rows(browser) == ["tests/test_price.py::test_large_order_discount"]

    # the page is the record: saving it gives back the record, the hostile id intact
    browser.find_element(By.ID, "save-record").click()
    saved = downloaded(tmp_path / "downloads")
    assert saved.name == "evidence-%s.json" % record.run_id
    assert json.loads(saved.read_text(encoding="utf-8")) == record.to_dict()
    assert console(browser) == []
