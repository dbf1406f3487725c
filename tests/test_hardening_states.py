"""States that cannot happen, one rule per verb, and a new user's friction (issue 32,
items 6-9 and 11-14).

Each class of bad input gets one line naming what is wrong and exit status 2 (or a
correct answer); the expected answers come from GNU Backgammon where it has an opinion
(the `gnubg` package writes the Match IDs, its reader refuses what it cannot hold), from
RULES.md written out here by hand (the six-dice scores, the Nackgammon start), or from
plain arithmetic on what the command printed.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import sys
from pathlib import Path

import gnubg
import gnubg_nn
import numpy as np
import pytest

import engine
from agents import load_agent
from agents.td import CHECKPOINTS
from engine.formats import MatchState
from vrhcaby.cli import main as cli
from vrhcaby.cli.dice import parse_sheet
from vrhcaby.equity.outcomes import consistent
from vrhcaby.io.external import fibs_board, parse_fibs_board
from vrhcaby.play.rollout_results import RolloutResult
from vrhcaby.training.run import TrainConfig, find_inputs

ROOT = Path(__file__).resolve().parents[1]
START = "4HPwATDgc/ABMA"
START_X = "-b----E-C---eE---c-e----B-"


def run_cli(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(argv)
            except SystemExit as exc:  # argparse: its status
                code = exc.code if isinstance(exc.code, int) else 2
    finally:
        sys.stdin = old
    return code, out.getvalue(), err.getvalue()


def one_line(argv: list[str], *words: str, stdin: str = "") -> str:
    """The one stderr line of a refused command line (exit status 2), holding `words`."""
    code, out, err = run_cli(argv, stdin)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and out == "", (code, out, err)
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# --- impossible Match IDs and XGIDs -------------------------------------------------------


def gnubg_match_id(cube: int, owner: int, length: int = 0, score=(0, 0)) -> str:
    """The Match ID GNU Backgammon's encoder writes for a cube and match, player 1 having
    rolled 3-1: it checks nothing of the cube."""
    ci = gnubg.cube_info(cube, owner, 1, length, score, 0, 0)
    return gnubg.match_id(ci, gnubg.pos_info(1, 0, 0, 1, (3, 1)))


@pytest.mark.parametrize(
    ("cube", "owner", "words"),
    [
        (1, 0, "a cube of 1 has never been turned, so it is centred"),
        (1, 1, "a cube of 1 has never been turned, so it is centred"),
        (2, -1, "a turned cube is owned by the side that took it"),
        (8, -1, "got a centred cube of 8"),
    ],
)
def test_cube_states_the_rules_forbid_are_refused_by_every_verb(cube, owner, words) -> None:
    mid = gnubg_match_id(cube, owner)
    with pytest.raises(ValueError, match=words):
        MatchState.from_id(mid)
    for verb in (["show"], ["hint"], ["cube"], ["eval"], ["moves"], ["rollout", "--trials", "2"]):
        one_line([verb[0], f"{START}:{mid}", *verb[1:]], words, mid)


def test_a_cube_beyond_the_limit_is_refused_in_money_play_too() -> None:
    mid = gnubg_match_id(1 << 15, 0)
    # GNU Backgammon's reader will not take a cube that large: its state stays as it was.
    gnubg.set_gnubg_id(f"{START}:cAkAAAAAAAAE")
    gnubg.set_gnubg_id(f"{START}:{mid}")
    assert gnubg.gnubg_id() != f"{START}:{mid}"
    for verb in ("hint", "cube", "eval"):
        one_line([verb, f"{START}:{mid}"], "the cube 32768 is above the cube limit 64")
    match = gnubg_match_id(128, 0, length=7)
    one_line(["cube", f"{START}:{match}"], "the cube 128 is above the cube limit 64")
    code, out, _ = run_cli(["cube", f"{START}:{match}", "--max-cube", "256"])
    assert code == 0 and "cube 128 owned by the opponent" in out
    one_line(["cube", START, "--max-cube", "65536"], "--max-cube is a power of two")
    one_line(["cube", START, "--max-cube", "48"], "--max-cube is a power of two")
    # An XGID's own cube limit: a cube of 2**12 above a limit of 2**10.
    one_line(["show", f"XGID={START_X}:12:1:1:31:0:0:0:0:10"], "above the XGID's own cube limit")


def test_a_money_session_score_is_what_gnubg_writes_and_is_read() -> None:
    # Debian gnubg 1.07 wrote this Match ID after `new session` and `set score 3 200`: a
    # money session keeps its score in the Match ID, so it is no impossible state.
    state = MatchState.from_id("MAEKADAAQAYA")
    assert state.match_length == 0 and state.score == (3, 200)
    code, out, _ = run_cli(["show", f"{START}:MAEKADAAQAYA"])
    assert code == 0 and "money game (Jacoby rule), session score X 3, O 200" in out
    code, out, _ = run_cli(["cube", f"{START}:MAEKADAAQAYA"])
    assert code == 0 and out.startswith("Cube analysis (money play")


@pytest.mark.parametrize(
    ("xgid", "words"),
    [
        (f"{START_X}:0:0:1:31:0:0:0:0", "an XGID has 10 fields separated by ':', got 9"),
        (f"{START_X}:0:0:1:31:0:0:0:0:10:1", "got 11"),
        (f"{START_X}:0:0:1:31:0:0:0:0:10:", "got 11 (it ends with ':')"),
        (f"{START_X[:-1]}:0:0:1:31:0:0:0:0:10", "the position field has 26 characters, got 25"),
        (f"{START_X}-:0:0:1:31:0:0:0:0:10", "the position field has 26 characters, got 27"),
        (f"{START_X[:24]}Z-:0:0:1:31:0:0:0:0:10", "position character 24 is 'Z'"),
        (f"{START_X[:3]}#{START_X[4:]}:0:0:1:31:0:0:0:0:10", "position character 3 is '#'"),
        (f"{START_X}:1:0:1:31:0:0:0:0:10", "got a centred cube of 2"),
        (f"{START_X}:0:1:1:31:0:0:0:0:10", "a cube of 1 has never been turned"),
    ],
)
def test_a_mistyped_xgid_is_told_what_is_wrong_with_it(xgid: str, words: str) -> None:
    # Written bare, it starts with '-' like an option: still read as the XGID it tries to be.
    for text in (xgid, "XGID=" + xgid):
        for verb in (["hint"], ["show"], ["moves"], ["cube"]):
            line = one_line([*verb, text], "XGID", words)
            assert "required" not in line


def test_a_wellformed_bare_xgid_still_reads() -> None:
    code, out, _ = run_cli(["moves", f"{START_X}:0:0:1:31:0:0:0:0:10"])
    assert code == 0 and out.splitlines()[0] == "24/23 24/21"  # 3-1 from the start
    # An option with a ':' in its value is still an option.
    one_line(["rollout", START, "--address=host:1"], "--address and --workers are for")


# --- six-dice sheets ----------------------------------------------------------------------


#: RULES.md §3, written out: what each category scores for sorted dice (0 when not shown).
def _plain_scores(dice: tuple[int, ...]) -> list[int]:
    counts = sorted(((dice.count(f), f) for f in set(dice)), reverse=True)
    shape = [c for c, _ in counts]
    total = sum(dice)
    faces = {c: f for c, f in counts}
    singles = [dice.count(f) * f for f in range(1, 7)]
    straight = 21 if sorted(dice) == [1, 2, 3, 4, 5, 6] else 0
    pairs = total if all(c % 2 == 0 for c in shape) else 0
    full = shape == [3, 2, 1]
    pyramid = total if full and faces[3] > faces[2] > faces[1] else 0
    vrchcab = total if full and faces[3] < faces[2] < faces[1] else 0
    poker = total if shape in ([4, 2], [6]) else 0
    general = total if shape == [6] else 0
    return [*singles, straight, pairs, pyramid, vrchcab, poker, general]


def test_sheet_scores_are_those_a_category_can_hold() -> None:
    possible: list[set[int]] = [set() for _ in range(12)]
    for dice in itertools.combinations_with_replacement(range(1, 7), 6):
        for c, v in enumerate(_plain_scores(dice)):
            possible[c] |= {0, v}
    names = engine.sixdice.CATEGORIES
    for c, name in enumerate(names):
        top = max(possible[c])
        for value in range(-3, top + 8):
            if value in possible[c]:
                assert parse_sheet(f"{name}={value}")[c] == value
            else:
                argv = ["dice", "hint", "113456", "--sheet", f"{name}={value}"]
                one_line(argv, f"{name} scores one of", f"got {value}")
    one_line(["dice", "hint", "113456", "--sheet", "ones=99"], "ones scores one of 0, 1, 2")
    one_line(["dice", "hint", "113456", "--sheet", "ones"], "give the score written")
    one_line(["dice", "hint", "113456", "--sheet", "ones=\uff14"], "must be a number")
    one_line(["dice", "hint", "\uff11\uff11\uff13\uff14\uff15\uff16"], "dice must be digits")


# --- one match-length rule ------------------------------------------------------------------


@pytest.mark.parametrize("length", [26, -1, 99])
def test_one_match_length_rule_for_every_verb_and_agent(length: int) -> None:
    words = f"{length}: a match is 1 to 25 points"
    for argv in (
        ["hint", START, "31", "--match-to", str(length)],
        ["cube", START, "--match-to", str(length)],
        ["eval", START, "--match-to", str(length)],
        ["play", "--match-to", str(length)],
        ["tournament", "pubeval", "random", "--match-to", str(length), "--games", "2"],
        ["tournament", "td", "pubeval", "--match-to", str(length), "--games", "2"],
    ):
        one_line(argv, words)
    if length > 0:  # a Match ID holds 15 bits of match length, a FIBS board any
        mid = engine.match_id(MatchState(match_length=length, dice_owner=1))
        for verb in ("hint", "cube", "rollout"):
            one_line([verb, f"{START}:{mid}"], f"the match length {length}")
        line = fibs_board(engine.Position.start().board, match_to=length)
        with pytest.raises(ValueError, match=f"FIBS board: the match length {length}"):
            parse_fibs_board(line)


def test_match_to_zero_is_money_play_in_every_verb() -> None:
    code, out, _ = run_cli(["cube", START, "--match-to", "0"])
    assert code == 0 and out.startswith("Cube analysis (money play")
    one_line(["cube", START, "--match-to", "0", "--score", "1-1"], "--score needs --match-to")


# --- agent specs and numbers written in other digits ----------------------------------------


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("td?plies=1&plies=2", "agent option 'plies' is given twice"),
        ("random?seed=1&seed=1", "agent option 'seed' is given twice"),
        ("td?plies=\uff11", "is not an integer"),  # full-width 1
        ("random?seed=\u0663", "is not an integer"),  # Arabic-Indic 3
        ("td?prune=\uff13", "is on, off or the replies kept"),
    ],
)
def test_bad_specs_are_refused(spec: str, words: str) -> None:
    with pytest.raises(ValueError, match=re.escape(words)):
        load_agent(spec)
    one_line(["tournament", spec, "pubeval", "--games", "2"], words)


@pytest.mark.parametrize(
    "argv",
    [
        ["moves", "AAAAAAAAAAAAAA@\uff11\uff15,15", "21", "--variant", "acey-deucey"],
        ["tournament", "pubeval", "random", "--games", "\uff12"],
        ["hint", START, "31", "--plies", "\uff10"],
        ["cube", START, "--cube-efficiency", "0.\uff15"],
        ["cube", START, "--match-to", "7", "--score", "\uff13-1"],
        ["dice", "hint", "113456", "--bonus", "\uff12"],
        ["tournament", "pubeval", "random", "--games", "1_000"],
    ],
)
def test_numbers_are_ascii_digits_only(argv: list[str]) -> None:
    one_line(argv)


# --- vrhcaby play's prompts -------------------------------------------------------------------


def test_play_resign_takes_one_two_or_three_only() -> None:
    code, out, _ = run_cli(["play", "--seed", "1"], "resign 7\nresign x\nresign 2\nn\n")
    assert code == 0
    assert out.count("offers none of them") == 2
    assert "'resign 7' offers none of them" in out
    # Only resign 2 is an offer: the bot accepts a gammon (2 points) or plays on.
    answers = re.findall(r"The bot (accepts|refuses) your resignation", out)
    assert len(answers) == 1
    if answers == ["accepts"]:
        assert "of a gammon" in out and "The bot wins 2 points" in out


def test_play_yes_no_questions_take_only_yes_or_no() -> None:
    code, out, _ = run_cli(["play", "--seed", "1"], "resign 3\nmaybe\n\nN\n")
    assert code == 0
    assert out.count("Another game? [y/n]") == 3 and out.count("Answer y or n (or quit).") == 2
    assert "Bye." not in out  # n ended the session, not the end of input
    code, out, _ = run_cli(["play", "--seed", "1"], "resign 3\nyes\nresign 3\nno\n")
    assert out.count("Another game? [y/n]") == 2 and out.count("wins 3 points") == 2


# --- tournament defaults ----------------------------------------------------------------------


def _points(pair: dict, side: int) -> int:
    """A side's points: a single win 1, a gammon 2, a backgammon 3 (cube never turned)."""
    return pair["wins"][side] + pair["gammons"][side] + 2 * pair["backgammons"][side]


