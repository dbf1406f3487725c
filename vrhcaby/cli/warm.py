"""Fill numba's on-disk cache, so that the first command after an install answers in about a
second instead of the 10-25 s numba takes to compile the move generator and the network
kernels on first use.

    python -m vrhcaby.cli.warm        # scripts/install.sh runs it after installing

It runs, in this one process, the commands whose kernels compile on first use: `moves` in
each rule variant (the move generators), `hint` with each shipped network (its encoding's
kernel, the evaluator's layers, the lawful-probability clamp), at 1 ply for the standard
ones, and a short `rollout` (the luck adjustment's every-roll search). numba writes each
compiled kernel beside its source (or under NUMBA_CACHE_DIR), where later processes load
it.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
from collections.abc import Iterator

from agents.td import CHECKPOINTS
from vrhcaby.cli.main import main as cli
from vrhcaby.nn.net import load_evaluator

#: A position with contact (`vrhcaby moves 4HPwATDgc/ABMA 31` is the README's example).
POSITION = "4HPwATDgc/ABMA"


def commands() -> Iterator[list[str]]:
    """The command lines that compile every cached kernel a command can reach."""
    for variant in ("standard", "nackgammon", "acey-deucey"):
        yield ["moves", "start", "21", "--variant", variant]
    yield ["moves", POSITION, "31"]
    yield ["rollout", POSITION, "--trials", "4", "--no-progress"]  # the luck adjustment's
    for network in sorted(CHECKPOINTS.glob("td-*.pt")):
        variant = load_evaluator(network).variant
        agent = f"td:{network.stem}"
        if variant == "standard":
            yield ["hint", POSITION, "31", "--agent", agent, "--plies", "1", "-n", "1"]
        else:
            yield ["hint", "start", "21", "--agent", agent, "--variant", variant, "-n", "1"]


def main() -> int:
    """Run every warming command quietly; 1 (and what failed) if one of them fails."""
    start = time.perf_counter()
    for argv in commands():
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cli(argv)
        if code:
            print(f"warm: `vrhcaby {' '.join(argv)}` failed:\n{out.getvalue()}", file=sys.stderr)
            return 1
    print(f"numba's cache is warm ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
