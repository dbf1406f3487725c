"""What checking the bear-off cache costs: the whole file's CRC-32 (a file without a
sound stamp), against the per-table CRC-32 a process pays when it first reads a table of
a stamped file (issue 32: a cache damaged in place under its stamp must be found).

Each figure is the median of `--repeat` runs in fresh interpreters (the file's pages
in the page cache, as for a command run after another): mapping the file and reading
its stamp, then checking one table, for each table, then the whole file as an unstamped
read does. A 0-ply bear-off hint reads `win` (two-sided) or `rolls` and `first`
(one-sided).

    python bench/bearoff_check.py [--repeat 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

PROBE = r"""
import json, time
t0 = time.perf_counter()
from vrhcaby.nn import bearoff_db as b
path = b.path()
b.database()  # built and stamped if need be
t = time.perf_counter(); arrays = b._map(path); crcs = b._stamped(path, arrays["checksum"])
out = {"map and stamp": time.perf_counter() - t}
for name in b.TABLES:
    t = time.perf_counter(); b._crc(arrays[name]); out[name] = time.perf_counter() - t
t = time.perf_counter(); b._checksum(arrays); out["whole file"] = time.perf_counter() - t
out["stamped"] = crcs is not None
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", PROBE], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(args.repeat)
    ]
    assert all(r["stamped"] for r in runs), "the cache has no sound stamp yet: run again"
    whole = statistics.median(r["whole file"] for r in runs)
    print(f"{'check':<16}{'median ms':>10}{'of whole':>10}")
    for key in ("map and stamp", "rolls", "first", "win", "centred", "owned", "theirs"):
        ms = statistics.median(r[key] for r in runs)
        print(f"{key:<16}{1000 * ms:>10.2f}{ms / whole:>10.2f}")
    print(f"{'whole file':<16}{1000 * whole:>10.2f}{1.0:>10.2f}")


if __name__ == "__main__":
    main()