def test_cubeless_agents_play_cubeless_by_default_and_the_output_says_so() -> None:
    argv = ["tournament", "pubeval", "random?seed=1", "--games", "20", "--jobs", "1"]
    code, out, err = run_cli([*argv, "--json"])
    result = json.loads(out)
    pair = result["pairs"][0]
    assert code == 0 and err == ""
    assert result["cube"] is False and pair["cube"] is False and result["rules"]["cube"] is False
    assert pair["backgammons"][0] > 0  # so the check below counts them
    assert pair["ppg"] == pytest.approx((_points(pair, 0) - _points(pair, 1)) / pair["games"])
    code, out, err = run_cli(argv)
    lines = out.splitlines()
    assert lines[0].startswith("money games without the cube")
    assert "cube: off in every pair, each has an agent without cube decisions" in out
    # Forced on: the Jacoby rule counts every gammon single, and a warning is not needed
    # (neither agent doubles).
    code, out, err = run_cli([*argv, "--json", "--cube"])
    pair = json.loads(out)["pairs"][0]
    assert pair["cube"] is True
    assert pair["ppg"] == pytest.approx((pair["wins"][0] - pair["wins"][1]) / pair["games"])


def test_a_pair_of_cube_aware_agents_keeps_the_cube_by_default() -> None:
    _, out, _ = run_cli(["tournament", "gnubg", "gnubg", "pubeval", "--games", "2", "--json"])
    result = json.loads(out)
    assert [p["cube"] for p in result["pairs"]] == [True, False, False]
    assert result["cube"] is True and result["rules"]["jacoby"] is True
    _, out, _ = run_cli(["tournament", "gnubg", "gnubg", "pubeval", "--games", "2"])
    assert out.splitlines()[0] == (
        "money games with the cube, Jacoby rule, beavers allowed; no cube in the pairs of "
        "pubeval (no cube decisions)"
    )


