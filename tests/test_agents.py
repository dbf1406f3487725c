"""Agents: pubeval against GNU Backgammon's own pubeval, the heuristic's shot counts against
the standard shot table, batched choices against plain loops, specs and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from agents import GameContext, load_agent, parse_spec
from agents.gnubg import apply_steps
from agents.heuristic import shots
from agents.pubeval import WEIGHTS_CONTACT, WEIGHTS_RACE, PubevalAgent, pubeval_scores
from agents.search import best_rows

gnubg_nn = pytest.importorskip("gnubg_nn")


def random_positions(n: int, seed: int = 0) -> list[np.ndarray]:
    """Positions from games of random play (both sides' views), a realistic mix."""
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        pos = engine.Position.start()
        for _ in range(400):
            dice = tuple(int(d) for d in engine.roll_dice(rng, 1)[0])
            plays = engine.legal_plays(pos, dice)
            after = plays[int(rng.integers(len(plays)))].position if plays else pos
            if engine.game_value(after.board[None])[0]:
                break
            out.append(after.board.copy())
            pos = after.flip()
    return out[:n]


def reference_pubeval(board: np.ndarray, race: bool) -> float:
    """Tesauro's pubeval.c transcribed literally: pos[] 0..27 and setx(), one loop each."""
    pos = [0] * 28
    for p in range(1, 25):
        pos[p] = int(board[1, p - 1]) - int(board[0, 24 - p])
    pos[0] = -int(board[0, 24])
    pos[25] = int(board[1, 24])
    pos[26] = 15 - int(board[1].sum())
    if pos[26] == 15:
        return 99999999.0
    x = [0.0] * 122
    for j in range(1, 25):
        jm1 = j - 1
        n = pos[25 - j]
        if n != 0:
            if n == -1:
                x[5 * jm1 + 0] = 1.0
            if n == 1:
                x[5 * jm1 + 1] = 1.0
            if n >= 2:
                x[5 * jm1 + 2] = 1.0
            if n == 3:
                x[5 * jm1 + 3] = 1.0
            if n >= 4:
                x[5 * jm1 + 4] = (n - 3) / 2.0
    x[120] = -pos[0] / 2.0
    x[121] = pos[26] / 15.0
    w = WEIGHTS_RACE if race else WEIGHTS_CONTACT
    return float(sum(float(wi) * xi for wi, xi in zip(w, x, strict=True)))


def test_pubeval_matches_gnubg_on_thousands_of_positions():
    boards = random_positions(3000)
    # gnubg_nn.pub_eval_score scores the side in row 0, deciding race from that board;
    # it counts checkers on that side's bar as borne off, so such boards are left out.
    boards = [b for b in boards if b[1, 24] == 0]
    assert len(boards) > 2000
    race = np.array([gnubg_nn.classify(b[::-1].tolist()) <= gnubg_nn.c_race for b in boards])
    assert race.any() and (~race).any()
    ours = pubeval_scores(np.stack(boards), race)
    ref = np.array([gnubg_nn.pub_eval_score(b[::-1].tolist()) for b in boards])
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-4)


def test_pubeval_matches_the_published_c_code():
    boards = random_positions(300, seed=5)
    rng = np.random.default_rng(1)
    race = rng.random(len(boards)) < 0.5
    ours = pubeval_scores(np.stack(boards), race)
    ref = [reference_pubeval(b, r) for b, r in zip(boards, race, strict=True)]
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-4)


def test_pubeval_hand_computed_values():
    # All 15 of the mover's checkers on its 1-point, race weights: inputs n >= 2 on the
    # 1-point block (wr[117] = -7.26713) and (15 - 3) / 2 = 6 times wr[119] = -12.32252.
    b = np.zeros((1, 2, 25), np.int8)
    b[0, 1, 0] = 15
    b[0, 0, 0] = 15
    assert pubeval_scores(b, np.array([True]))[0] == pytest.approx(-7.26713 + 6 * -12.32252)
    # One checker left on the 2-point (14 off) and one opposing blot on the mover's 24-point:
    # contact weights wc[111] = -1.11342 (one checker, block of point 2) + wc[0] (opposing blot on
    # point 24) + 14/15 wc[121].
    b = np.zeros((1, 2, 25), np.int8)
    b[0, 1, 1] = 1
    b[0, 0, 0] = 1
    b[0, 0, 5] = 14
    expected = -1.11342 + 0.25696 + 14 / 15 * -2.75800
    assert pubeval_scores(b, np.array([False]))[0] == pytest.approx(expected, rel=1e-5)
    # Everything borne off: the published sentinel.
    b = np.zeros((1, 2, 25), np.int8)
    b[0, 0, 5] = 15
    assert pubeval_scores(b, np.array([True]))[0] == 99999999.0


