"""Infrastructure every floor may use: `jit` (numba switches), `files` (atomic files, the
cache folder, files of arrays read with their headers checked, output paths checked) and
`config` (TOML to dataclass)."""