def test_odd_mirrored_games_are_refused_and_unmirrored_play_exactly_n() -> None:
    one_line(["tournament", "pubeval", "random", "--games", "3"], "--games 3", "even number")
    code, out, _ = run_cli(
        ["tournament", "pubeval", "random", "--games", "3", "--no-mirror", "--json"]
    )
    assert code == 0 and json.loads(out)["pairs"][0]["games"] == 3


# --- shipped networks from any folder -----------------------------------------------------------


def test_shipped_networks_by_name_from_another_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for spec in ("td:sixdice-td", "td:checkpoints/sixdice-td.pt"):
        code, out, err = run_cli(["dice", "tournament", spec, "greedy", "--games", "2"])
        assert code == 0 and out.splitlines()[-2].split()[0] == spec, err
    one_line(["dice", "tournament", "td:nonexistent", "greedy"], "checkpoint not found")
    code, out, err = run_cli(
        ["rollout", START, "--trials", "2", "--agent", "td:td-80", "--evaluator", "td-80"]
    )
    assert code == 0, err
    cfg = find_inputs(TrainConfig(init_from="td-best"), None)
    assert Path(cfg.init_from) == CHECKPOINTS / "td-best.pt"
    # Label folders: from here, else beside the config, else in the checkout.
    configs = tmp_path / "configs"
    (configs / "mine").mkdir(parents=True)
    (configs / "fit.toml").write_text("")
    labels = ("mine", "data/labels/contact3", "nowhere")
    cfg = find_inputs(
        TrainConfig(init_from="td-best", distill=type(cfg.distill)(labels=labels)),
        str(configs / "fit.toml"),
    )
    assert cfg.distill.labels == (
        str(configs / "mine"),
        str(ROOT / "data/labels/contact3"),
        "nowhere",
    )


