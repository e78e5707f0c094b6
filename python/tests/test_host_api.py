"""The module's pure parts that need no GPU: device arguments, generators, option parsing, the
torch allocator's entry points, NVTX, TunableOp's switches and the stubs."""

import ast
import ctypes
import os
import pathlib

import pytest

import cudakit
import cudakit.torch
from cudakit import _cudakit


def test_is_available_agrees_with_device_count():
    assert cudakit.is_available() == (cudakit.device_count() > 0)


def test_device_arguments_are_checked_before_any_cuda_call():
    with pytest.raises(TypeError):
        cudakit.memory_allocated("cpu")
    with pytest.raises(TypeError):
        cudakit.memory_allocated("cuda:x")
    with pytest.raises(TypeError):
        cudakit.memory_allocated(True)


def test_device_index_parsing():
    from cudakit._device import _index

    assert _index(3) == 3
    assert _index("cuda:2") == 2
    with pytest.raises(ValueError, match="got 'cpu'"):
        _index("cpu")


def test_cpu_generators_are_reproducible_and_restorable():
    g = cudakit.Generator("cpu", seed=1234)
    first = cudakit.rand([8], device="cpu", generator=g).tolist()
    assert cudakit.Generator("cpu").manual_seed(1234) is not None
    same = cudakit.rand([8], device="cpu", generator=cudakit.Generator("cpu", seed=1234)).tolist()
    assert first == same
    state = g.get_state()
    offset = g.get_offset()
    after = cudakit.rand([8], device="cpu", generator=g).tolist()
    assert after != first
    g.set_state(state)
    assert g.get_offset() == offset
    assert cudakit.rand([8], device="cpu", generator=g).tolist() == after
    assert g.initial_seed() == 1234 and g.device == "cpu"


def test_cpu_distributions_keep_their_ranges():
    g = cudakit.Generator("cpu", seed=7)
    perm = cudakit.randperm(50, device="cpu", generator=g).tolist()
    assert sorted(perm) == list(range(50))
    ints = cudakit.randint(3, 9, [1000], device="cpu", generator=g).tolist()
    assert min(ints) >= 3 and max(ints) < 9 and len(set(ints)) == 6
    u = cudakit.empty([1000], device="cpu").uniform_(2.0, 3.0, generator=g).tolist()
    assert 2.0 <= min(u) and max(u) < 3.0


def test_generator_refuses_a_foreign_state():
    with pytest.raises(ValueError):
        cudakit.Generator("cpu").set_state(b"\x00\x01")


def test_memory_history_options_are_checked_first():
    with pytest.raises(ValueError, match="enabled"):
        cudakit.memory._record_memory_history(enabled="sometimes")
    with pytest.raises(ValueError, match="stacks"):
        cudakit.memory._record_memory_history(stacks="fortran")


def test_mem_pool_takes_only_a_pluggable_allocator():
    with pytest.raises(TypeError, match="expected a CUDAPluggableAllocator, got object"):
        cudakit.MemPool(allocator=object())


def test_a_pluggable_allocator_names_what_it_cannot_load():
    with pytest.raises(ValueError, match="/no/such/library.so"):
        cudakit.CUDAPluggableAllocator("/no/such/library.so", "alloc", "free")
    with pytest.raises(ValueError, match="no_such_function"):
        cudakit.CUDAPluggableAllocator(cudakit.torch.allocator_library(), "no_such_function", cudakit.torch.FREE_SYMBOL)
    allocator = cudakit.CUDAPluggableAllocator(cudakit.torch.allocator_library(), cudakit.torch.MALLOC_SYMBOL,
                                               cudakit.torch.FREE_SYMBOL)
    assert allocator.allocator() is allocator


def test_runtime_names_answer_without_a_device():
    assert cudakit.get_sync_debug_mode() == 0
    for mode, value in (("warn", 1), (2, 2), ("default", 0)):
        cudakit.set_sync_debug_mode(mode)
        assert cudakit.get_sync_debug_mode() == value
    with pytest.raises(ValueError, match="got 7"):
        cudakit.set_sync_debug_mode(7)
    assert cudakit.get_sync_debug_mode() == 0
    arch = cudakit.get_arch_list()
    assert arch and all(a.startswith(("sm_", "compute_")) for a in arch)
    assert all(f"code={a}" in cudakit.get_gencode_flags() for a in arch if a.startswith("sm_"))
    assert cudakit.has_half is True and cudakit.has_magma is False
    with pytest.raises(cudakit.CudaError, match="CUDA error 34"):
        cudakit.check_error(cudakit.cudaStatus.ERROR_NOT_READY)
    cudakit.check_error(0)


def test_host_memory_stats_count_pinned_allocations_in_torchs_keys():
    stats = cudakit.host_memory_stats()
    for key in ("allocated_bytes.current", "allocated_bytes.peak", "num_host_alloc", "num_host_free",
                "host_alloc_time.count", "host_free_time.avg"):
        assert key in stats, key
    assert list(stats) == sorted(stats)
    nested = cudakit.host_memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["current"] == stats["allocated_bytes.current"]
    cudakit.reset_peak_host_memory_stats()
    cudakit.reset_accumulated_host_memory_stats()
    assert cudakit.host_memory_stats()["num_host_alloc"] == 0


