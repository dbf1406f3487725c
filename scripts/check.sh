#!/usr/bin/env bash
# The test command (after `bash scripts/install.sh dev,ray`): lint, format, types, the
# layer contract, the wheel on its own, then the tests; it stops at the first step that
# fails. Arguments go to pytest (`bash scripts/check.sh -m "not slow" tests/test_pool.py`).
#
# The wheel step builds the wheel, installs it (not editable) into a fresh virtualenv with
# torch 2.13.0 from local disk as install.sh installs it, checks that the wheel holds every
# module of the checkout, the shipped networks and the package data, and runs
# `vrhcaby hint` from a folder outside the checkout: it must answer as the checkout does,
# with the shipped network.
#
# For local use only, CHECK_SKIP=step,step skips steps (ruff, format, mypy, imports, wheel,
# pytest); CI runs them all.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
STEPS="ruff format mypy imports wheel pytest"
skip=",${CHECK_SKIP:-},"
if [ "$skip" != ",," ]; then
    for name in ${CHECK_SKIP//,/ }; do
        case " $STEPS " in
            *" $name "*) ;;
            *) echo "check.sh: unknown step '$name' in CHECK_SKIP (steps: $STEPS)" >&2 && exit 2 ;;
        esac
    done
    if [ "${CI:-}" = true ]; then
        echo "check.sh: CHECK_SKIP is for local use; CI runs every step" >&2
        exit 2
    fi
fi

# step NAME COMMAND...: run COMMAND unless NAME is skipped; stop the check if it fails.
step() {
    local name="$1"
    shift
    if [[ "$skip" == *",$name,"* ]]; then
        echo "== $name: skipped (CHECK_SKIP)"
        return
    fi
    echo "== $name: $*"
    local start=$SECONDS code
    set +e
    (set -e && "$@")  # errexit holds inside the step's own functions too
    code=$?
    set -e
    if [ "$code" != 0 ]; then
        echo "check.sh: step '$name' failed (exit $code): $*" >&2
        exit "$code"
    fi
    echo "== $name: ok ($((SECONDS - start)) s)"
}

wheel_check() {
    unset PYTHONPATH  # the wheel's environment sees nothing of the checkout
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    rm -rf build  # setuptools' staging folder: a stale file there would go into the wheel
    .venv/bin/python -m build --wheel --outdir "$tmp/dist" . >"$tmp/build.log" 2>&1 \
        || { cat "$tmp/build.log" >&2; return 1; }
    rm -rf build
    local wheel
    wheel="$(ls "$tmp"/dist/*.whl)"
    .venv/bin/python - "$wheel" <<'PY'
import sys
import zipfile
from pathlib import Path

held = set(zipfile.ZipFile(sys.argv[1]).namelist())
want = {str(p) for top in ("engine", "agents", "vrhcaby") for p in Path(top).rglob("*.py")}
want |= {"engine/py.typed", "agents/py.typed", "vrhcaby/py.typed", "train.py", "evaluate.py"}
want |= {str(p) for p in Path("vrhcaby").rglob("data/*.json")}
want |= {str(p) for p in Path("vrhcaby/serve/static").iterdir()}  # the web board
shipped = [*Path("checkpoints").glob("td-*.pt"), *Path("checkpoints").glob("onesided-*.pt"), Path("checkpoints/sixdice-td.pt")]
want |= {f"vrhcaby/checkpoints/{p.name}" for p in shipped}
missing = sorted(want - held)
if missing:
    sys.exit(f"the wheel lacks {len(missing)} file(s) of the checkout: {', '.join(missing)}")
print(f"{Path(sys.argv[1]).name}: {len(held)} files, every module and shipped network")
PY
    # A fresh environment: torch as install.sh installs it, then the wheel and its
    # dependencies (pip's cache reused; no byte-compiling, which only costs time here).
    python3 -m venv --without-pip "$tmp/venv"
    local pip=(.venv/bin/pip --python "$tmp/venv/bin/python" install -q --no-compile)
    "${pip[@]}" torch==2.13.0
    "${pip[@]}" "$wheel"
    local position=4HPwATDgc/ABMA
    .venv/bin/python -m vrhcaby.cli hint "$position" 31 >"$tmp/checkout.txt"
    mkdir "$tmp/elsewhere"
    (
        cd "$tmp/elsewhere"
        "$tmp/venv/bin/vrhcaby" hint "$position" 31 >"$tmp/wheel.txt"
        "$tmp/venv/bin/python" -c "
import sys
import agents.td
where = agents.td.CHECKPOINTS
assert where.is_relative_to(sys.prefix) and (where / 'td-best.pt').is_file(), where
"
    )
    if ! diff -u "$tmp/checkout.txt" "$tmp/wheel.txt"; then
        echo "the installed wheel's 'vrhcaby hint' differs from the checkout's" >&2
        return 1
    fi
    grep -q "^  1  " "$tmp/wheel.txt"  # a ranked play list
    echo "the installed wheel answers 'vrhcaby hint $position 31' from $tmp/elsewhere" \
        "with the shipped network"
}

step ruff .venv/bin/ruff check .
step format .venv/bin/ruff format --check .
step mypy .venv/bin/mypy
step imports .venv/bin/lint-imports
step wheel wheel_check
step pytest .venv/bin/python -m pytest "$@"