def test_pubeval_agent_plays_gnubgs_pubeval_move():
    agent = PubevalAgent()
    rng = np.random.default_rng(2)
    boards = [b for b in random_positions(400, seed=9) if b[1, 24] == 0][:300]
    for b in boards:
        pos = engine.Position(b)
        dice = tuple(sorted((int(x) for x in rng.integers(1, 7, 2)), reverse=True))
        if not engine.legal_plays(pos, dice):
            continue
        ours = agent.choose_play(pos, dice).position.board
        steps = gnubg_nn.pub_best_move(b.tolist(), *dice)
        theirs = apply_steps(
            b, [(s + 1, t + 1) for s, t in zip(steps[::2], steps[1::2], strict=True)]
        )
        race = gnubg_nn.classify(b.tolist()) <= gnubg_nn.c_race
        # Equal scores are ties that either program may break its own way.
        got = pubeval_scores(np.stack([ours, theirs]), np.array([race, race]))
        assert got[0] == pytest.approx(got[1], abs=1e-4), (pos, dice)


@pytest.mark.parametrize(
    ("distance", "count"),
    # The standard table of rolls (out of 36) that hit a blot at each distance with no
    # intervening blocks.
    [
        (1, 11),
        (2, 12),
        (3, 14),
        (4, 15),
        (5, 15),
        (6, 17),
        (7, 6),
        (8, 6),
        (9, 5),
        (10, 3),
        (11, 2),
        (12, 3),
        (15, 1),
        (16, 1),
        (18, 1),
        (20, 1),
        (24, 1),
        (13, 0),
        (14, 0),
        (17, 0),
        (19, 0),
    ],
)
def test_shots_follow_the_standard_table(distance, count):
    b = np.zeros((1, 2, 25), np.int8)
    b[0, 1, 23] = 1  # my blot on my 24-point, their 1-point
    b[0, 1, 0] = 14
    # Their only checker, `distance` pips above my blot on their count (25: their bar).
    b[0, 0, distance] = 1
    assert shots(b)[0] == count


def test_best_rows_matches_a_loop():
    rng = np.random.default_rng(3)
    parent = np.sort(rng.integers(0, 50, 400))
    scores = rng.integers(0, 5, 400).astype(float)
    rows = best_rows(scores, parent, 60)
    has = rows >= 0
    for p in range(60):
        idx = np.flatnonzero(parent == p)
        assert has[p] == bool(len(idx))
        if len(idx):
            assert rows[p] == idx[np.argmax(scores[idx])]


@pytest.mark.parametrize("spec", ["random?seed=1", "heuristic", "pubeval"])
def test_batched_choice_equals_single_choice(spec):
    agent = load_agent(spec)
    boards = np.stack(random_positions(200, seed=4))
    dice = np.random.default_rng(6).integers(1, 7, (200, 2))
    if hasattr(agent, "reseed"):
        agent.reseed(7)
    batched = agent.choose_boards(boards, dice)
    for b, d, got in zip(boards, dice, batched, strict=True):
        plays = engine.legal_plays(engine.Position(b), tuple(int(x) for x in d))
        if not plays:
            assert np.array_equal(got, b)
            continue
        assert any(np.array_equal(p.position.board, got) for p in plays)
        if spec != "random?seed=1":
            assert np.array_equal(
                agent.choose_play(engine.Position(b), tuple(d)).position.board, got
            )


def test_gnubg_agent_plays_gnubgs_move():
    agent = load_agent("gnubg?plies=0")
    for b in random_positions(60, seed=8):
        pos = engine.Position(b)
        plays = engine.legal_plays(pos, (5, 3))
        if not plays:
            continue
        play = agent.choose_play(pos, (5, 3))
        _, key = gnubg_nn.best_move(b.tolist(), 5, 3, b=1)
        # gnubg's key is of the resulting board with the sides swapped (opponent first).
        assert key == gnubg_nn.key_of_board(play.position.board[::-1].tolist())