def test_deprecated_memory_aliases_warn_and_forward():
    with pytest.warns(FutureWarning, match="memory_reserved"):
        try:
            cudakit.memory_cached()
        except RuntimeError:  # no device here: the warning came first
            pass
    assert cudakit.memory_cached.__name__ == "memory_cached"
    assert "memory_reserved" in cudakit.memory_cached.__doc__


def test_graph_capture_error_mode_is_checked():
    g = cudakit.CUDAGraph()
    with pytest.raises(ValueError, match="capture_error_mode: expected 'global', 'thread_local' or 'relaxed', got 'loose'"):
        g.capture_begin(capture_error_mode="loose")
    assert not g.is_capturing()


def test_the_extension_exports_torchs_pluggable_allocator_functions():
    library = ctypes.CDLL(cudakit.torch.allocator_library())

    def address(name):
        return ctypes.cast(getattr(library, name), ctypes.c_void_p).value

    assert address(cudakit.torch.MALLOC_SYMBOL) and address(cudakit.torch.FREE_SYMBOL)
    # The hooks use_cudakit_allocator() hands torch are the exported functions themselves. (The
    # allocation function is not called here: it throws on failure, which only C++ callers such
    # as torch may catch; See Note [Failed allocations throw into torch].)
    hooks = cudakit._cudakit._torch_allocator_hooks()
    exported = {
        "set_reset_fn": address("cudakit_torch_empty_cache"),
        "set_memory_fraction_fn": address("cudakit_torch_set_memory_fraction"),
        "set_record_stream_fn": address("cudakit_torch_record_stream"),
    }
    assert {name: hooks[name] for name in exported} == exported
    # The graph pools' hooks take C++ arguments (std::function), so they are not exported: their
    # addresses are distinct functions of the extension's.
    graph_hooks = [hooks.pop(name) for name in ("set_begin_allocate_to_pool", "set_end_allocate_to_pool_fn",
                                                "set_release_pool")]
    assert len(set(graph_hooks) | set(exported.values())) == 6 and all(graph_hooks)
    assert set(hooks) == set(exported)


def test_startup_recipe_folder_holds_sitecustomize():
    folder = pathlib.Path(cudakit.torch.startup_dir())
    text = (folder / "sitecustomize.py").read_text()
    assert "CUDAKIT_TORCH_ALLOCATOR" in text and "use_cudakit_allocator" in text


def test_tunable_switches_round_trip():
    before = cudakit.tunable.get_max_tuning_iterations()
    try:
        cudakit.tunable.set_max_tuning_iterations(17)
        assert cudakit.tunable.get_max_tuning_iterations() == 17
    finally:
        cudakit.tunable.set_max_tuning_iterations(before)
    name = cudakit.tunable.get_filename()
    try:
        cudakit.tunable.set_filename("results_%d.csv")
        assert cudakit.tunable.get_filename() == "results_%d.csv"
    finally:
        cudakit.tunable.set_filename(name)


def test_jiterator_reads_the_entry_function_without_a_gpu():
    fn = cudakit.jiterator.create_jit_fn(
        "template <typename T> T axpy(T x, T y, T alpha) { return alpha * x + y; }", alpha=1.0)
    assert fn.name == "axpy"
    assert fn.num_inputs == 2 and fn.num_outputs == 1
    assert fn.scalar_names() == ["alpha"]
    with pytest.raises(ValueError):
        cudakit.jiterator.create_jit_fn("not a function")


def test_nvtx_ranges_nest_and_format(monkeypatch):
    pushed = []
    monkeypatch.setattr(_cudakit, "_nvtx_range_push", lambda msg: pushed.append(msg))
    monkeypatch.setattr(_cudakit, "_nvtx_range_pop", lambda: pushed.append(None))
    with cudakit.nvtx.range("step {}", 3):
        pass
    assert pushed == ["step 3", None]


def test_stubs_ship_beside_the_extension_and_name_its_api():
    folder = pathlib.Path(_cudakit.__file__).parent
    assert (folder / "py.typed").exists()
    stub = ast.parse((folder / "_cudakit.pyi").read_text())
    named = {node.name for node in stub.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    public = {name for name in dir(_cudakit) if not name.startswith("_")}
    assert len(public) > 40
    assert public - named == set()


def test_the_package_offers_torch_cuda_names():
    for name in ("Stream", "Event", "stream", "current_stream", "default_stream", "synchronize",
                 "memory_stats", "memory_summary", "MemPool", "use_mem_pool", "CUDAGraph", "graph",
                 "manual_seed", "get_rng_state", "from_dlpack", "get_device_properties", "device",
                 "ExternalStream", "empty_cache", "reset_peak_memory_stats"):
        assert hasattr(cudakit, name), name


def test_a_jit_reduction_checks_its_functions_when_made():
    with pytest.raises(ValueError, match="two"):
        cudakit.jiterator.create_jit_reduction("template <typename T> T square(T x) { return x * x; }",
                                               "template <typename T> T one(T a) { return a; }", "0")
    reduction = cudakit.jiterator.create_jit_reduction(
        "template <typename T> T scaled(T x, T k) { return k * x; }",
        "template <typename T> T add(T a, T b) { return a + b; }", "0", k=2.0)
    assert reduction.num_inputs == 1
