"""torch.cuda.streams: Stream, ExternalStream and Event (also at cudakit's top level)."""

from __future__ import annotations

from ._cudakit import Event, Stream
from ._streams import ExternalStream

__all__ = ["Event", "ExternalStream", "Stream"]
