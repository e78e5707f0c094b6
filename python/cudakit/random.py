"""torch.cuda.random: seeding and the state of each device's default generator (also at
cudakit's top level)."""

from __future__ import annotations

from ._cudakit import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)

__all__ = [
    "get_rng_state", "get_rng_state_all", "initial_seed", "manual_seed", "manual_seed_all", "seed", "seed_all",
    "set_rng_state", "set_rng_state_all",
]
