"""Files and wires: saved games and .mat files, gnubg's external-player protocol, the
text board, pictures."""