# --- friction -------------------------------------------------------------------------------------


def test_moves_takes_the_roll_of_a_match_id_or_an_xgid() -> None:
    rows = [[0] * 5 + [5, 0, 3] + [0] * 4 + [5] + [0] * 10 + [2, 0]] * 2
    # GNU Backgammon's own plays of 5-2 from the start: their resulting positions.
    after = [[list(r) for r in gnubg_nn.boardfromkey(k)] for k in gnubg_nn.moves(rows, 5, 2)]
    reference = sorted(gnubg_nn.position_id(a) for a in after)
    mid = engine.match_id(MatchState(dice_owner=1, dice=(5, 2)))
    for position in (f"{START}:{mid}", f"XGID={START_X}:0:0:1:52:0:0:0:0:10"):
        code, out, _ = run_cli(["moves", position, "--json"])
        answer = json.loads(out)
        assert code == 0 and answer["dice"] == [5, 2]
        assert sorted(m["position_id"] for m in answer["moves"]) == reference
    one_line(["moves", START], "give the dice")
    one_line(["moves", f"XGID={START_X}:0:0:1:D:0:0:0:0:10"], "a double pending")


def test_eval_reads_the_variant_and_its_network() -> None:
    # Nack Ballard's start (RULES.md §2), written out: 2 on 24, 2 on 23, 4 on 13, 3 on 8,
    # 4 on 6; its Position ID by GNU Backgammon's encoder.
    row = [0] * 25
    for point, n in ((24, 2), (23, 2), (13, 4), (8, 3), (6, 4)):
        row[point - 1] = n
    nack = gnubg_nn.position_id([row, row])
    code, by_variant, _ = run_cli(["eval", "start", "--variant", "nackgammon", "--json"])
    code2, by_id, _ = run_cli(["eval", nack, "--agent", "td:td-nackgammon", "--json"])
    assert code == code2 == 0 and json.loads(by_variant) == json.loads(by_id)
    code, out, _ = run_cli(["eval", "start", "--variant", "acey-deucey"])
    assert code == 0 and out.startswith("Evaluation (acey-deucey, money play")
    one_line(["eval", "start", "--variant", "acey-deucey", "--agent", "td:td-best"], "cannot play")
    one_line(["eval", START, "--variant", "backgammon2"], "unknown variant")


