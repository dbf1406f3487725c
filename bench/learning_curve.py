"""The learning curve of a training run: points per game against each evaluation opponent.

Reads the `eval/ppg_*` scalars (and their 95% intervals) that `train.py` logs to
TensorBoard, prints them as a table and draws them as an SVG picture for the README.

    python bench/learning_curve.py runs/quick__1__1796017957 --out docs/learning-curve.svg
    python bench/learning_curve.py runs/rich__1__1796026359 \
        --then runs/expert-wide__4__1796037527@2000000 \
        --then runs/contact__6__1796056504@5000000 --out docs/learning-curve-contact.svg

`--then RUN@GAMES` continues the curve with a run warm-started (`init_from`) from the first
one's network at GAMES games: its own games are counted on from there.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

_W, _H, _PAD = 640, 360, 48
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def read_curves(run_dir: str) -> dict[str, list[tuple[int, float, float, float]]]:
    """`{opponent: [(games, ppg, low, high), ...]}` from a run's event files."""
    # A resumed run writes its steps again; keep every event and let the last one win.
    acc = EventAccumulator(run_dir, size_guidance={"scalars": 0}, purge_orphaned_data=False)
    acc.Reload()
    curves = {}
    for tag in acc.Tags()["scalars"]:
        if not tag.startswith("eval/ppg_"):
            continue
        name = tag.removeprefix("eval/ppg_")
        low = {e.step: e.value for e in acc.Scalars(f"eval/ci95_low_{name}")}
        high = {e.step: e.value for e in acc.Scalars(f"eval/ci95_high_{name}")}
        points = {e.step: (e.step, e.value, low[e.step], high[e.step]) for e in acc.Scalars(tag)}
        curves[name] = sorted(points.values())
    if not curves:
        raise SystemExit(f"{run_dir}: no eval/ppg_* scalars (was evaluation on?)")
    return curves


def chain(
    curves: dict[str, list[tuple[int, float, float, float]]],
    later: dict[str, list[tuple[int, float, float, float]]],
    offset: int,
) -> dict[str, list[tuple[int, float, float, float]]]:
    """`curves` up to `offset` games, then `later`'s points `offset` games on."""
    out = {name: [p for p in pts if p[0] <= offset] for name, pts in curves.items()}
    for name, pts in later.items():
        out.setdefault(name, []).extend((g + offset, v, lo, hi) for g, v, lo, hi in pts)
    return {name: pts for name, pts in out.items() if pts}


def svg(curves: dict[str, list[tuple[int, float, float, float]]], title: str) -> str:
    """A line chart with 95% interval bars; zero ppg marked."""
    xs = [g for pts in curves.values() for g, *_ in pts]
    ys = [v for pts in curves.values() for _, _, lo, hi in pts for v in (lo, hi)] + [0.0]
    x0, x1 = 0, max(xs)
    y0, y1 = min(ys) - 0.05, max(ys) + 0.05

    def px(g: float) -> float:
        return _PAD + (g - x0) / (x1 - x0 or 1) * (_W - 2 * _PAD)

    def py(v: float) -> float:
        return _H - _PAD - (v - y0) / (y1 - y0) * (_H - 2 * _PAD)

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{_W}" height="{_H}" fill="white"/>',
        f'<text x="{_W / 2}" y="20" text-anchor="middle">{title}</text>',
        f'<line x1="{_PAD}" y1="{py(0):.1f}" x2="{_W - _PAD}" y2="{py(0):.1f}" '
        'stroke="#888" stroke-dasharray="4 3"/>',
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="black"/>',
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" stroke="black"/>',
        f'<text x="{_W / 2}" y="{_H - 10}" text-anchor="middle">training games</text>',
        f'<text x="14" y="{_H / 2}" transform="rotate(-90 14 {_H / 2})" '
        'text-anchor="middle">points per game (95% CI)</text>',
    ]
    for k in range(5):
        g = x0 + (x1 - x0) * k / 4
        v = y0 + (y1 - y0) * k / 4
        out.append(
            f'<text x="{px(g):.1f}" y="{_H - _PAD + 16}" text-anchor="middle">'
            f"{g / 1000:.0f}k</text>"
        )
        out.append(f'<text x="{_PAD - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{v:+.2f}</text>')
    for i, (name, pts) in enumerate(sorted(curves.items())):
        colour = _COLOURS[i % len(_COLOURS)]
        path = " ".join(f"{px(g):.1f},{py(v):.1f}" for g, v, _, _ in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for g, _, lo, hi in pts:
            out.append(
                f'<line x1="{px(g):.1f}" y1="{py(lo):.1f}" x2="{px(g):.1f}" '
                f'y2="{py(hi):.1f}" stroke="{colour}"/>'
            )
        out.append(
            f'<text x="{_W - _PAD - 120}" y="{_PAD + 16 * i}" fill="{colour}">vs {name}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--out", type=Path, help="write the SVG picture here")
    ap.add_argument(
        "--then",
        action="append",
        default=[],
        metavar="RUN_DIR@GAMES",
        help="a run warm-started from the curve's network at GAMES games (repeatable)",
    )
    args = ap.parse_args()
    curves = read_curves(args.run_dir)
    for then in args.then:
        run_dir, _, games = then.rpartition("@")
        if not run_dir or not games.isdigit():
            raise SystemExit(f"--then wants RUN_DIR@GAMES, got {then!r}")
        curves = chain(curves, read_curves(run_dir), int(games))
    for name, pts in sorted(curves.items()):
        print(f"vs {name}")
        for g, v, lo, hi in pts:
            print(f"  {g:>9,} games  {v:+.3f}  [{lo:+.3f}, {hi:+.3f}]")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(".tmp")
        tmp.write_text(svg(curves, f"Learning curve: {Path(args.run_dir).name}"))
        tmp.replace(args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
