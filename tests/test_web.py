"""The web board of `vrhcaby serve` in a real headless browser: Debian's chromium, driven
by Playwright for Python (which never downloads a browser here: it is pointed at the
system's). The page loads, a position is entered, the best play it shows is `vrhcaby
hint`'s, and a money game against the bot, cube included, is played to its end.

Without chromium the tests skip, except under CI (CI=true), where they must run."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest
import test_serve
from test_serve import server

from vrhcaby.cli.main import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("CI") != "true":
    pytest.skip(
        "Debian's chromium is not installed (scripts/install.sh dev)", allow_module_level=True
    )
assert CHROMIUM is not None, "CI runs the browser tests: install chromium (scripts/install.sh)"
if os.environ.get("CI") == "true":
    from playwright import sync_api  # CI runs the browser tests: the dev extra has it
else:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright: the dev extra")

mat_file = test_serve.mat_file  # the fixture: a money session as a .mat file

#: A contact position and roll (see test_serve.MIDGAME).
POSITION, DICE = "4OvgASHgc+QBUA", "52"


@pytest.fixture(scope="module")
def site():
    with server() as (_proc, host, port):
        yield f"http://{host}:{port}"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert not errors, errors


def test_the_page_shows_the_best_play_of_vrhcaby_hint(site, page, capsys):
    capsys.readouterr()
    assert main(["hint", POSITION, DICE, "--plies", "2", "--json"]) == 0
    best = json.loads(capsys.readouterr().out)["moves"][0]
    assert main(["cube", POSITION, "--json"]) == 0  # the default depth, 2 plies
    cube = json.loads(capsys.readouterr().out)
    page.goto(site)
    page.fill("#position-input", POSITION)
    page.fill("#dice-input", DICE)
    page.select_option("#plies-input", "2")
    page.click("#analyse-button")
    page.wait_for_function(
        f"document.querySelector('#hint-table').dataset.position === '{POSITION}'"
    )
    first = page.locator("#hint-table tbody tr").first
    assert first.get_attribute("data-play") == best["play"]
    assert page.locator("#board svg").count() == 1
    # The cube beside it at its own depth, 2-ply unless another is chosen, as the CLI's.
    assert cube["cube_plies"] == 2
    assert page.locator("#cube-action").inner_text().strip() == f"{cube['detail']} (2-ply)"
    # A click on a play draws the position after it.
    first.click()
    page.wait_for_function(
        f"document.querySelector('#board').dataset.position === '{best['position_id']}'"
    )
    # A bad position is one line in the page, not a broken page.
    page.fill("#position-input", "not a position")
    page.click("#analyse-button")
    page.wait_for_function("document.querySelector('#analyse-error').textContent !== ''")
    assert "Position ID" in page.locator("#analyse-error").inner_text()


def test_a_match_is_analysed_as_vrhcaby_analyse_does(site, page, request, capsys):
    mat_file = request.getfixturevalue("mat_file")
    capsys.readouterr()
    assert main(["analyse", str(mat_file), "--plies", "0", "--jobs", "1", "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    page.goto(site)
    page.click("button[data-tab=match]")
    page.set_input_files("#mat-file", str(mat_file))
    page.select_option("#mat-plies", "0")
    page.click("#analyse-match")
    page.wait_for_function("document.querySelector('#match-table').dataset.done === 'yes'")
    names = page.locator("#match-table tbody tr").first.inner_text().split("\t")
    assert [n.strip() for n in names if n.strip()] == [p["name"] for p in want["players"]]
    rows = page.locator("#worst-table tbody tr")
    assert rows.count() == len(want["worst"])
    worst = want["worst"][0]
    assert rows.first.locator("td").nth(2).inner_text() == worst["best"]
    rows.first.click()
    page.wait_for_function(
        f"document.querySelector('#board').dataset.position === '{worst['position']}'"
    )


@pytest.mark.slow
def test_a_game_against_the_bot_is_played_to_its_end(site, page):
    page.goto(f"{site}/?seed=7")
    page.click("button[data-tab=game]")
    page.click("#new-game")
    status = page.locator("#game-status")
    end = time.monotonic() + 240
    turns = doubles = 0
    while status.get_attribute("data-over") is None:
        assert time.monotonic() < end, "the game did not end in 4 minutes"
        assert page.locator("#game-error").inner_text() == ""
        if page.locator(".legal-play").count():
            page.locator(".legal-play").first.click()
            turns += 1
        elif page.locator("#take").is_visible():
            page.click("#take")  # play on: the game still ends, at a higher cube
        elif page.locator("#double").is_visible() and turns > 30 and not doubles:
            page.click("#double")
            doubles += 1
        elif page.locator("#roll").is_visible():
            page.click("#roll")
        else:
            page.wait_for_timeout(20)
    assert status.get_attribute("data-over") in ("human", "bot")
    assert "Game over" in status.inner_text()
    assert page.locator("#score-line").inner_text() != "You 0 : 0 bot"
