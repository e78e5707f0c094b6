"""DLPack on host memory, with NumPy as the other side: capsule kinds and names, the read-only
flag, copies, deleters, refusals (no GPU needed)."""

import ctypes
import gc
import weakref

import pytest

import cudakit

np = pytest.importorskip("numpy")

_name = ctypes.pythonapi.PyCapsule_GetName
_name.restype = ctypes.c_char_p
_name.argtypes = [ctypes.py_object]


def capsule_name(capsule):
    return _name(capsule).decode()


def versioned_flags(capsule):
    """DLManagedTensorVersioned::flags: after version (8 bytes), manager_ctx and deleter."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get(capsule, b"dltensor_versioned")
    major, minor = (ctypes.c_uint32 * 2).from_address(address)
    flags = ctypes.c_uint64.from_address(address + 24).value
    return (major, minor), flags


def test_numpy_reads_a_cudakit_array_without_a_copy():
    a = cudakit.arange(6, dtype="float64", device="cpu").reshape([2, 3])
    n = np.from_dlpack(a)
    assert n.shape == (2, 3) and n.dtype == np.float64
    assert n.ctypes.data == a.data_ptr()
    n[1, 2] = 42.0
    assert a.tolist()[1][2] == 42.0


def test_cudakit_reads_a_numpy_array_without_a_copy():
    n = np.arange(12, dtype=np.int64).reshape(3, 4)
    a = cudakit.from_dlpack(n)
    assert a.shape == (3, 4) and a.dtype == "int64" and a.data_ptr() == n.ctypes.data
    n[0, 0] = -5
    assert a.tolist()[0][0] == -5


def test_negative_and_non_contiguous_strides_survive_the_exchange():
    n = np.arange(12, dtype=np.int32).reshape(3, 4)[::2, ::-1]
    a = cudakit.from_dlpack(n)
    assert a.stride() == (8, -1)
    assert a.tolist() == n.tolist()
    back = np.from_dlpack(a)
    assert back.tolist() == n.tolist()
    assert back.ctypes.data == n.ctypes.data


def test_dtypes_round_trip():
    for dtype in (np.float32, np.float16, np.float64, np.int32, np.int64, np.uint8, np.bool_):
        n = np.array([1, 0, 1], dtype=dtype)
        a = cudakit.from_dlpack(n)
        assert np.from_dlpack(a).dtype == dtype
        assert np.array_equal(np.from_dlpack(a), n)


def test_legacy_capsule_without_max_version_and_versioned_with_it():
    a = cudakit.arange(3, device="cpu")
    assert capsule_name(a.__dlpack__()) == "dltensor"
    assert capsule_name(a.__dlpack__(max_version=(0, 8))) == "dltensor"
    versioned = a.__dlpack__(max_version=(1, 0))
    assert capsule_name(versioned) == "dltensor_versioned"
    version, flags = versioned_flags(versioned)
    assert version == (1, 0)  # no newer minor than the consumer asked for
    assert flags == 0
    assert versioned_flags(a.__dlpack__(max_version=(1, 5)))[0] == (1, 1)


def test_consuming_renames_the_capsule_and_a_capsule_is_taken_once():
    capsule = cudakit.arange(3, device="cpu").__dlpack__(max_version=(1, 0))
    a = cudakit.from_dlpack(capsule)
    assert capsule_name(capsule) == "used_dltensor_versioned"
    assert a.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="named 'used_dltensor_versioned'"):
        cudakit.from_dlpack(capsule)
    legacy = cudakit.arange(2, device="cpu").__dlpack__()
    cudakit.from_dlpack(legacy)
    assert capsule_name(legacy) == "used_dltensor"


def test_the_producers_deleter_runs_when_the_last_cudakit_reference_goes():
    n = np.arange(5.0)
    alive = weakref.ref(n)
    a = cudakit.from_dlpack(n)
    view = a.reshape([5])  # shares the storage
    del n
    gc.collect()
    assert alive() is not None  # the capsule's manager keeps the array
    del a
    gc.collect()
    assert alive() is not None
    assert view.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    del view
    gc.collect()
    assert alive() is None


class _RetypedProducer:
    """A NumPy array whose DLPack capsule claims another dtype (code, bits): NumPy exports only
    dtypes cudakit has, so a refused dtype is written into its capsule with ctypes."""

    def __init__(self, array, code, bits):
        self.array, self.code, self.bits = array, code, bits

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        capsule = self.array.__dlpack__(**kwargs)
        name = capsule_name(capsule)
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]
        # DLTensor::dtype sits 20 bytes in; the versioned tensor starts after 32 bytes of header.
        dtype = get(capsule, name.encode()) + (32 if name == "dltensor_versioned" else 0) + 20
        ctypes.c_uint8.from_address(dtype).value = self.code
        ctypes.c_uint8.from_address(dtype + 1).value = self.bits
        return capsule


def test_a_refused_tensor_goes_back_to_its_producer():
    n = np.zeros(3, dtype=np.uint8)
    alive = weakref.ref(n)
    with pytest.raises(BufferError, match="dtype code 9 with 8 bits and 1 lanes has no cudakit dtype"):
        cudakit.from_dlpack(_RetypedProducer(n, 9, 8))  # kDLFloat8_e4m3b11fnuz
    del n
    gc.collect()
    assert alive() is None
    with pytest.raises(BufferError, match="dtype code 2 with 128 bits"):
        cudakit.from_dlpack(_RetypedProducer(np.zeros(2, dtype=np.uint8), 2, 128))


def test_read_only_flag_travels_both_ways():
    n = np.arange(4.0)
    n.flags.writeable = False
    a = cudakit.from_dlpack(n)
    assert a.readonly
    with pytest.raises(ValueError, match="fill_: the array is read-only"):
        a.fill_(1.0)
    _, flags = versioned_flags(a.__dlpack__(max_version=(1, 0)))
    assert flags & 1  # DLPACK_FLAG_BITMASK_READ_ONLY
    assert not np.from_dlpack(a).flags.writeable
    with pytest.raises(BufferError, match="read-only array cannot be exported as a legacy"):
        a.__dlpack__()


def test_copy_true_copies_and_says_so():
    a = cudakit.arange(3, device="cpu")
    capsule = a.__dlpack__(max_version=(1, 0), copy=True)
    _, flags = versioned_flags(capsule)
    assert flags & 2  # DLPACK_FLAG_BITMASK_IS_COPIED
    b = cudakit.from_dlpack(capsule)
    assert b.data_ptr() != a.data_ptr() and b.tolist() == a.tolist()
    n = np.from_dlpack(a, copy=True)
    n[0] = 5
    assert a.tolist()[0] == 0.0


def test_dl_device_of_the_array_itself_needs_no_copy():
    a = cudakit.arange(3, device="cpu")
    b = cudakit.from_dlpack(a.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False))
    assert b.data_ptr() == a.data_ptr()
    assert a.__dlpack_device__() == (1, 0)


def test_refusals_name_the_reason():
    a = cudakit.arange(3, device="cpu")
    with pytest.raises(BufferError, match="device type 7"):
        a.__dlpack__(max_version=(1, 0), dl_device=(7, 0))
    with pytest.raises(ValueError, match="a host array takes stream=None"):
        a.__dlpack__(stream=5)
    with pytest.raises(TypeError, match="has no __dlpack__"):
        cudakit.from_dlpack([1, 2, 3])


def test_unconsumed_capsules_release_their_tensor():
    # The capsule's destructor calls the deleter: the NumPy array behind a cudakit array that was
    # exported but never consumed is released with it.
    n = np.arange(3.0)
    alive = weakref.ref(n)
    a = cudakit.from_dlpack(n)
    del n
    capsule = a.__dlpack__(max_version=(1, 0))
    del a
    gc.collect()
    assert alive() is not None
    del capsule
    gc.collect()
    assert alive() is None


def test_legacy_producers_are_asked_again_without_max_version():
    class Legacy:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, stream=None):
            return self.array.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    n = np.arange(4, dtype=np.int32)
    a = cudakit.from_dlpack(Legacy(n))
    assert a.tolist() == [0, 1, 2, 3] and not a.readonly


def test_the_producers_deleter_runs_on_whichever_thread_lets_go():
    import threading

    n = np.arange(3.0)
    alive = weakref.ref(n)
    holder = [cudakit.from_dlpack(n)]
    del n
    thread = threading.Thread(target=holder.clear)
    thread.start()
    thread.join()
    gc.collect()
    assert alive() is None


def test_the_torch_exchange_helpers_on_host_memory_ask_for_no_stream():
    # cudakit.torch's fast paths (Note [Exchange with torch in a microsecond]) without torch:
    # host memory needs no stream, so torch's stream function is never called.
    def no_stream(device):
        raise AssertionError(f"asked for the stream of device {device}")

    a = cudakit.arange(4, dtype="float32", device="cpu")
    capsule = cudakit._cudakit._capsule_for_torch(a, no_stream)
    assert capsule_name(capsule) == "dltensor"
    n = np.from_dlpack(_Capsule(capsule))
    assert n.ctypes.data == a.data_ptr() and n.tolist() == [0.0, 1.0, 2.0, 3.0]
    back = cudakit._cudakit._array_from_torch_capsule(np.arange(3.0).__dlpack__(), no_stream)
    assert back.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="expected a DLPack capsule"):
        cudakit._cudakit._array_from_torch_capsule(object(), no_stream)


class _Capsule:
    """A capsule with the protocol's methods, for NumPy's from_dlpack."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)
