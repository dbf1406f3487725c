"""A pipeline generation's duel (`vrhcaby.training.pipeline.play_duel`) resumes from the
chunks of games it finished: cut short after some chunks and run again, it plays only
the chunks it lacks and ends with the figures of a duel played straight through, bit for
bit; a chunk file that cannot be read is played again, the chunks of another duel
(another seed) are not taken for this one's, and the chunks played by worker processes
(`--jobs 2`) are kept as well. A duel killed with SIGKILL in a process of its own resumes
from the chunks on disk.

The chunks a duel plays are seen by wrapping the tournaments' `play_chunk`, which
`run_pair` calls once per chunk in a single process (`--jobs 1`); they are checked
against the chunks of a plain reference: sizes 1, 2, 4, ... up to 64 samples, cut at the
duel's samples."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vrhcaby.play import tournament
from vrhcaby.training.pipeline import DUEL_HEAD, Duel, Resources, play_duel

ROOT = Path(__file__).resolve().parents[1]
CANDIDATE = str(ROOT / "checkpoints" / "td-80.pt")
TEACHER = str(ROOT / "checkpoints" / "td-best.pt")
GAMES = 40  # 20 mirrored samples: chunks of samples [0, 1), [1, 3), [3, 7), [7, 15), [15, 20)


def reference_chunks(samples: int) -> list[range]:
    """The chunks of a pair of `samples` samples, written out plainly."""
    chunks, start, size = [], 0, 1
    while start < samples:
        chunks.append(range(start, min(start + size, samples)))
        start, size = start + size, min(2 * size, tournament.CHUNK)
    return chunks


def watch(monkeypatch: pytest.MonkeyPatch, stop_at: int | None = None) -> list[range]:
    """The chunks played from now on (in order); with `stop_at`, Ctrl-C as the chunk that
    starts at that sample is about to be played."""
    played: list[range] = []
    play_chunk = tournament.play_chunk

    def watched(agents, samples, seed, settings, on_result=None):
        if samples.start == stop_at:
            raise KeyboardInterrupt
        played.append(samples)
        return play_chunk(agents, samples, seed, settings, on_result)

    monkeypatch.setattr(tournament, "play_chunk", watched)
    return played


def duel(folder: Path | str = "", seed: int = 3) -> Duel:
    return Duel(TEACHER, "standard", seed, folder=str(folder))


def test_a_duel_cut_short_resumes_to_the_figures_of_one_played_straight_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = reference_chunks(GAMES // 2)
    assert len(chunks) == 5 and chunks[3] == range(7, 15)
    played = watch(monkeypatch)
    straight = play_duel(CANDIDATE, duel(), GAMES)
    assert played == chunks and straight["games"] == GAMES

    folder = tmp_path / "duel"
    monkeypatch.undo()
    played = watch(monkeypatch, stop_at=chunks[3].start)
    with pytest.raises(KeyboardInterrupt):
        play_duel(CANDIDATE, duel(folder), GAMES)
    assert played == chunks[:3]
    kept = sorted(p.name for p in folder.glob("chunk-*.json"))
    assert kept == [f"chunk-{c.start:08d}.json" for c in chunks[:3]]
    for chunk in chunks[:3]:
        games = json.loads((folder / f"chunk-{chunk.start:08d}.json").read_text())["games"]
        assert sorted((g["sample"], g["copy"]) for g in games) == [
            (s, c) for s in chunk for c in (0, 1)
        ]

    monkeypatch.undo()
    played = watch(monkeypatch)
    resumed = play_duel(CANDIDATE, duel(folder), GAMES)
    assert played == chunks[3:]  # only the chunks the first run lacked
    assert resumed == straight  # ppg, its interval, wins, gammons, backgammons: bit for bit
    assert len(list(folder.glob("chunk-*.json"))) == len(chunks)

    monkeypatch.undo()
    played = watch(monkeypatch)
    assert play_duel(CANDIDATE, duel(folder), GAMES) == straight and played == []


def test_an_unreadable_chunk_is_played_again_and_another_duels_chunks_are_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "duel"
    chunks = reference_chunks(GAMES // 2)
    straight = play_duel(CANDIDATE, duel(folder), GAMES)
    (folder / f"chunk-{chunks[2].start:08d}.json").write_text('{"games": [{"sampl')
    played = watch(monkeypatch)
    assert play_duel(CANDIDATE, duel(folder), GAMES) == straight
    assert played == [chunks[2]]

    head = json.loads((folder / DUEL_HEAD).read_text())
    assert head["seed"] == 3 and head["variant"] == "standard"
    monkeypatch.undo()
    played = watch(monkeypatch)
    other = play_duel(CANDIDATE, duel(folder, seed=4), GAMES)
    assert played == chunks and other != straight  # another seed: every chunk played anew
    assert json.loads((folder / DUEL_HEAD).read_text())["seed"] == 4


def test_a_duel_in_two_processes_keeps_every_chunk_for_a_resumed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunks that worker processes play are kept by the pipeline's process as they
    come back: a run on `--jobs 2` leaves them all, and a run after it plays none."""
    folder = tmp_path / "duel"
    two = play_duel(CANDIDATE, Duel(TEACHER, "standard", 3, Resources(jobs=2), str(folder)), GAMES)
    chunks = reference_chunks(GAMES // 2)
    kept = sorted(p.name for p in folder.glob("chunk-*.json"))
    assert kept == [f"chunk-{c.start:08d}.json" for c in chunks]
    played = watch(monkeypatch)
    assert play_duel(CANDIDATE, duel(folder), GAMES) == two and played == []


@pytest.mark.slow
def test_a_duel_killed_with_sigkill_resumes_from_the_chunks_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A duel of 200 games (chunks of 1, 2, 4, 8, 16, 32 and 37 samples) in a process of
    its own, killed with SIGKILL once four chunks are on disk: run again here, it plays
    exactly the chunks whose files are missing, to the figures of a straight duel."""
    folder, games = tmp_path / "duel", 200
    chunks = reference_chunks(games // 2)
    script = (
        "from vrhcaby.training.pipeline import Duel, play_duel\n"
        f"play_duel({CANDIDATE!r}, Duel({TEACHER!r}, 'standard', 3, folder={str(folder)!r}), "
        f"{games})\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while len(list(folder.glob("chunk-*.json"))) < 4:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        process.kill()
        process.wait()
    on_disk = {p.name for p in folder.glob("chunk-*.json")}
    missing = [c for c in chunks if f"chunk-{c.start:08d}.json" not in on_disk]
    assert missing and chunks[-1] in missing  # killed before its last, longest chunk
    played = watch(monkeypatch)
    resumed = play_duel(CANDIDATE, duel(folder), games)
    assert played == missing
    monkeypatch.undo()
    assert resumed == play_duel(CANDIDATE, duel(), games)