def test_random_agent_is_roughly_uniform():
    agent = load_agent("random?seed=0")
    pos = engine.Position.start()
    counts: dict[str, int] = {}
    for _ in range(1600):
        key = str(agent.choose_play(pos, (3, 1)))
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 16
    assert min(counts.values()) > 50 and max(counts.values()) < 160


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("alphago", "unknown agent"),
        ("pubeval?plies=2", "no option 'plies'"),
        ("random?seed=x", "not an integer"),
        ("heuristic:foo", "takes no path"),
        ("td:/nonexistent/net.pt", "not found"),
        ("td?plies=5", None),
        ("gnubg?plies=9", "plies must be 0..4"),
    ],
)
def test_bad_specs_are_one_line_errors(spec, message, tmp_path, monkeypatch):
    monkeypatch.setattr("agents.td.SHIPPED", tmp_path / "td-best.pt")  # none shipped here
    with pytest.raises(ValueError) as err:
        load_agent(spec)
    assert "\n" not in str(err.value)
    if message:
        assert message in str(err.value)


def test_gnubg_without_the_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "gnubg_nn", None)
    with pytest.raises(ValueError, match="pip install gnubg-nn"):
        load_agent("gnubg")


def test_td_alone_needs_the_shipped_network(tmp_path, monkeypatch):
    monkeypatch.setattr("agents.td.SHIPPED", tmp_path / "td-best.pt")
    with pytest.raises(ValueError, match=r"td-best\.pt"):
        load_agent("td")


def test_td_alone_finds_the_shipped_network_from_any_directory(tmp_path, monkeypatch):
    import agents.td

    if not agents.td.SHIPPED.exists():
        pytest.skip("no shipped network in this checkout")
    monkeypatch.chdir(tmp_path)
    agent = load_agent("td")
    play = agent.choose_play(engine.Position.start(), (3, 1))
    assert play in engine.legal_plays(engine.Position.start(), (3, 1))


def test_parse_spec():
    assert parse_spec("td:runs/x.pt?plies=2&filter=6,2") == (
        "td",
        "runs/x.pt",
        {"plies": "2", "filter": "6,2"},
    )
    assert parse_spec("gnubg") == ("gnubg", None, {})


def test_cubeless_agents_never_double_and_always_take():
    agent = load_agent("pubeval")
    pos = engine.Position.start()
    assert not agent.double_decision(pos, GameContext())
    assert agent.take_decision(pos, GameContext(cube_value=2, cube_owner="opponent"))
    assert agent.resign_offer(pos, GameContext()) == 0
    assert not agent.accept_resignation(pos, GameContext(), 1)
    assert agent.accept_resignation(pos, GameContext(), 3)
    assert not agent.supports("acey-deucey") and agent.supports("nackgammon")


@pytest.mark.parametrize(
    ("context", "may"),
    [
        (GameContext(), True),
        (GameContext(cube_owner="opponent", cube_value=2), False),
        (GameContext(cube_owner="me", cube_value=2), True),
        (GameContext(cube_enabled=False), False),
        (GameContext(cube_value=64, cube_owner="me"), False),
        (GameContext(match_to=5, score=(4, 2), crawford=True), False),
        (GameContext(match_to=5, score=(4, 2)), False),  # needs one point: no use
        (GameContext(match_to=5, score=(2, 4)), True),  # post-Crawford, trailer doubles
        (GameContext(match_to=5, score=(3, 0), cube_value=2, cube_owner="me"), False),
    ],
)
def test_may_double_follows_the_rules(context, may):
    assert context.may_double() is may


def test_context_flip():
    c = GameContext(cube_value=4, cube_owner="me", match_to=7, score=(3, 5))
    f = c.flip()
    assert f.cube_owner == "opponent" and f.score == (5, 3) and f.flip() == c


def test_td_finds_a_shipped_network_by_name_from_any_directory(tmp_path, monkeypatch):
    from agents.td import CHECKPOINTS

    shipped = CHECKPOINTS / "td-80.pt"
    if not shipped.is_file():
        pytest.skip("td-80.pt is not shipped in this checkout")
    # The reference: the same file named by its absolute path.
    ref = load_agent(f"td:{shipped}")
    board = engine.Position.start().board[None]
    expected = ref.evaluator.probabilities(board)
    monkeypatch.chdir(tmp_path)  # nothing named td-80 here
    for spec in ("td:td-80", "td:td-80.pt", "td:checkpoints/td-80.pt", "td:td-80?plies=1"):
        agent = load_agent(spec)
        assert agent.name == spec
        np.testing.assert_array_equal(agent.evaluator.probabilities(board), expected)
    # A file in the working directory comes first, even if it shares a shipped name.
    (tmp_path / "td-80").write_bytes(b"not a network")
    with pytest.raises(ValueError, match="not a readable vrhcaby checkpoint"):
        load_agent("td:td-80")
    with pytest.raises(ValueError, match=r"not found \(shipped networks: .*td-80"):
        load_agent("td:td-nonexistent")
