"""torch.cuda.graph_annotations over cudakit: user metadata on the kernels of a captured graph.

Capture with ``cudakit.graph(g, enable_annotations=True)``, wrap regions of the captured work in
``with mark_kernels(...)``, profile a replay with ``cudakit.profiler.profile()``, export the
Chrome trace, and merge ``get_kernel_annotations()`` into it by each event's ``"graph node id"``:

    annotations = get_kernel_annotations()
    for event in trace["traceEvents"]:
        node_id = event.get("args", {}).get("graph node id")
        for ann in annotations.get(node_id, []):
            event["args"].update(ann)

Unlike torch's, this needs neither cuda-bindings nor a CUDA 13.1 driver: on drivers without
cudaGraphNodeGetToolsId (CUDA 13.0) the node ids come from CUPTI (See Note [Kernel annotations]
in src/graphs/annotations.cpp). ``is_available()`` says whether either mechanism works here;
where neither does, regions record nothing, silently, as torch's do.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Union

from . import _cudakit

__all__ = [
    "clear_kernel_annotations",
    "get_kernel_annotations",
    "is_available",
    "mark_kernels",
]

AnnotationValue = Union[str, int, float]
Annotation = Dict[str, AnnotationValue]


# ``with mark_kernels(...):`` (a C++ type: a region costs two bound calls and no Python frame).
mark_kernels = _cudakit.mark_kernels


def _decorate(region, fn):
    """mark_kernels(...) as a decorator: each call of ``fn`` runs inside a region of the same
    annotation."""
    import functools

    annotation = region.annotation

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with mark_kernels(annotation):
            return fn(*args, **kwargs)

    return wrapper


def get_kernel_annotations() -> Dict[int, List[Annotation]]:
    """Every annotation recorded so far: ``{graph node id: [annotation, ...]}``.

    The keys are the ``"graph node id"`` of the profiler's kernel, memcpy and memset events of
    replays; one entry per node of every instantiation of an annotated capture. The result is a
    fresh plain dict (so ``pickle.dumps(dict(get_kernel_annotations()))`` works, and changing it
    changes nothing recorded).
    """
    return _cudakit._get_kernel_annotations()


def clear_kernel_annotations() -> None:
    """Forgets every recorded annotation (graphs already captured keep running unannotated)."""
    _cudakit._clear_kernel_annotations()


def is_available() -> bool:
    """Whether captures with ``enable_annotations=True`` record anything here: a driver with
    cudaGraphNodeGetToolsId, or CUPTI (any CUDA 13 driver)."""
    return _cudakit._annotations_available()


def annotation_mechanism() -> str:
    """How node ids are found now: ``"tools_id"`` (cudaGraphNodeGetToolsId, CUDA >= 13.1),
    ``"cupti"`` (CUPTI's node ids, CUDA 13.0 included) or ``"none"``. cudakit's own."""
    return _cudakit._annotation_mechanism()


def set_annotation_mechanism(mechanism: Optional[str]) -> None:
    """Forces ``"tools_id"``, ``"cupti"`` or ``"none"`` (None or ``"auto"``: the best available,
    or CUDAKIT_ANNOTATIONS_MECHANISM). Raises cudakit.StateError where it cannot work."""
    _cudakit._set_annotation_mechanism(mechanism)


def save_kernel_annotations(path: str) -> None:
    """Writes the registry as the JSON form ``cudakit trace merge`` reads:
    ``{"17": [{"name": "attention"}], ...}``. cudakit's own."""
    _cudakit._save_kernel_annotations(path)
