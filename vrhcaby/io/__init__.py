"""Files and wires: `matchfile` (saved games and .mat files), `external` (gnubg's
external-player protocol), `board_text` (the text board), `plot` (pictures), and
`answers` and `board_json` (what the analysis verbs compute and their JSON documents)."""