def test_bare_vrhcaby_prints_the_usage_and_exits_2() -> None:
    code, out, err = run_cli([])
    assert code == 2 and out == ""
    assert err.startswith("usage: vrhcaby") and all(verb in err for verb in cli.COMMANDS)


@pytest.mark.parametrize(
    ("argv", "prog"),
    [
        (["hint", START, "31", "--bogus"], "vrhcaby hint"),
        (["moves", START, "31", "--bogus"], "vrhcaby moves"),
        (["rollout", START, "--match-to", "5"], "vrhcaby rollout"),
        (["tournament", "pubeval", "random", "--bogus"], "vrhcaby tournament"),
        (["dice", "hint", "113456", "--bogus"], "vrhcaby dice hint"),
    ],
)
def test_an_unknown_flag_is_named_by_its_verb(argv: list[str], prog: str) -> None:
    line = one_line(argv, "unrecognized arguments")
    assert line.startswith(f"{prog}: error: ")


def test_rollout_probabilities_stay_within_what_a_position_can_have() -> None:
    # Four trials whose luck-adjusted mean of the lose-backgammon column is -0.002.
    raw = np.array([[1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0.0]])
    luck = np.zeros((4, 5))
    luck[:, 4] = 0.002
    result = RolloutResult(
        raw=raw, luck=luck, stratum=np.zeros(4, np.int64), n_strata=0, plies=np.ones(4),
        luck_adjusted=True,
    )  # fmt: skip
    assert (result.values.mean(axis=0)[4]) == pytest.approx(-0.002)
    mean = result.estimate().mean
    assert mean.tolist() == pytest.approx([0.5, 0.25, 0.0, 0.25, 0.0])
    p = mean
    assert result.estimate().equity == pytest.approx(2 * p[0] - 1 + p[1] - p[3] + p[2] - p[4])
    rng = np.random.default_rng(5)
    for q in consistent(rng.normal(0.3, 0.4, (500, 5))):
        assert 0 <= q[2] <= q[1] <= q[0] <= 1 and 0 <= q[4] <= q[3] <= 1 - q[0]
    inside = consistent(rng.uniform(0, 1, (50, 5)) * [1, 0, 0, 0, 0])
    assert consistent(inside).tolist() == inside.tolist()


def test_the_readme_tournament_example_is_cubeless() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "vrhcaby tournament pubeval heuristic random --games 10000 --jobs 2" in readme
    code, out, _ = run_cli(["tournament", "pubeval", "heuristic", "--games", "4", "--json"])
    assert code == 0 and json.loads(out)["pairs"][0]["cube"] is False
