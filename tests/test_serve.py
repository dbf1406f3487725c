"""`vrhcaby serve`: each answer of the HTTP API equals the command line's `--json` for the
same options (the command line run in this process, `vrhcaby.cli.main.main`, its printed
JSON read back); bad input is a 4xx with a one-line reason; a real server started as a
process answers, stops on SIGTERM and SIGINT with status 0, and keeps answering with
little memory growth after thousands of requests and broken connections."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="vrhcaby serve needs the serve extra")
from fastapi.testclient import TestClient

from vrhcaby.cli.main import main
from vrhcaby.equity.outcomes import SHORT_NAMES
from vrhcaby.serve.app import MAX_BODY, create_app
from vrhcaby.serve.work import Busy, Limits, Service

ROOT = Path(__file__).resolve().parent.parent
START = "4HPwATDgc/ABMA"
#: The start after 24/18 13/11 (6-2) and 24/20 13/7 (6-4); with the Match ID of a 7-point
#: match at 4-2 for the side on roll, the cube at 2 owned by it; as an XGID with a roll.
MIDGAME = "4OvgASHgc+QBUA"
MATCH = f"{MIDGAME}:UQngACAAIAAE"
XGID = "XGID=-a---aE-C--AdD---cae----AA:0:0:1:52:0:0:0:0:10"


def cli(capsys, *argv: str) -> dict:
    """What `vrhcaby ARGV --json` prints, read back."""
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Limits(rollout_trials=50_000))) as c:
        yield c


def ok(response) -> dict:
    assert response.status_code == 200, response.text
    return response.json()


# --- each endpoint answers as the command line does -------------------------------------


@pytest.mark.parametrize(
    ("position", "dice", "options"),
    [
        (START, "31", {}),
        (START, "66", {"plies": 1, "candidates": 3}),
        (MIDGAME, "52", {"plies": 2, "candidates": 4}),
        (MATCH, "43", {"cubeless": True}),
        (XGID, None, {"plies": 1}),
        (MIDGAME, "21", {"match_to": 5, "score": "3-4", "crawford": True}),
        (MIDGAME, "61", {"jacoby": False, "no_prune": True, "plies": 1}),
        ("start", "31", {"variant": "nackgammon", "plies": 1}),
    ],
)
def test_hint_equals_the_command_line(client, capsys, position, dice, options):
    argv = ["hint", position, *([dice] if dice else [])]
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False:
            argv.append("--no-" + key)
        else:
            argv += [flag, str(value)]
    want = cli(capsys, *argv)
    params = {"position": position, **({"dice": dice} if dice else {}), **options}
    assert ok(client.get("/hint", params=params)) == want
    assert ok(client.post("/hint", json=params)) == want


@pytest.mark.parametrize("verb", ["cube", "eval"])
@pytest.mark.parametrize(
    ("position", "argv", "options"),
    [
        (START, [], {}),
        (MIDGAME, ["--cube-plies", "2"], {}),  # the default depth: 2 plies
        (MIDGAME, ["--cube-plies", "0"], {"plies": 0}),
        (MATCH, ["--plies", "1"], {"plies": 1}),
        (MIDGAME, ["--match-to", "7", "--score", "5-6"], {"match_to": 7, "score": "5-6"}),
        (
            MIDGAME,
            ["--no-beavers", "--cube-efficiency", "0.5"],
            {"beavers": False, "cube_efficiency": 0.5},
        ),
        ("start", ["--variant", "nackgammon"], {"variant": "nackgammon"}),
    ],
)
def test_cube_and_eval_equal_the_command_line(client, capsys, verb, position, argv, options):
    want = cli(capsys, verb, position, *argv)
    assert ok(client.get(f"/{verb}", params={"position": position, **options})) == want
    assert ok(client.post(f"/{verb}", json={"position": position, **options})) == want


def test_a_board_array_is_the_position_it_draws(client, capsys):
    shown = cli(capsys, "show", MIDGAME)
    board = [shown["board"]["O"], shown["board"]["X"]]
    want = cli(capsys, "hint", MIDGAME, "52")
    assert ok(client.post("/hint", json={"board": board, "dice": "52"})) == want
    assert ok(client.post("/cube", json={"board": board})) == cli(capsys, "cube", MIDGAME)


def test_a_money_cube_given_as_value_and_owner_is_the_match_ids(client, capsys):
    import engine

    # The side on roll is player 1 of the Match ID; its opponent, player 0, owns the cube.
    state = engine.MatchState(cube_value=4, cube_owner=0, dice_owner=1, jacoby=True)
    want = cli(capsys, "cube", f"{MIDGAME}:{engine.match_id(state)}")
    got = ok(
        client.get("/cube", params={"position": MIDGAME, "cube_value": 4, "cube_owner": "opponent"})
    )
    assert got == want and got["available"] is False  # the opponent owns the cube
    # A centred cube of 1 is the bare Position ID's money game (the Jacoby rule on).
    centred = {"position": MIDGAME, "cube_value": 1, "cube_owner": "centre"}
    assert ok(client.get("/cube", params=centred)) == cli(capsys, "cube", MIDGAME)
    # /show draws the same state: the cube at 2 owned by the side on roll.
    mine = engine.MatchState(cube_value=2, cube_owner=1, dice_owner=1, jacoby=True)
    params = {"position": MIDGAME, "cube_value": 2, "cube_owner": "me", "format": "json"}
    assert ok(client.get("/show", params=params)) == cli(
        capsys, "show", f"{MIDGAME}:{engine.match_id(mine)}"
    )


def test_wildbg_move_and_eval_read_the_position_as_wildbg_writes_it(client, capsys):
    # The start: the side on roll's checkers positive, the opponent's negative.
    start = {"p24": 2, "p13": 5, "p8": 3, "p6": 5, "p1": -2, "p12": -5, "p17": -3, "p19": -5}
    got = ok(client.get("/move", params={**start, "die1": 3, "die2": 1, "plies": 1}))
    assert got == cli(capsys, "hint", START, "31", "--plies", "1")
    assert ok(client.get("/eval", params=start)) == cli(capsys, "eval", START)
    # A checker of each side on the bar: p25 the side on roll's, p0 the opponent's.
    bar = {**start, "p24": 1, "p25": 1, "p1": -1, "p0": -1}
    shown = ok(client.get("/show", params={**bar, "format": "json"}))
    assert shown["board"]["X"][24] == 1 and shown["board"]["O"][24] == 1
    assert shown["board"]["X"][23] == 1 and shown["board"]["O"][23] == 1


def test_moves_and_show_equal_the_command_line(client, capsys, tmp_path):
    for position, dice in ((START, "31"), (MATCH, "66"), (XGID, "52")):
        want = cli(capsys, "moves", position, dice)
        assert ok(client.get("/moves", params={"position": position, "dice": dice})) == want
    want = cli(capsys, "moves", "start", "12", "--variant", "acey-deucey")
    got = client.get("/moves", params={"position": "start", "dice": "12", "variant": "acey-deucey"})
    assert ok(got) == want
    got = ok(client.get("/show", params={"position": MATCH, "format": "json"}))
    assert got == cli(capsys, "show", MATCH)
    picture = tmp_path / "board.svg"
    play = cli(capsys, "moves", XGID, "52")["moves"][-1]["play"]
    assert main(["show", XGID, "--svg", str(picture), "--play", play]) == 0
    response = client.get("/show", params={"position": XGID, "play": play})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert response.text + "\n" == picture.read_text()


def test_openapi_health_and_the_board_are_served(client):
    spec = ok(client.get("/openapi.json"))
    for path in ("/hint", "/cube", "/eval", "/moves", "/show", "/rollout", "/rollout/{job_id}"):
        assert path in spec["paths"], path
    assert client.get("/docs").status_code == 200
    assert ok(client.get("/health")) == {"status": "ok"}
    page = client.get("/", follow_redirects=True)
    assert page.status_code == 200 and "board.js" in page.text
    for name in ("board.js", "board.css"):
        assert client.get(f"/board/{name}").status_code == 200
    # The page's heads of the five probabilities are the command line's, in their order.
    heads = re.search(r"const NAMES = (\[[^\]]*\]);", client.get("/board/board.js").text)
    assert heads is not None and json.loads(heads.group(1)) == list(SHORT_NAMES)


# --- a match analysed ------------------------------------------------------------------


@pytest.fixture(scope="module")
def mat_file(tmp_path_factory) -> Path:
    """A money session of two games between pubeval and the heuristic bot, as `.mat`."""
    from agents import load_agent
    from vrhcaby.io import matchfile
    from vrhcaby.play.tournament import PairSettings, play_pair

    pair = play_pair(load_agent("pubeval"), load_agent("heuristic"), games=1, seed=5,
                     settings=PairSettings(record=True))  # fmt: skip
    records = [
        dict(g.record, a=pair.a, b=pair.b, a_seat=g.a_seat, sample=g.sample, copy=g.copy, seed=5)
        for g in sorted(pair.results, key=lambda g: (g.sample, g.copy))
    ]
    path = tmp_path_factory.mktemp("mat") / "session.mat"
    matchfile.export_mat(records, path)
    return path


@pytest.mark.parametrize("plies", [0, 1])
def test_analyse_equals_the_command_line(client, capsys, mat_file, plies):
    want = cli(capsys, "analyse", str(mat_file), "--plies", str(plies), "--jobs", "1")
    got = ok(client.post("/analyse", json={"mat": mat_file.read_text(), "plies": plies,
                                           "name": "session.mat"}))  # fmt: skip
    assert got == {**want, "path": "session.mat"}


def test_analyse_refuses_a_bad_file_and_too_much_work(client, mat_file):
    lines = mat_file.read_text().splitlines()
    broken = "\n".join(line.replace("Wins", "Loses") for line in lines)
    response = client.post("/analyse", json={"mat": broken, "name": "x.mat", "plies": 0})
    assert response.status_code == 400 and response.json()["detail"].startswith("x.mat:")
    small = TestClient(create_app(Limits(analyse_plays=(10, 10, 10)), warm=False))
    response = small.post("/analyse", json={"mat": mat_file.read_text(), "plies": 0})
    assert response.status_code == 400 and "at most 10" in response.json()["detail"]


# --- rollouts as jobs -------------------------------------------------------------------


def wait_for(client, job_id: str, until=("done", "cancelled", "failed"), limit=120.0) -> dict:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        job = ok(client.get(f"/rollout/{job_id}"))
        if job["state"] in until:
            return job
        time.sleep(0.05)
    raise AssertionError(f"rollout {job_id} still {job['state']} after {limit} s")


@pytest.mark.parametrize(
    ("argv", "body"),
    [
        (["--truncate", "6"], {"truncate": 6}),
        pytest.param(
            ["52", "--truncate", "4", "--candidates", "3"],
            {"dice": "52", "truncate": 4, "candidates": 3},
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_rollout_job_finishes_with_the_command_lines_result(client, capsys, argv, body):
    want = cli(capsys, "rollout", MIDGAME, "--trials", "72", "--seed", "5", "--jobs", "1", *argv)
    started = client.post("/rollout", json={"position": MIDGAME, "trials": 72, "seed": 5, **body})
    assert started.status_code == 202
    job = wait_for(client, started.json()["id"])
    assert job["state"] == "done" and job["done"] == 72
    assert job["result"] == want


def test_a_rollout_job_can_be_cancelled_and_keeps_its_trials(client):
    started = ok_job = client.post(
        "/rollout", json={"position": START, "trials": 50_000, "truncate": 1, "luck": False}
    )
    assert started.status_code == 202
    job_id = ok_job.json()["id"]
    wait_for(client, job_id, until=("running",))
    assert client.delete(f"/rollout/{job_id}").status_code == 200
    job = wait_for(client, job_id, limit=30)
    assert job["state"] == "cancelled" and job["done"] < 50_000
    assert job["result"] is None or job["result"]["rollout"]["trials"] == job["done"]
    assert client.get("/rollout/nosuchjob").status_code == 404


# --- bad input: a 4xx and one line -----------------------------------------------------


BAD = [
    ("get", "/hint", {"position": "XXX", "dice": "31"}, 400, "Position ID"),
    ("get", "/hint", {"position": START, "dice": "71"}, 400, "dice"),
    ("get", "/hint", {"position": START}, 400, "give the dice"),
    ("get", "/hint", {"position": START, "dice": "31", "plies": 3}, 422, "plies"),
    ("get", "/hint", {"position": START, "dice": "31", "plies": "x"}, 422, "plies"),
    ("get", "/hint", {"position": START, "dice": "31", "candidates": 0}, 422, "candidates"),
    ("get", "/hint", {"position": START, "dice": "31", "bogus": 1}, 422, "bogus"),
    ("get", "/hint", {"position": START, "dice": "31", "agent": "td:/etc/passwd"}, 400, "shipped"),
    ("get", "/hint", {"position": START, "dice": "31", "agent": "pubeval"}, 400, "td"),
    ("get", "/cube", {"position": START, "score": "3-4"}, 400, "--match-to"),
    ("get", "/cube", {"position": START, "max_cube": 3}, 400, "power of two"),
    ("get", "/cube", {"position": START, "variant": "chess"}, 400, "variant"),
    (
        "get",
        "/hint",
        {"position": "start", "dice": "12", "variant": "acey-deucey"},
        400,
        "acey-deucey",
    ),
    ("get", "/cube", {"position": START, "cube_owner": "nobody"}, 422, "cube_owner"),
    ("get", "/cube", {"position": MATCH, "cube_value": 2}, 400, "Match ID"),
    ("get", "/cube", {"position": START, "cube_efficiency": "nan"}, 422, "cube_efficiency"),
    ("get", "/cube", {}, 400, "position"),
    ("get", "/eval", {"p24": 16}, 400, "p24"),
    ("get", "/eval", {"p24": "２"}, 400, "p24"),
    ("get", "/move", {"p24": 2, "die1": 3}, 400, "die2"),
    ("get", "/moves", {"position": START}, 422, "dice"),
    ("get", "/moves", {"position": "AAAAAAAAAAAAAA", "dice": "31"}, 400, "over"),
    ("get", "/show", {"position": START, "play": "24/1"}, 400, "play"),
    ("get", "/show", {"position": START, "format": "png"}, 422, "format"),
    ("post", "/hint", {"board": [[0] * 25] * 3, "dice": "31"}, 422, "board"),
    ("post", "/hint", {"board": [[16] + [0] * 24, [0] * 25], "dice": "31"}, 422, "board"),
    ("post", "/hint", {"board": [[0] * 23 + [15, 0], [15] + [0] * 24], "dice": "31"}, 400, "point"),
    ("post", "/hint", {"position": START, "board": [[0] * 25] * 2, "dice": "31"}, 400, "either"),
    ("post", "/cube", ["not", "an", "object"], 422, "dict"),
    ("post", "/rollout", {"position": START, "trials": 10**9}, 400, "at most"),
    ("post", "/rollout", {"position": START, "trials": 0}, 422, "trials"),
    ("post", "/rollout", {"position": START, "dice": "31", "opening": True}, 400, "opening"),
]


@pytest.mark.parametrize(("method", "path", "data", "status", "word"), BAD)
def test_bad_input_is_a_4xx_with_one_line(client, method, path, data, status, word):
    send = client.get if method == "get" else client.post
    response = send(path, **({"params": data} if method == "get" else {"json": data}))
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and len(detail) <= 300
    assert "Traceback" not in detail and word.lower() in detail.lower(), detail


def test_malformed_and_oversized_bodies_are_refused(client):
    headers = {"content-type": "application/json"}
    response = client.post("/hint", content=b'{"position": ', headers=headers)
    assert response.status_code == 422 and "json" in response.json()["detail"].lower()
    response = client.post("/hint", content=b"x" * (MAX_BODY + 1), headers=headers)
    assert response.status_code == 413 and "bytes" in response.json()["detail"]


def test_a_full_queue_is_refused_and_the_next_request_answers():
    service = Service(Limits(queue=1))
    gate = threading.Event()

    async def scenario() -> None:
        first = asyncio.ensure_future(service.run(gate.wait, 10))
        await asyncio.sleep(0.05)
        with pytest.raises(Busy):
            await service.run(lambda: None)
        gate.set()
        assert await first is True
        assert await service.run(lambda: 7) == 7

    try:
        asyncio.run(scenario())
    finally:
        service.close()


def test_two_engine_threads_answer_concurrent_requests_alike(capsys):
    params = {"position": MIDGAME, "dice": "52", "plies": 1}
    with TestClient(create_app(Limits(threads=2))) as c, ThreadPoolExecutor(6) as pool:
        # After the warm-up, as in the module's client: a process that has not loaded the
        # compiled kernels yet values small batches in numpy, a millionth apart.
        want = cli(capsys, "hint", MIDGAME, "52", "--plies", "1")
        answers = list(pool.map(lambda _: c.get("/hint", params=params), range(18)))
    assert all(ok(a) == want for a in answers)


# --- a real server -------------------------------------------------------------------


@contextlib.contextmanager
def server(*args: str):
    """`vrhcaby serve --port 0` as a process: (process, host, port) once it answers."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vrhcaby.cli", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        found = re.search(r"http://([\d.]+):(\d+)/", line)
        assert found, f"no address in {line!r}; stderr: {proc.stderr.read()}"  # type: ignore[union-attr]
        yield proc, found.group(1), int(found.group(2))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def get(host: str, port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_real_server_answers_and_stops_cleanly(sig):
    with server() as (proc, host, port):
        assert host == "127.0.0.1"
        status, body = get(host, port, f"/hint?position={START}&dice=31&candidates=1")
        assert status == 200 and json.loads(body)["moves"][0]["play"] == "8/5 6/5"
        proc.send_signal(sig)
        assert proc.wait(15) == 0
        assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def load(host: str, port: int, requests: int, clients: int) -> list[int]:
    """`requests` GETs from `clients` threads on keep-alive connections; the statuses."""
    paths = [
        f"/hint?position={START}&dice={a}{b}&plies=0&candidates=3"
        for a in range(1, 7)
        for b in range(1, 7)
    ] + ["/health", f"/moves?position={START}&dice=43", "/hint?position=XXX&dice=31"]
    statuses: list[int] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=60)
        mine = []
        for i in range(k, requests, clients):
            conn.request("GET", paths[i % len(paths)])
            response = conn.getresponse()
            response.read()
            mine.append(response.status)
        conn.close()
        with lock:
            statuses.extend(mine)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return statuses


