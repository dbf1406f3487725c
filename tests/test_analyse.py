"""`vrhcaby analyse`: `.mat` files replayed exactly as they were recorded, bad files refused
in one line naming the file and line, decisions judged as the hint and cube analysis judge
them, and per-player error rates that agree with GNU Backgammon's own ``analyse match``
(Debian's gnubg command line) on the same files."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers_agents import CubeBot

import engine
from agents import load_agent
from vrhcaby import analysis, review
from vrhcaby.cli.main import main
from vrhcaby.io import matchfile
from vrhcaby.io.matchfile import MatError, read_mat
from vrhcaby.play.tournament import PairSettings, play_pair

GNUBG = shutil.which("gnubg") or ("/usr/games/gnubg" if Path("/usr/games/gnubg").exists() else None)
needs_gnubg_cli = pytest.mark.skipif(GNUBG is None, reason="Debian's gnubg is not installed")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, tuple[Path, list[dict]]]:
    """Two 5-point matches and a money session with the cube, as `.mat` files, with the game
    records they were written from."""
    folder = tmp_path_factory.mktemp("mat")
    out = {}

    def write(name: str, a, b, games: int, seed: int, match_to: int = 0) -> None:
        pair = play_pair(a, b, games=games, seed=seed,
                         settings=PairSettings(match_to=match_to, record=True))  # fmt: skip
        recs = pair.records(seed)
        if match_to:  # one match: the first of the mirrored pair's
            recs = [r for r in recs if (r["sample"], r["copy"]) == (0, 0)]
        matchfile.export_mat(recs, folder / f"{name}.mat")
        out[name] = (folder / f"{name}.mat", recs)

    write("match", CubeBot("alice"), CubeBot("bob"), games=1, seed=8, match_to=5)
    # Seven games of a 5-point match without doubles: the Crawford game (the sixth) and a
    # post-Crawford game, cube decisions at many scores.
    write("crawford", load_agent("pubeval"), load_agent("pubeval"), games=1, seed=9, match_to=5)
    write("money", CubeBot("carol"), load_agent("pubeval"), games=3, seed=5)
    return out


# --- reading .mat files --------------------------------------------------------------


def _recorded(recs: list[dict]) -> list[list[tuple]]:
    """Each game's actions as the tournament recorded them: (kind, column, dice, position
    ID before a move)."""
    games = []
    for r in recs:
        column = {r["a_seat"]: 0, 1 - r["a_seat"]: 1}
        turns: list[tuple] = []
        for t in r["turns"]:
            action = t.get("action")
            if action is None:
                turns.append(
                    ("move", column[t["player"]], tuple(sorted(t["dice"])), t["position_id"])
                )
            elif action != "resign":
                turns.append((action, column[t["player"]]))
        games.append(turns)
    return games


def _replayed(path: Path) -> list[list[tuple]]:
    games = []
    for g in read_mat(path).games:
        turns: list[tuple] = []
        for t in g.turns:
            if t.kind == "move":
                assert t.dice is not None
                turns.append(("move", t.seat, tuple(sorted(t.dice)), engine.position_id(t.board)))
            else:
                turns.append((t.kind, t.seat))
        games.append(turns)
    return games


@pytest.mark.parametrize("name", ["match", "money", "crawford"])
def test_read_mat_replays_the_recorded_games(files, name):
    path, recs = files[name]
    assert _replayed(path) == _recorded(recs)
    match = read_mat(path)
    for game, r in zip(match.games, recs, strict=True):
        a_won = r["winner"] == r["a_seat"]
        assert (game.winner, game.points) == (0 if a_won else 1, r["points"])
    assert match.match_to == (0 if name == "money" else 5)
    if name == "crawford":
        assert [g.crawford for g in match.games] == [False] * 5 + [True, False]


@needs_gnubg_cli
def test_read_mat_reads_gnubgs_own_export(files, tmp_path):
    """GNU Backgammon's export of the same match (its own column widths, an unnumbered
    Wins line) reads back to the same games."""
    path, recs = files["match"]
    theirs = tmp_path / "gnubg.mat"
    _gnubg([f"import mat {path}", f"export match mat {theirs}"])
    assert _replayed(theirs) == _recorded(recs)
    assert read_mat(theirs).names == ("alice", "bob")


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _bad_files(folder: Path, good: Path) -> dict[str, tuple[Path, int | None, str]]:
    """Spoilt files: (path, the line the message must name, what it must say)."""
    lines = _lines(good)
    out: dict[str, tuple[Path, int | None, str]] = {}
    cut = folder / "truncated.mat"
    cut.write_text("\n".join(lines[: len(lines) // 2]) + "\n")
    out["truncated"] = (cut, len(lines) // 2, "truncated")
    half = folder / "half-line.mat"
    half.write_text("\n".join(lines[:-3]) + "\n" + lines[-3][:9])
    out["half line"] = (half, None, "")
    foreign = folder / "notes.mat"
    foreign.write_text("Shopping list\n eggs\n milk\n")
    out["foreign"] = (foreign, 1, "not a .mat file")
    binary = folder / "binary.mat"
    binary.write_bytes(b" 5 point match\n\n\x89PNG\r\n\x1a\n\xff\xfe")
    out["binary"] = (binary, 4, "not a text file")  # \x1a on the fourth line
    empty = folder / "empty.mat"
    empty.write_text("")
    out["empty"] = (empty, 1, "empty")
    # The first move written with other dice: its play is illegal for them.
    k = next(i for i, s in enumerate(lines) if re.match(r"\s*1\)\s+\d\d:", s))
    dice = re.search(r"(\d)(\d):", lines[k])
    assert dice
    other = "21" if int(dice[1]) + int(dice[2]) != 3 else "43"  # other pips: illegal
    illegal = folder / "illegal.mat"
    changed = lines[k][: dice.start()] + other + lines[k][dice.start() + 2 :]
    illegal.write_text("\n".join([*lines[:k], changed, *lines[k + 1 :]]) + "\n")
    out["illegal"] = (illegal, k + 1, "is not a legal play")
    return out


@pytest.mark.parametrize(
    "case", ["truncated", "half line", "foreign", "binary", "empty", "illegal"]
)
def test_a_bad_file_is_one_line_naming_the_file_and_line(files, tmp_path, capsys, case):
    path, line, what = _bad_files(tmp_path, files["match"][0])[case]
    with pytest.raises(MatError) as info:
        read_mat(path)
    message = str(info.value)
    assert re.match(rf"{re.escape(str(path))}:\d+: ", message), message
    if line is not None:
        assert message.startswith(f"{path}:{line}: ")
    assert what in message
    assert main(["analyse", str(path), "--judge", "gnubg", "--plies", "0", "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("vrhcaby analyse: error: ") and str(path) in err


def test_an_empty_folder_or_a_missing_file_is_one_line(tmp_path, capsys):
    assert main(["analyse", str(tmp_path), "--jobs", "1"]) == 2
    assert "no .mat files" in capsys.readouterr().err
    assert main(["analyse", str(tmp_path / "none.mat"), "--jobs", "1"]) == 2
    assert "no such file" in capsys.readouterr().err


# --- the decisions, against the hint's and the cube analysis's own path ---------------


def test_td_judge_errors_are_the_hints_and_the_cube_analysis(files):
    """At 0-ply every checker error is the hint's equity of its best candidate minus that
    of the play made (`vrhcaby.analysis.candidate_plays`, position by position), and every
    cube error follows from `vrhcaby.analysis.evaluate`'s no double / double-take /
    double-pass equities at the judge's default cube depth, `vrhcaby cube`'s (2 plies)."""
    agent = load_agent("td")
    path, _ = files["match"]
    match = read_mat(path)
    result = review.analyse_match(match, review.TDJudge(agent, 0))
    by_line = {(d.line, d.player, d.kind): d for d in result.decisions}
    checked = {"checker": 0, "double": 0, "take": 0}
    for game in match.games:
        for t in game.turns:
            context = _context(match, game, t)
            if t.kind == "move" and t.legal > 1:
                plays = analysis.candidate_plays(agent, t.board, t.dice, context, plies=0)
                made = next(c for c in plays if np.array_equal(c.play.position.board, t.after))
                d = by_line[(t.line, t.seat, "checker")]
                assert d.counted and d.error == pytest.approx(
                    plays[0].equity - made.equity, abs=1e-6
                )
                checked["checker"] += 1
            elif t.kind == "double":
                e = analysis.evaluate(agent, t.board, context, plies=analysis.CUBE_PLIES).decision
                d = by_line[(t.line, t.seat, "double")]
                assert d.error == pytest.approx(max(0.0, e.optimal - min(e.dt, e.dp)), abs=1e-6)
                answer = next(
                    a
                    for a in game.turns
                    if a.line >= t.line and a.kind in ("take", "drop") and a.seat != t.seat
                )
                d = by_line[(answer.line, answer.seat, "take")]
                wrong = e.dt - e.dp if answer.kind == "take" else e.dp - e.dt
                assert d.error == pytest.approx(max(0.0, wrong), abs=1e-6)
                checked["double"] += 1
                checked["take"] += 1
    assert min(checked.values()) > 0
    assert sum(d.kind == "checker" and d.counted for d in result.decisions) == checked["checker"]


def _context(match, game, turn):
    from vrhcaby.equity.context import GameContext

    return GameContext.of_side(
        turn.seat,
        cube_value=turn.cube_value,
        cube_owner=turn.cube_owner,
        score=game.score,
        match_to=match.match_to,
        crawford=game.crawford,
    )


# --- against GNU Backgammon's own analyse match ---------------------------------------


def _gnubg(commands: list[str]) -> str:
    assert GNUBG is not None
    script = "\n".join(["set threads 1", *commands, ""])
    done = subprocess.run(
        [GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=300
    )
    return done.stdout


_COUNTS = {
    "Total moves": "moves",
    "Unforced moves": "unforced",
    "Moves marked doubtful": "doubtful",
    "Moves marked bad": "bad",
    "Moves marked very bad": "very_bad",
    "Total cube decisions": "cube_decisions",
    "Close or actual cube decisions": "close_cube",
    "Doubles": "doubles",
    "Takes": "takes",
    "Passes": "passes",
}
_SECTIONS = {"Chequerplay": "checker", "Cube": "cube", "Overall": "overall"}


def gnubg_statistics(path: Path, plies: int) -> list[dict[str, float]]:
    """Debian gnubg's ``show statistics match`` after ``analyse match`` at `plies`
    (checker play and cube), for the left and the right player: the counts and the
    error totals and rates (positive, normalised; rates in millipoints)."""
    out = _gnubg(
        [
            "set jacoby off",
            f"import mat {path}",
            f"set analysis chequerplay evaluation plies {plies}",
            f"set analysis cubedecision evaluation plies {plies}",
            "analyse match",
            "show statistics match",
        ]
    )
    stats: list[dict[str, float]] = [{}, {}]
    section = ""
    for line in out.splitlines():
        head = line.split(" statistics")[0]
        section = _SECTIONS.get(head, section) if line.endswith("statistics") else section
        for label, key in _COUNTS.items():
            m = re.fullmatch(rf"{re.escape(label)}\s+(\d+)\s+(\d+)\s*", line)
            if m:
                stats[0][key], stats[1][key] = int(m[1]), int(m[2])
        m = re.match(
            r"Error (total|rate) m?EMG \((?:MWC|Points)\)\s+(\S+)(?:\s+\(\s*\S+\))?\s+(\S+)", line
        )
        if m and section:
            key = f"{section}_{m[1]}"
            stats[0][key], stats[1][key] = -float(m[2]), -float(m[3])
    assert stats[0].get("overall_rate") is not None, out[-2000:]
    return stats


def _compare(
    ours: review.MatchAnalysis,
    theirs: list[dict[str, float]],
    rate_tol: float,
    total_tol: float,
    marks: int,
    cube: bool = True,
) -> None:
    """Ours against gnubg's statistics; without `cube`, the cube errors are left out (not
    their counts)."""
    for p, g in zip(ours.players, theirs, strict=True):
        for key in ("moves", "unforced", "cube_decisions", "doubles", "takes", "passes"):
            assert getattr(p, key) == g[key], (p.name, key)
        assert abs(p.close_cube - g["close_cube"]) <= marks, p.name
        for key in ("doubtful", "bad", "very_bad"):
            assert abs(getattr(p, key) - g[key]) <= marks, (p.name, key)
        totals = [(p.checker_error, "checker"), (p.cube_error, "cube"), (p.error, "overall")]
        for ours_total, key in totals if cube else totals[:1]:
            theirs_total = g[f"{key}_total"]
            assert ours_total == pytest.approx(theirs_total, abs=total_tol + 0.01 * theirs_total), (
                p.name,
                key,
            )
        for ours_rate, key in [(p.checker_rate, "checker"), (p.rate, "overall")][
            : 2 if cube else 1
        ]:
            assert ours_rate == pytest.approx(g[f"{key}_rate"], abs=rate_tol), (p.name, key)


#: How close `--judge gnubg` comes to gnubg's own analysis, per player: at 0-ply the same
#: counts (moves, unforced moves, cube decisions, doubles, takes, passes), marks and close
#: cube decisions within one, error totals within 0.01 + 1% and rates within 1 millipoint
#: (gnubg prints three decimals; its command line and the gnubg-nn package are two builds of
#: the same networks); at 2-ply, where gnubg searches the cube cubefully and we apply
#: Janowski's formula to its 2-ply probabilities, totals within 0.06 and rates within 3.
ZERO_PLY = dict(rate_tol=1.0, total_tol=0.01, marks=1)
TWO_PLY = dict(rate_tol=3.0, total_tol=0.06, marks=2)


@needs_gnubg_cli
@pytest.mark.parametrize("name", ["match", "money", "crawford"])
def test_gnubg_judge_agrees_with_gnubgs_analyse_match(files, name):
    """In the Crawford match the counts agree (no cube decision in the Crawford game, the
    trailer's after it), the checker play too; its cube errors come from two-sided
    bear-offs at 2-away, where gnubg's cubeful equity is not Janowski's formula with the
    bear-off efficiency the project's cube model uses (docs/analyse.md)."""
    path, _ = files[name]
    ours = review.analyse_match(read_mat(path), review.GnubgJudge(0))
    _compare(ours, gnubg_statistics(path, 0), **ZERO_PLY, cube=name != "crawford")


@pytest.mark.slow
@needs_gnubg_cli
def test_gnubg_judge_agrees_with_gnubgs_analyse_match_at_2_ply(files):
    path, _ = files["match"]
    ours = review.analyse_match(read_mat(path), review.GnubgJudge(2))
    _compare(ours, gnubg_statistics(path, 2), **TWO_PLY)


# --- the command line ----------------------------------------------------------------


def test_a_folder_in_json_and_its_games_over_two_processes(files, tmp_path, capsys):
    """A folder's files each analysed; spreading the games over two processes changes
    nothing; the text report names both players and the worst decisions."""
    for name in ("match", "money"):
        shutil.copy(files[name][0], tmp_path / f"{name}.mat")
    base = ["analyse", str(tmp_path), "--judge", "gnubg", "--plies", "0", "--json", "--worst", "3"]
    assert main([*base, "--jobs", "1"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main([*base, "--jobs", "2"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in one] == [str(tmp_path / "match.mat"), str(tmp_path / "money.mat")]
    for x, y in zip(one, two, strict=True):  # sums in another order: equal to rounding
        assert x["worst"] == y["worst"]
        for p, q in zip(x["players"], y["players"], strict=True):
            p, q = dict(p), dict(q)
            assert p.pop("name") == q.pop("name") and p == pytest.approx(q, rel=1e-12)
    money = one[1]
    assert money["match_to"] == 0 and money["unit"] == "millipoints"
    assert [p["name"] for p in money["players"]] == ["carol", "pubeval"]
    worst = one[0]["worst"]
    assert len(worst) == 3 and worst[0]["error"] >= worst[1]["error"] >= worst[2]["error"] > 0
    pid, mid = worst[0]["position"].split(":")
    engine.board_from_position_id(pid)
    engine.MatchState.from_id(mid)
    assert (
        main(
            [
                "analyse",
                str(tmp_path / "match.mat"),
                "--judge",
                "gnubg",
                "--plies",
                "0",
                "--jobs",
                "1",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "alice" in text and "bob" in text and "Worst decisions (mEMG)" in text


def test_without_the_cube_plays_are_judged_by_cubeless_equity(files):
    """`cube=False` (`--no-cube`): no cube decisions, and each checker error is the hint's
    cubeless equity of its best candidate minus that of the play made."""
    agent = load_agent("td")
    path, _ = files["money"]
    match = read_mat(path)
    result = review.analyse_match(match, review.TDJudge(agent, 0), cube=False)
    assert all(d.kind == "checker" for d in result.decisions)
    by_line = {(d.line, d.player): d for d in result.decisions}
    checked = 0
    for game in match.games:
        for t in game.turns:
            if t.kind == "move" and t.legal > 1:
                context = _context(match, game, t)
                plays = analysis.candidate_plays(
                    agent, t.board, t.dice, context, plies=0, cubeful=False
                )
                made = next(c for c in plays if np.array_equal(c.play.position.board, t.after))
                error = plays[0].equity - made.equity
                assert by_line[(t.line, t.seat)].error == pytest.approx(error, abs=1e-6)
                checked += 1
    assert checked == sum(p.unforced for p in result.players) > 50


def test_the_td_agent_judged_by_itself_makes_no_error(tmp_path):
    """Games the td agent played at 0-ply with the cube, judged by the same network at
    0-ply (its cube decisions too): each of its plays and cube decisions is the judge's
    best (an error of 0, up to float32 rounding); its opponent's are not."""
    td = load_agent("td")
    pair = play_pair(td, load_agent("pubeval"), games=2, seed=3, settings=PairSettings(record=True))
    recs = pair.records(3)
    matchfile.export_mat(recs, tmp_path / "td.mat")
    result = review.analyse_match(
        read_mat(tmp_path / "td.mat"), review.TDJudge(td, 0, 0), jacoby=False
    )
    mine, theirs = result.players
    assert mine.unforced > 20 and mine.cube_decisions > 10
    assert mine.error < 1e-4 and theirs.error > 0.1


def test_a_double_in_the_crawford_game_is_refused(files, tmp_path):
    lines = _lines(files["crawford"][0])
    game = lines.index(" Game 6")
    first = next(k for k in range(game, len(lines)) if re.match(r"\s*1\)", lines[k]))
    spoilt = tmp_path / "crawford-double.mat"
    double = "  2)  Doubles => 2                     Takes"
    spoilt.write_text("\n".join([*lines[: first + 1], double, *lines[first + 1 :]]) + "\n")
    with pytest.raises(
        MatError, match=rf"^{re.escape(str(spoilt))}:{first + 2}: a double in the Crawford game"
    ):
        read_mat(spoilt)


@pytest.mark.parametrize(
    ("flags", "what"),
    [
        (["--judge", "pubeval"], "a judge is td"),
        (["--plies", "3"], "0, 1 or 2 plies"),
        (["--judge", "gnubg", "--cube-plies", "1", "--plies", "0"], "--cube-plies is for the td"),
        (["--worst", "-1"], "--worst"),
        (["--jobs", "0"], "--jobs"),
    ],
)
def test_bad_flags_are_one_line(files, capsys, flags, what):
    assert main(["analyse", str(files["match"][0]), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and what in err


def test_a_byte_order_mark_and_names_in_a_windows_code_page_are_read(files, tmp_path):
    text = files["match"][0].read_text().replace("alice", "José")
    (tmp_path / "bom.mat").write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    (tmp_path / "latin.mat").write_bytes(text.encode("latin-1"))
    for name in ("bom.mat", "latin.mat"):
        assert read_mat(tmp_path / name).names == ("José", "bob")


def test_mutated_files_are_read_or_refused_in_one_line(files, tmp_path):
    """Seeded mutations of a sound file (a character dropped, changed or doubled, a line
    dropped or repeated): each reads, or is a `MatError` naming the file and a line of it;
    never another exception."""
    rng = np.random.default_rng(31)
    text = files["match"][0].read_text()
    alphabet = "0123456789/*: abcdefghijklmnopqrstuvwxyz=>\n)"
    path = tmp_path / "mutated.mat"
    refused = 0
    for _ in range(60):
        t = text
        for _ in range(int(rng.integers(1, 4))):
            lines = t.split("\n")
            k = int(rng.integers(len(t)))
            how = int(rng.integers(5))
            if how == 0:
                t = t[:k] + t[k + 1 :]
            elif how == 1:
                t = t[:k] + alphabet[int(rng.integers(len(alphabet)))] + t[k + 1 :]
            elif how == 2:
                t = t[:k] + t[k] + t[k:]
            else:
                j = int(rng.integers(len(lines)))
                lines[j : j + 1] = [] if how == 3 else [lines[j], lines[j]]
                t = "\n".join(lines)
        path.write_text(t)
        try:
            read_mat(path)
        except MatError as exc:
            m = re.match(rf"{re.escape(str(path))}:(\d+): \S", str(exc))
            assert m and 1 <= int(m[1]) <= max(1, len(t.splitlines())), str(exc)
            refused += 1
    assert refused > 30


def test_sigterm_stops_the_command_and_its_workers(files):
    """SIGTERM while the games are judged in two worker processes: exit status 143, and
    the workers end with the command."""
    import signal
    import sys
    import time

    path, _ = files["money"]
    command = [sys.executable, "-m", "vrhcaby.cli", "analyse", str(path), "--jobs", "2"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    workers: list[int] = []
    deadline = time.monotonic() + 120
    while not workers and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        workers = [int(w) for w in children.read_text().split()] if children.exists() else []
    assert workers, "the command forked no workers"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    time.sleep(0.5)
    for w in workers:
        stat = Path(f"/proc/{w}/stat")
        assert not stat.exists() or stat.read_text().split()[2] == "Z"  # gone, or a zombie


def test_at_1_ply_the_play_made_is_valued_at_full_depth(files):
    """At 1-ply the hint values the best 8 plays by 0-ply at 1-ply; the analysis also
    values the play made at 1-ply when the filter dropped it (as gnubg keeps it), so its
    error is the hint's best 1-ply equity (or the play's own, when it is better) minus the
    play's 1-ply equity, computed here apart (`decisions.mover_equity`)."""
    from vrhcaby.equity import decisions

    agent = load_agent("td")
    path, _ = files["match"]
    match = read_mat(path)
    result = review.analyse_match(match, review.TDJudge(agent, 1, 0))
    by_line = {(d.line, d.player, d.kind): d for d in result.decisions}
    dropped = 0
    for game in match.games:
        for t in game.turns:
            if t.kind != "move" or t.legal < 2:
                continue
            context = _context(match, game, t)
            plays = analysis.candidate_plays(agent, t.board, t.dice, context, plies=1)
            assert t.after is not None
            p = agent.probabilities(t.after[None], 1)[0]
            made, _ = decisions.mover_equity(p, t.after, context)
            dropped += (
                next(c.plies for c in plays if np.array_equal(c.play.position.board, t.after)) == 0
            )
            want = max(plays[0].equity, made) - made
            assert by_line[(t.line, t.seat, "checker")].error == pytest.approx(want, abs=1e-6)
    assert dropped > 0  # some plays made were outside the hint's 1-ply filter
