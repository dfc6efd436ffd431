"""Arrays handed to Publisher.publish, read without copying: where their data is, its dtype, shape
and layout, from `__cuda_array_interface__` (CuPy, PyTorch, Numba, JAX on CUDA), DLPack
(`__dlpack__`: PyTorch, JAX, NumPy >= 1.22, CuPy) or NumPy's `__array_interface__`. Internal."""
import ctypes

from ._dlpack import KDL_CPU, KDL_CUDA, DLManagedTensor, DLManagedTensorVersioned

# DLPack (code, bits) and array-interface typestrs of the dtypes cuview publishes.
_DLPACK = {(2, 32): "float32", (2, 16): "float16", (0, 32): "int32", (1, 8): "uint8"}
_TYPESTR = {"<f4": "float32", "<f2": "float16", "<i4": "int32", "|u1": "uint8", "<u1": "uint8"}
_SIZE = {"float32": 4, "float16": 2, "int32": 4, "uint8": 1}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Borrowed:
    """One array's data as publish reads it. `keep` holds what keeps the memory alive."""

    __slots__ = ("pointer", "device", "device_id", "dtype", "shape", "contiguous", "stream", "keep")

    def __init__(self, pointer, device, device_id, dtype, shape, contiguous, stream, keep):
        self.pointer, self.device, self.device_id = pointer, device, device_id
        self.dtype, self.shape, self.contiguous, self.stream, self.keep = dtype, shape, contiguous, stream, keep


def _c_contiguous(shape, strides, itemsize):
    """Whether `strides` (bytes; None = C order) are those of a C-ordered array of `shape`."""
    if strides is None:
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n > 1 and s != expected:
            return False
        expected *= n
    return True


def _from_interface(a, device):
    dtype = _TYPESTR.get(a["typestr"])
    shape = tuple(int(n) for n in a["shape"])
    size = _SIZE.get(dtype, 1)
    stream = a.get("stream") if device else None
    return a["data"][0], dtype, shape, _c_contiguous(shape, a.get("strides"), size), stream, a["typestr"]


def borrow(array, stream=None):
    """What `array` is, without copying it; `stream` (a cudaStream_t as an int, or None) is the one
    the copy will run on, told to a DLPack producer so that its data is ready there."""
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is not None:
        pointer, dtype, shape, contiguous, own, typestr = _from_interface(cai, True)
        return Borrowed(pointer, True, None, dtype or typestr, shape, contiguous, own, array)
    if hasattr(array, "__dlpack__") and hasattr(array, "__dlpack_device__"):
        device_type, device_id = array.__dlpack_device__()
        if device_type in (KDL_CPU, KDL_CUDA):
            kwargs = {}
            if device_type == KDL_CUDA:
                # DLPack: 1 is the legacy default stream; the producer orders its data before it.
                kwargs["stream"] = 1 if not stream else stream
            capsule = array.__dlpack__(**kwargs)
            versioned = bool(_is_valid(capsule, b"dltensor_versioned"))
            address = _get_pointer(capsule, b"dltensor_versioned" if versioned else b"dltensor")
            managed = (DLManagedTensorVersioned if versioned else DLManagedTensor).from_address(address)
            t = managed.dl_tensor
            shape = tuple(t.shape[i] for i in range(t.ndim))
            strides = None if not t.strides else tuple(t.strides[i] for i in range(t.ndim))
            dtype = _DLPACK.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
            size = _SIZE.get(dtype, 1)
            contiguous = _c_contiguous(shape, None if strides is None else tuple(s * size for s in strides), size)
            pointer = (t.data or 0) + t.byte_offset
            kind = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}.get(t.dtype.code, "?")
            return Borrowed(pointer, device_type == KDL_CUDA, device_id, dtype or f"{kind}{t.dtype.bits}", shape,
                            contiguous, None, (array, capsule))
    ai = getattr(array, "__array_interface__", None)
    if ai is not None:
        pointer, dtype, shape, contiguous, _, typestr = _from_interface(ai, False)
        return Borrowed(pointer, False, None, dtype or typestr, shape, contiguous, None, array)
    raise TypeError(f"{type(array).__module__}.{type(array).__name__} is not an array cuview can read without "
                    "copying: pass a NumPy, CuPy, PyTorch or JAX array (one with __cuda_array_interface__, "
                    "__dlpack__ or __array_interface__)")
