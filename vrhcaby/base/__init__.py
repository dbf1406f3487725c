"""Infrastructure every floor may use: numba switches, atomic files and the cache folder,
TOML configs."""
