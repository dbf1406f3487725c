"""bench/cube_games.py: cube actions judged on a tournament's own cube decisions, weighted
back to the games; checked against a plain recount over the games' records (a stand-in
judge, so that the test is fast and the arithmetic exact)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from helpers_bench import bench_script

import engine
from agents import load_agent
from vrhcaby.cli import main as cli
from vrhcaby.equity.context import GameContext

pytest.importorskip("gnubg_nn")
cube_games = bench_script("cube_games")


class StandInJudge:
    """ND, DT, DP drawn from a hash of the board and the cube: any values will do, as
    long as the recount sees the same ones."""

    def __call__(self, board: np.ndarray, context: GameContext):
        return (*self.values(board, context), np.zeros(5))

    @staticmethod
    def values(board: np.ndarray, context: GameContext) -> tuple[float, float, float]:
        key = np.asarray(board, np.int8).tobytes() + bytes([context.cube_value])
        h = hashlib.sha256(key).digest()
        return tuple(float(x) / 128 - 1 for x in h[:3])  # type: ignore[return-value]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cube-games") / "run"
    argv = ["tournament", "td:td-80", "gnubg?plies=0", "--games", "8", "--seed", "3"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert cli.main([*argv, "--jobs", "1", "--no-progress", "--out", str(out)]) in (0, None)
    return out


def plain_decisions(folder: Path) -> list[dict]:
    """Every cube decision of the games, read plainly from games.jsonl: the board before
    the roll of each turn but the first (for a double passed, the board the last play
    left), whose side on roll holds or shares the cube; who was on roll, and whether it
    doubled."""
    found = []
    for line in (folder / "games.jsonl").read_text().splitlines():
        game = json.loads(line)
        cube, owner, last, doubled = 1, -1, None, False
        before = (1, -1)
        for turn in game["turns"]:
            action = turn.get("action")
            if action == "double":
                doubled = True
            elif action in ("take", "beaver"):
                cube, owner = (cube * 2 if action == "take" else turn["cube"]), turn["player"]
            elif action == "drop":
                mover = 1 - turn["player"]
                pos = engine.Position.from_id(last["position_id"])
                if last["play"]:
                    pos = engine.Play.parse(last["play"], pos, tuple(last["dice"])).position
                found.append(dict(board=pos.flip().board, mover=mover, doubled=True,
                                  cube=before, a=game["a_seat"]))  # fmt: skip
            elif "dice" in turn:
                if last is not None:
                    found.append(dict(board=engine.Position.from_id(turn["position_id"]).board,
                                      mover=turn["player"], doubled=doubled, cube=before,
                                      a=game["a_seat"]))  # fmt: skip
                last, before, doubled = turn, (cube, owner), False
    return [d for d in found if d["cube"][1] in (-1, d["mover"])]


def test_every_decision_drawn_costs_what_a_plain_recount_finds(folder, tmp_path, monkeypatch):
    """With every decision of the games judged, the strata hold what the records hold,
    and each agent's cost a game in each seat is the plain sum, over the games' cube
    decisions, of its doubler error on its own turns and its taker error where the other
    side doubled, divided by the games."""
    monkeypatch.setattr(cube_games, "GnubgCubeJudge", StandInJudge)
    out, result = tmp_path / "set.npz", tmp_path / "r.json"
    argv = ["--build", str(folder), "--set", str(out), "--decisions", "100000"]
    agents = ["td:td-80", "gnubg?plies=0"]
    with contextlib.redirect_stdout(io.StringIO()):
        assert cube_games.main([*argv, *agents, "--json", str(result)]) == 0
    plain = plain_decisions(folder)
    facts = json.loads(out.with_suffix(".json").read_text())
    assert facts["games"] == 8 and sum(facts["strata"].values()) == len(plain) > 50
    a_doubles = sum(d["doubled"] and d["mover"] == d["a"] for d in plain)
    assert a_doubles > 0
    assert a_doubles == sum(n for k, n in facts["strata"].items() if k.startswith("a-doubled"))
    found = {r["agent"]: r for r in json.loads(result.read_text())["results"]}
    for spec in agents:
        agent = load_agent(spec)
        owed = {"a": 0.0, "b": 0.0}
        for d in plain:
            context = GameContext(
                cube_value=d["cube"][0],
                cube_owner="centre" if d["cube"][1] < 0 else "me",
                jacoby=True,  # the games' rule (money: in force whoever holds the cube)
            )
            nd, dt, dp = StandInJudge.values(d["board"], context)
            position = engine.Position(d["board"])
            mover = "a" if d["mover"] == d["a"] else "b"
            other = "b" if mover == "a" else "a"
            best = max(nd, min(dt, dp))
            owed[mover] += best - (min(dt, dp) if agent.double_decision(position, context) else nd)
            if d["doubled"]:
                takes = agent.take_decision(position.flip(), context.flip())
                owed[other] += (dt if takes else dp) - min(dt, dp)
        for seat in ("a", "b"):
            assert found[spec][f"{seat}-total"]["mean"] == pytest.approx(owed[seat] / 8)
            assert found[spec][f"{seat}-total"]["se"] == pytest.approx(0, abs=1e-12)
    paired = found["gnubg?plies=0"]["a-total-paired"]["mean"]
    assert paired == pytest.approx(
        found["gnubg?plies=0"]["a-total"]["mean"] - found["td:td-80"]["a-total"]["mean"]
    )


def test_a_drawn_stratum_stands_for_all_of_its_kind():
    """Two strata drawn 2 of 10 and 5 of 5: each drawn decision weighs its stratum's
    size over the drawn, per game, and only the stratum drawn in part is uncertain."""
    sources = np.array(["a-held-centred-clear"] * 2 + ["b-doubled-owned-close"] * 5)
    facts = {"games": 4, "strata": {"a-held-centred-clear": 10, "b-doubled-owned-close": 5}}
    weight, strata = cube_games.per_game(sources, facts)
    np.testing.assert_allclose(weight, [10 / 2 / 4] * 2 + [1 / 4] * 5)
    x = np.array([1.0, 3.0, 2.0, 0.0, 1.0, 1.0, 1.0])
    total, se = cube_games.cost(x, weight, strata)
    assert total == pytest.approx((10 / 4) * 2.0 + (5 / 4) * 1.0)
    # The drawn stratum's variance 2 over its 2 of 10; the whole one adds nothing.
    assert se == pytest.approx((10 / 4) * np.sqrt(2.0 / 2 * (1 - 2 / 10)))


def test_bad_input_is_one_line(tmp_path, capsys):
    assert cube_games.main(["--build", str(tmp_path), "--set", str(tmp_path / "s.npz")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no games.jsonl" in err
