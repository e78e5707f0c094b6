"""torch.cuda.random: seeding and the state of each device's default generator (also at
cudakit's top level)."""

from __future__ import annotations

# current_device, device_count and is_initialized: torch.cuda.random has them in its namespace too.
from ._cudakit import (  # noqa: F401
    current_device,
    device_count,
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    is_initialized,
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
