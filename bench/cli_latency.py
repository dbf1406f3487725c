"""Cold-start latency of `vrhcaby hint` at 0 and 2 plies, next to `python -c pass`.

Each command runs in a fresh interpreter (so imports, numba's cached kernels and the
checkpoint load all count), five times; the medians of its wall time and of its CPU time
(user + system, which a busy machine does not inflate the way it does wall time) are
printed. The network is the shipped
`checkpoints/td-best.pt` when it exists, else a 198-80-5 network with random weights of the
same shape (the time does not depend on the weights).

    python bench/cli_latency.py [--position ID] [--dice 31] [--repeat 5]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).parents[1]
SHIPPED = ROOT / "checkpoints" / "td-best.pt"


def stand_in_network(directory: Path) -> Path:
    """A 198-80-5 Tesauro-encoded network with random weights."""
    from vrhcaby.nn import checkpoint
    from vrhcaby.nn.net import NetConfig

    config = NetConfig("tesauro", (80,), "sigmoid")
    rng = np.random.default_rng(0)
    arrays = {}
    for i, (n_in, n_out) in enumerate(zip(config.sizes[:-1], config.sizes[1:], strict=True)):
        arrays[f"model/{2 * i}.weight"] = rng.normal(0, 0.1, (n_out, n_in)).astype(np.float32)
        arrays[f"model/{2 * i}.bias"] = np.zeros(n_out, np.float32)
    path = directory / "stand-in.pt"
    checkpoint.save(path, arrays, {"net": config.to_dict(), "config": {"variant": "standard"}})
    return path


def hint_command(agent: str, position: str, dice: str, plies: int) -> list[str]:
    """The hint command line, through `vrhcaby.cli.main` (registering `hint` if the installed
    command list does not have it yet)."""
    code = (
        "import sys, vrhcaby.cli.main as cli\n"
        "if 'hint' not in cli.COMMANDS: cli.COMMANDS = ('hint',)\n"
        "sys.exit(cli.main(sys.argv[1:]))"
    )
    args = ["hint", position, dice, "--agent", agent, "--plies", str(plies)]
    return [sys.executable, "-c", code, *args]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_seconds(command: list[str], repeat: int) -> tuple[float, float]:
    """Medians of (wall, CPU) seconds over `repeat` runs of `command`."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), _children_cpu()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
        wall.append(time.perf_counter() - start)
        cpu.append(_children_cpu() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--position", default="4HPwATDgc/ABMA")
    parser.add_argument("--dice", default="31")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if SHIPPED.is_file():
            agent, label = "td", str(SHIPPED.relative_to(ROOT))
        else:
            agent, label = f"td:{stand_in_network(Path(tmp))}", "stand-in 198-80-5 (random)"
        # One warm-up run so numba's on-disk cache is filled, as after installation.
        warm_up = hint_command(agent, args.position, args.dice, 0)
        subprocess.run(warm_up, cwd=ROOT, check=True, capture_output=True)
        rows = [("python -c pass", [sys.executable, "-c", "pass"])]
        for plies in (0, 2):
            command = hint_command(agent, args.position, args.dice, plies)
            rows.append((f"vrhcaby hint, {plies}-ply", command))
        setting = f"position {args.position}, roll {args.dice}"
        print(f"network: {label}; {setting}; median of {args.repeat} cold starts")
        print(f"  {'':<22} {'wall':>8} {'CPU':>8}")
        for name, command in rows:
            wall, cpu = median_seconds(command, args.repeat)
            print(f"  {name:<22} {wall:6.3f} s {cpu:6.3f} s")


if __name__ == "__main__":
    main()
