"""`vrhcaby hint`, `cube` and `eval` on a small network: the numbers against a plain
forward pass of the checkpoint's weights (numpy and torch), the cube answers against
`vrhcaby.equity.cube`, one-line errors for bad input, and no torch on the command line's path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import engine
import vrhcaby.cli.main as cli
from vrhcaby.equity import cube
from vrhcaby.nn import checkpoint
from vrhcaby.nn.encode import get_encoding
from vrhcaby.nn.net import NetConfig

ROOT = Path(__file__).parents[1]
START = "4HPwATDgc/ABMA"
CONFIG = NetConfig("tesauro", (10,), "sigmoid")


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    rng = np.random.default_rng(7)
    arrays = {}
    for i, (n_in, n_out) in enumerate(zip(CONFIG.sizes[:-1], CONFIG.sizes[1:], strict=True)):
        arrays[f"model/{2 * i}.weight"] = rng.normal(0, 0.4, (n_out, n_in)).astype(np.float32)
        arrays[f"model/{2 * i}.bias"] = rng.normal(0, 0.4, n_out).astype(np.float32)
    path = tmp_path_factory.mktemp("net") / "net.pt"
    checkpoint.save(path, arrays, {"net": CONFIG.to_dict(), "config": {"variant": "standard"}})
    return path, arrays


def forward(arrays: dict, boards: np.ndarray) -> np.ndarray:
    """The network by hand: encode, two dense sigmoid layers, conditional -> joint."""
    x = get_encoding("tesauro")[0](np.asarray(boards, dtype=np.int8)).astype(np.float64)
    h = 1 / (1 + np.exp(-(x @ arrays["model/0.weight"].T + arrays["model/0.bias"])))
    c = 1 / (1 + np.exp(-(h @ arrays["model/2.weight"].T + arrays["model/2.bias"])))
    win = c[:, 0]
    wg = win * c[:, 1]
    lg = (1 - win) * c[:, 3]
    return np.stack([win, wg, wg * c[:, 2], lg, lg * c[:, 4]], axis=1)


def torch_forward(arrays: dict, boards: np.ndarray) -> np.ndarray:
    torch = pytest.importorskip("torch")
    from vrhcaby.nn.net import build_model, joint

    model = build_model(CONFIG)
    state = {k.removeprefix("model/"): torch.from_numpy(v) for k, v in arrays.items()}
    model.load_state_dict(state)
    x = torch.from_numpy(get_encoding("tesauro")[0](np.asarray(boards, dtype=np.int8)))
    with torch.no_grad():
        return joint(model(x.float())).numpy().astype(np.float64)


def invert(p: np.ndarray) -> np.ndarray:
    return np.array([1 - p[0], p[3], p[4], p[1], p[2]])


#: The five probabilities' heads in the tables of hint, cube and eval, as gnubg's.
HEADS = " ".join(f"{name:>6}" for name in ("W", "W(g)", "W(bg)", "L(g)", "L(bg)"))


def run_cli(argv: list[str], capsys, monkeypatch) -> tuple[int, str, str]:
    monkeypatch.setattr(cli, "COMMANDS", ("hint", "cube", "eval", "moves"))
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_hint_json_against_a_plain_forward_pass(net, capsys, monkeypatch) -> None:
    path, arrays = net
    code, out, _ = run_cli(
        ["hint", START, "31", "--agent", f"td:{path}", "--json", "-n", "100", "--cubeless"],
        capsys,
        monkeypatch,
    )
    assert code == 0
    moves = json.loads(out)["moves"]
    plays = engine.legal_plays(engine.Position.start(), (3, 1))
    assert sorted(m["play"] for m in moves) == sorted(str(p) for p in plays)
    # position_id: the mover still on roll, as `moves` gives it; next_position_id: the
    # opponent on roll.
    code, out, _ = run_cli(["moves", START, "31", "--json"], capsys, monkeypatch)
    listed = {m["play"]: m for m in json.loads(out)["moves"]}
    for m in moves:
        assert m["position_id"] == listed[m["play"]]["position_id"]
        assert m["next_position_id"] == listed[m["play"]]["next_position_id"]
    boards = np.stack([engine.Position.from_id(m["position_id"]).board for m in moves])
    expected = forward(arrays, boards)
    got = np.array([m["probabilities"] for m in moves])
    np.testing.assert_allclose(got, expected, atol=2e-5)
    np.testing.assert_allclose(got, torch_forward(arrays, boards), atol=2e-5)
    equity = (
        2 * expected[:, 0] - 1 + expected[:, 1] + expected[:, 2] - expected[:, 3] - expected[:, 4]
    )
    np.testing.assert_allclose([m["equity"] for m in moves], equity, atol=1e-4)
    assert [m["equity"] for m in moves] == sorted((m["equity"] for m in moves), reverse=True)


def test_hint_table_and_cubeful_ranking(net, capsys, monkeypatch) -> None:
    path, _ = net
    code, out, _ = run_cli(
        ["hint", START, "6-5", "--agent", f"td:{path}", "-n", "3"], capsys, monkeypatch
    )
    assert code == 0
    lines = out.splitlines()
    # GNU Backgammon's money rules by default, stated in the header.
    assert "roll 6-5" in lines[0] and "money play, Jacoby rule, beavers allowed" in lines[0]
    rows = [line.split() for line in lines[3:6]]
    assert "more; --candidates" in lines[-1]
    assert HEADS in out
    code, out, _ = run_cli(
        ["hint", START, "65", "--agent", f"td:{path}", "--json", "-n", "100"], capsys, monkeypatch
    )
    got = json.loads(out)
    moves = got["moves"]
    assert got["jacoby"] is True and got["beavers"] is True
    for rank, (row, move) in enumerate(zip(rows, moves, strict=False), 1):
        assert row[0] == str(rank) and " ".join(row[1:]).startswith(move["play"])
    # Cubeful: minus the opponent's optimal cubeful equity on roll (centred cube, money),
    # with the Jacoby rule by default and without it on --no-jacoby.
    x = cube.cube_efficiency("contact")
    for flags, jacoby in (([], True), (["--no-jacoby"], False)):
        code, out, _ = run_cli(
            ["hint", START, "65", "--agent", f"td:{path}", "--json", "-n", "100", *flags],
            capsys,
            monkeypatch,
        )
        got = json.loads(out)
        assert got["jacoby"] is jacoby
        for m in got["moves"]:
            after = engine.Position.from_id(m["next_position_id"]).board  # the opponent on roll
            p_opp = invert(np.array(m["probabilities"]))
            assert m["equity"] == pytest.approx(
                -cube.money_cube_decision(p_opp, x=x, jacoby=jacoby).optimal, abs=1e-4
            )
            assert after.shape == (2, 25)


def test_cube_and_eval_json(net, capsys, monkeypatch) -> None:
    path, arrays = net
    board = engine.Position.start().board
    p = invert(forward(arrays, board[::-1][None])[0])
    x = cube.cube_efficiency("contact")
    # Janowski's formula on the 0-ply probabilities at --cube-plies 0 (the default, 2 plies,
    # is tests/test_cubeful.py's). Money play: GNU Backgammon's rules by default (Jacoby,
    # beavers), each can be turned off; the old --jacoby and --beavers flags still work.
    flat = ["--cube-plies", "0"]
    for flags, jacoby, beavers in (
        ([], True, True),
        (["--jacoby", "--beavers"], True, True),
        (["--no-jacoby"], False, True),
        (["--no-jacoby", "--no-beavers"], False, False),
    ):
        code, out, _ = run_cli(
            ["cube", START, "--agent", f"td:{path}", "--json", *flat, *flags],
            capsys,
            monkeypatch,
        )
        assert code == 0
        got = json.loads(out)
        assert (got["jacoby"], got["beavers"]) == (jacoby, beavers) and got["cube_plies"] == 0
        ref = cube.money_cube_decision(p, x=x, jacoby=jacoby, beavers=beavers)
        assert (got["action"], got["double"], got["take"]) == (ref.action, ref.double, ref.take)
        assert got["beaver"] == ref.beaver
        for key in ("nd", "dt", "dp"):
            assert got["equities"][key] == pytest.approx(getattr(ref, key), abs=1e-4)
        np.testing.assert_allclose(got["probabilities"], p, atol=2e-5)
    # A Match ID's Jacoby bit is the position's own rule (cAkAAAAAAAAE: no Jacoby).
    code, out, _ = run_cli(
        ["cube", f"{START}:cAkAAAAAAAAE", "--agent", f"td:{path}"], capsys, monkeypatch
    )
    assert "money play, no Jacoby rule, beavers allowed" in out.splitlines()[0]
    # Match play at 2-4 to 7 (5-away, 3-away), Crawford-free.
    code, out, _ = run_cli(
        [
            "cube",
            START,
            "--agent",
            f"td:{path}",
            "--json",
            *flat,
            "--match-to",
            "7",
            "--score",
            "2-4",
        ],
        capsys,
        monkeypatch,
    )
    got = json.loads(out)
    ref = cube.match_cube_decision(p, away_me=5, away_opp=3, x=x)
    assert got["action"] == ref.action and got["jacoby"] is None and got["beavers"] is None
    assert got["mwc"]["nd"] == pytest.approx(ref.nd_mwc, abs=1e-5)
    code, out, _ = run_cli(
        [
            "eval",
            START,
            "--agent",
            f"td:{path}",
            "--json",
            *flat,
            "--match-to",
            "7",
            "--score",
            "2-4",
        ],
        capsys,
        monkeypatch,
    )
    ev = json.loads(out)
    assert ev["mwc_cubeless"] == pytest.approx(ref.cubeless_mwc, abs=1e-5)
    assert ev["mwc_cubeful"] == pytest.approx(ref.optimal_mwc, abs=1e-5)
    code, out, _ = run_cli(["eval", START, "--agent", f"td:{path}"], capsys, monkeypatch)
    assert code == 0 and "Cubeless equity" in out and "Cubeful equity" in out
    assert HEADS in out
    code, out, _ = run_cli(["cube", START, "--agent", f"td:{path}"], capsys, monkeypatch)
    assert code == 0 and HEADS in out


def test_positions_with_match_ids_and_xgids(net, capsys, monkeypatch) -> None:
    path, _ = net
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:0:0:10"
    code, out, _ = run_cli(["hint", xgid, "--agent", f"td:{path}", "--json"], capsys, monkeypatch)
    assert code == 0 and json.loads(out)["dice"] == [3, 1]
    mid = engine.match_id(engine.MatchState(match_length=5, score=(1, 3), dice_owner=1))
    code, out, _ = run_cli(["cube", f"{START}:{mid}", "--agent", f"td:{path}"], capsys, monkeypatch)
    assert code == 0 and "5-point match, score 3-1" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["cube", START, "--match-to", "5", "--score", "5-1"], "impossible score"),
        (["cube", START, "--match-to", "-1"], "a match is 1 to 25 points"),
        (["cube", START, "--match-to", "26"], "a match is 1 to 25 points"),
        (["cube", START, "--score", "1-1"], "--match-to"),
        (["hint", START], "give the dice"),
        (["hint", START, "71"], "dice"),
        (
            [
                "cube",
                f"{START}:cAkAAAAAAAAE",
                "--match-id",
                engine.match_id(engine.MatchState(match_length=5)),
            ],
            "contradicts",
        ),
        (
            [
                "cube",
                f"{START}:" + engine.match_id(engine.MatchState(game_state=engine.GameState.OVER)),
            ],
            "game is over",
        ),
        (["cube", "nonsense"], "not a Position ID"),
        (["cube", START, "--agent", "pubeval"], "no outcome probabilities"),
        (["cube", START, "--agent", "td:/nonexistent/net.pt"], "not found"),
    ],
)
def test_bad_input_is_one_line(argv, message: str, net, capsys, monkeypatch) -> None:
    path, _ = net
    if "--agent" not in argv:
        argv = [*argv, "--agent", f"td:{path}"]
    code, out, err = run_cli(argv, capsys, monkeypatch)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


@pytest.mark.parametrize(
    ("argv", "shown"),
    [(["hint", START, "31", "--plies", "1"], "/"), (["cube", START], "Proper cube action")],
)
def test_searches_import_no_torch(argv: list[str], shown: str, net) -> None:
    """A 1-ply hint and the cube's default 1-ply search: numpy networks, no torch."""
    path, _ = net
    code = (
        "import sys, vrhcaby.cli.main as cli; cli.COMMANDS = ('hint', 'cube', 'eval'); "
        f"rc = cli.main({[*argv, '--agent', f'td:{path}']!r}); "
        "assert 'torch' not in sys.modules, 'torch was imported'; sys.exit(rc)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert shown in done.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["hint", START, "31", "-n", "100"],
        ["eval", START, "--cube-plies", "0"],
        ["cube", START, "--cube-plies", "0"],
    ],
)
def test_zero_ply_imports_neither_torch_nor_numba(argv: list[str], net) -> None:
    """A 0-ply answer needs one position's plays and a small forward pass: plain Python
    and numpy, so a cold start never loads torch or numba (the cube's default 1-ply
    search loads numba's move generator: `test_searches_import_no_torch`)."""
    path, arrays = net
    code = (
        "import sys, vrhcaby.cli.main as cli; cli.COMMANDS = ('hint', 'cube', 'eval'); "
        f"rc = cli.main({[*argv, '--agent', f'td:{path}', '--json']!r}); "
        "loaded = [m for m in ('torch', 'numba') if m in sys.modules]; "
        "assert not loaded, f'{loaded} imported'; sys.exit(rc)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    if argv[0] == "hint":
        moves = got["moves"]
        plays = engine.legal_plays(engine.Position.start(), (3, 1))
        assert sorted(m["play"] for m in moves) == sorted(str(p) for p in plays)
        ids = [m["position_id"] for m in moves]
        boards = np.stack([engine.Position.from_id(pid).board for pid in ids])
        expected = forward(arrays, boards)
        np.testing.assert_allclose([m["probabilities"] for m in moves], expected, atol=2e-5)
    else:
        start = engine.Position.start().board
        expected = invert(forward(arrays, start[::-1][None])[0])
        np.testing.assert_allclose(got["probabilities"], expected, atol=2e-5)
