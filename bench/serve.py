"""`vrhcaby serve` answering over HTTP, beside GNU Backgammon's cold 2-ply hint, in one run.

A server is started (`vrhcaby serve --port 0`, one engine thread, warm: the network
loaded and the kernels compiled before it listens). Then, on the positions of
`bench/cli_latency.py` (contact, race, bear-off):

- **latency**: a warm `GET /hint` at 0 and 2 plies over one keep-alive connection, the
  median of `--repeat` requests per position, beside `gnubg -t` giving the same 2-ply hint
  from a cold start (the same command as `bench/cli_latency.py`, median of `--repeat`),
  and the ratio;
- **throughput**: requests per second of 0-ply hints (the 21 rolls of each position in
  turn) from 1, 4 and 8 concurrent clients, each on its own keep-alive connection, and of
  2-ply hints from 4 clients; the clients are threads of this process, on the same two
  cores as the server;
- **memory**: the server's resident memory before and after `--soak` requests (default
  10,000) of the same mix from 8 clients, with 100 broken connections among them.

    python bench/serve.py [--repeat 9] [--soak 10000]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_latency import GNUBG, POSITIONS, gnubg_command, run

ROOT = Path(__file__).resolve().parents[1]
ROLLS = [f"{a}{b}" for a in range(1, 7) for b in range(a, 7)]


def start_server() -> tuple[subprocess.Popen, str, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "vrhcaby.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    line = proc.stdout.readline()  # type: ignore[union-attr]
    found = re.search(r"http://([\d.]+):(\d+)/", line)
    if not found:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc, found.group(1), int(found.group(2))


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def hint_path(position: str, dice: str, plies: int) -> str:
    query = {"position": position, "dice": dice, "plies": plies, "candidates": 5}
    return f"/hint?{urllib.parse.urlencode(query)}"


def timed_get(conn: http.client.HTTPConnection, path: str) -> float:
    start = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        raise SystemExit(f"{path}: {response.status}")
    return time.perf_counter() - start


def throughput(host: str, port: int, paths: list[str], clients: int, requests: int) -> float:
    """Requests per second: `requests` GETs of `paths` in turn from `clients` threads."""
    barrier = threading.Barrier(clients + 1)

    def client(k: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        barrier.wait()
        for i in range(k, requests, clients):
            timed_get(conn, paths[i % len(paths)])
        conn.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return requests / (time.perf_counter() - start)


def break_connections(host: str, port: int, count: int) -> None:
    for i in range(count):
        with socket.create_connection((host, port), timeout=10) as s:
            if i % 2:
                s.sendall(b"GET /hint?position=4HPw")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--soak", type=int, default=10_000)
    args = parser.parse_args(argv)
    proc, host, port = start_server()
    try:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        latency: dict[tuple[str, int], float] = {}
        for position, dice, _ in POSITIONS:
            for plies in (0, 2):
                path = hint_path(position, dice, plies)
                timed_get(conn, path)  # the first of each: its caches
                latency[position, plies] = statistics.median(
                    timed_get(conn, path) for _ in range(args.repeat)
                )
        gnubg: dict[str, float] = {}
        if GNUBG:
            for position, dice, _ in POSITIONS:
                command, script = gnubg_command(position, dice)
                run(command, ROOT, script)
                gnubg[position] = statistics.median(
                    run(command, ROOT, script) for _ in range(args.repeat)
                )
        mix0 = [hint_path(p, d, 0) for d in ROLLS for p, _, _ in POSITIONS]
        mix2 = [hint_path(p, d, 2) for d in ROLLS[:6] for p, _, _ in POSITIONS]
        rates = {n: throughput(host, port, mix0, n, 400 * n) for n in (1, 4, 8)}
        rate2 = throughput(host, port, mix2, 4, 48)
        before = rss_mib(proc.pid)
        half = args.soak // 2
        throughput(host, port, mix0, 8, half)
        break_connections(host, port, 100)
        throughput(host, port, mix0, 8, args.soak - half)
        after = rss_mib(proc.pid)
        alive = timed_get(http.client.HTTPConnection(host, port, timeout=30), "/health")
    finally:
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(30)

    print(f"vrhcaby serve, one engine thread, warm; median of {args.repeat} requests (ms)")
    print(f"  {'position':16} {'roll':4} {'kind':8} {'0-ply':>8} {'2-ply':>8}"
          f" {'gnubg 2-ply cold':>17} {'2-ply / gnubg':>14}")  # fmt: skip
    ratios = []
    for position, dice, kind in POSITIONS:
        zero, two = 1000 * latency[position, 0], 1000 * latency[position, 2]
        if GNUBG:
            cold = 1000 * gnubg[position]
            ratios.append(two / cold)
            tail = f" {cold:17.1f} {two / cold:14.3f}"
        else:
            tail = f" {'-':>17} {'-':>14}"
        print(f"  {position:16} {dice:4} {kind:8} {zero:8.1f} {two:8.1f}{tail}")
    zeros = [1000 * latency[p, 0] for p, _, _ in POSITIONS]
    twos = [1000 * latency[p, 2] for p, _, _ in POSITIONS]
    line = (
        f"  median: 0-ply {statistics.median(zeros):.1f} ms, 2-ply {statistics.median(twos):.1f} ms"
    )
    if ratios:
        line += f", 2-ply / gnubg's cold 2-ply {statistics.median(ratios):.3f}"
    print(line if GNUBG else line + " (gnubg is not installed: apt-get install gnubg)")
    print("throughput, requests per second (clients are threads on the same 2 cores)")
    for n, rate in rates.items():
        print(f"  0-ply hints, {n} client{'s' if n > 1 else ''}: {rate:8.1f}")
    print(f"  2-ply hints, 4 clients: {rate2:8.1f}")
    print(
        f"memory: {before:.1f} MiB before {args.soak} requests (8 clients, 100 broken "
        f"connections), {after:.1f} MiB after ({after - before:+.1f} MiB); "
        f"/health after: {1000 * alive:.1f} ms; stopped by SIGTERM with status {status}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