def broken_connections(host: str, port: int, count: int) -> None:
    """Connections that go away: at once, mid-headers, mid-body, and garbage."""
    for i in range(count):
        with socket.create_connection((host, port), timeout=10) as s:
            kind = i % 4
            if kind == 1:
                s.sendall(b"GET /hint?position=4HPw")
            elif kind == 2:
                s.sendall(b'POST /hint HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{"po')
            elif kind == 3:
                s.sendall(b"\x00\xff garbage \r\n\r\n")
                with contextlib.suppress(OSError):
                    s.recv(1000)


@pytest.mark.slow
def test_load_and_broken_connections_leave_it_answering_with_little_memory_growth():
    with server() as (proc, host, port):
        # Warm every path, the allocator pools and the kernels, which the evaluator takes
        # up after its first small batches (numpy until then): the same load as the one
        # measured, so that what is measured is growth in a steady state (a leak).
        load(host, port, 2500, 8)
        broken_connections(host, port, 200)
        before = rss_kib(proc.pid)
        statuses = load(host, port, 2000, 8)
        broken_connections(host, port, 200)
        statuses += load(host, port, 500, 8)
        after = rss_kib(proc.pid)
        assert len(statuses) == 2500
        assert set(statuses) <= {200, 400}, set(statuses)
        assert statuses.count(400) == sum(1 for i in range(2000) if i % 39 == 38) + sum(
            1 for i in range(500) if i % 39 == 38
        )
        assert get(host, port, "/health") == (200, b'{"status":"ok"}')
        assert after - before < 20_000, f"RSS grew {after - before} KiB"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
