"""Fill numba's on-disk cache and build the ahead-of-time compiled kernels, so that the first
command after an install answers at once instead of after the 10-25 s numba takes to
compile the move generator and the network kernels on first use.

    python -m vrhcaby.cli.warm        # scripts/install.sh runs it after installing

It runs, in this one process and on numba's JIT, the commands whose kernels compile on
first use: `moves` in each rule variant (the move generators), `hint` with each shipped
network (its encoding's kernel, the evaluator's layers, the lawful-probability clamp), at
1 ply for the standard ones and at 2 plies (pruned) for the default one on a contact
position and a race (a set's race evaluator), and a short
`rollout` (the luck adjustment's every-roll search). numba writes each compiled kernel
beside its source (or under NUMBA_CACHE_DIR), where later processes load it. Then
`engine.aot.build` compiles every kernel with the argument types those commands used into
one extension module (about a minute), which later processes load in milliseconds without
importing numba: a cold `vrhcaby hint` at 2 plies then spends its time on the search, not
on numba. A failed build only leaves the commands on numba's cache.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time
from collections.abc import Iterator

from agents.td import CHECKPOINTS
from engine import aot, jit
from vrhcaby.cli.main import main as cli
from vrhcaby.nn.net import load_evaluator

#: A position with contact (`vrhcaby moves 4HPwATDgc/ABMA 31` is the README's example).
POSITION = "4HPwATDgc/ABMA"
#: A race (`bench/cli_latency.py`'s): a set's race evaluator has kernels of its own.
RACE = "7bZNAADbdpMAAA"


def commands() -> Iterator[list[str]]:
    """The command lines that compile every cached kernel a command can reach."""
    for variant in ("standard", "nackgammon", "acey-deucey"):
        yield ["moves", "start", "21", "--variant", variant]
    yield ["moves", POSITION, "31"]
    yield ["rollout", POSITION, "--trials", "4", "--no-progress"]  # the luck adjustment's
    yield ["hint", POSITION, "31", "--plies", "2", "-n", "1"]  # the default network, pruned
    yield ["hint", RACE, "43", "--plies", "2", "-n", "1"]
    for network in sorted(CHECKPOINTS.glob("td-*.pt")):
        variant = load_evaluator(network).variant
        agent = f"td:{network.stem}"
        if variant == "standard":
            yield ["hint", POSITION, "31", "--agent", agent, "--plies", "1", "-n", "1"]
        else:
            yield ["hint", "start", "21", "--agent", agent, "--variant", variant, "-n", "1"]


def main() -> int:
    """Run every warming command quietly on numba's JIT, then build the ahead-of-time
    module from the kernels they compiled; 1 (and what failed) if a command fails."""
    start = time.perf_counter()
    os.environ["VRHCABY_AOT"] = "0"  # run on the JIT, noting the calls' types to build
    jit.reset()
    jit.recording = True
    for argv in commands():
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cli(argv)
        if code:
            print(f"warm: `vrhcaby {' '.join(argv)}` failed:\n{out.getvalue()}", file=sys.stderr)
            return 1
    print(f"numba's cache is warm ({time.perf_counter() - start:.0f} s)")
    start = time.perf_counter()
    del os.environ["VRHCABY_AOT"]
    try:
        built = aot.build(jit.KERNELS.values())
    except Exception as exc:  # no C compiler, an unwritable folder, a numba that fails
        print(f"warm: the ahead-of-time kernels were not built ({exc}); numba's cache serves")
        return 0
    print(f"ahead-of-time kernels built ({time.perf_counter() - start:.0f} s): {built}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
