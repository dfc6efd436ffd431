"""Arrays handed to Publisher.publish, read without copying: where their data is, its dtype, shape
and layout, from `__cuda_array_interface__` (CuPy, PyTorch, Numba, JAX on CUDA), DLPack
(`__dlpack__`: PyTorch, JAX, NumPy >= 1.22, CuPy) or NumPy's `__array_interface__`. Internal.

Which dtypes cuview takes is the C library's table (cuview_dtype, asked by the publisher's
declarations): an array's dtype is named here the way NumPy names it ("float64", "int64") from
its own description, and a name the library does not know is refused by it, naming the ones it does."""
import ctypes

from ._dlpack import KDL_CPU, KDL_CUDA, DLManagedTensor, DLManagedTensorVersioned

# The kinds of value of an array-interface typestr and of a DLPack type code, as NumPy names them.
_TYPESTR_KIND = {"f": "float", "i": "int", "u": "uint", "b": "bool", "c": "complex"}
_DLPACK_KIND = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 5: "complex", 6: "bool"}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Borrowed:
    """One array's data as publish reads it. `strides`: bytes per axis, slowest first, or None when
    the array is C-contiguous (layout() normalises them, so that two arrays of one layout compare
    equal). `keep` holds what keeps the memory alive."""

    __slots__ = ("pointer", "device", "device_id", "dtype", "itemsize", "shape", "strides", "stream", "keep")

    def __init__(self, pointer, device, device_id, dtype, itemsize, shape, strides, stream, keep):
        self.pointer, self.device, self.device_id = pointer, device, device_id
        self.dtype, self.itemsize, self.shape, self.strides = dtype, itemsize, shape, strides
        self.stream, self.keep = stream, keep


def layout(shape, strides, itemsize):
    """`strides` (bytes, slowest axis first; None: C order) as publish compares them: None when
    they are those of a C-ordered array of `shape`, else a tuple in which an axis of one element
    (whose stride means nothing) has the stride a C-ordered array would give it."""
    if strides is None:
        return None
    out, inner = [], itemsize  # `inner`: the stride C order gives the axis, from the axis inside it
    for n, s in zip(reversed(shape), reversed(strides)):
        s = inner if n == 1 else int(s)
        out.append(s)
        inner = s * n
    out.reverse()
    expected, c_order = itemsize, []
    for n in reversed(shape):
        c_order.append(expected)
        expected *= n
    return None if out == c_order[::-1] else tuple(out)


def _typestr_dtype(typestr):
    """NumPy's name of an array-interface typestr ("<f8": "float64"); a big-endian one keeps its
    typestr, which no publisher takes."""
    kind = _TYPESTR_KIND.get(typestr[1:2])
    if kind is None or typestr[0] == ">" or not typestr[2:].isdigit():
        return typestr, max(int(typestr[2:]) if typestr[2:].isdigit() else 1, 1)
    size = int(typestr[2:])
    return f"{kind}{8 * size}", size


def _from_interface(array, a, device):
    dtype, itemsize = _typestr_dtype(a["typestr"])
    shape = tuple(int(n) for n in a["shape"])
    stream = a.get("stream") if device else None
    strides = a.get("strides")
    strides = layout(shape, None if strides is None else tuple(int(s) for s in strides), itemsize)
    return Borrowed(a["data"][0], device, None, dtype, itemsize, shape, strides, stream, array)


def borrow(array, stream=None):
    """What `array` is, without copying it; `stream` (a cudaStream_t as an int, or None) is the one
    the copy will run on, told to a DLPack producer so that its data is ready there."""
    try:
        cai = getattr(array, "__cuda_array_interface__", None)
    except TypeError:  # a dtype the interface cannot name: DLPack below can
        cai = None
    if cai is not None and cai.get("typestr", "")[1:2] == "V" and hasattr(array, "__dlpack__"):
        cai = None  # opaque bytes (PyTorch's bfloat16 is "<V2"): DLPack names the type
    if cai is not None:
        return _from_interface(array, cai, True)
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
            itemsize = max(t.dtype.bits // 8, 1)
            kind = _DLPACK_KIND.get(t.dtype.code, f"code{t.dtype.code}-")
            dtype = f"{kind}{t.dtype.bits}" + (f"x{t.dtype.lanes}" if t.dtype.lanes != 1 else "")
            # DLPack's strides count elements; None means C order.
            strides = None if not t.strides else tuple(t.strides[i] * itemsize for i in range(t.ndim))
            pointer = (t.data or 0) + t.byte_offset
            return Borrowed(pointer, device_type == KDL_CUDA, device_id, dtype, itemsize, shape,
                            layout(shape, strides, itemsize), None, (array, capsule))
    ai = getattr(array, "__array_interface__", None)
    if ai is not None:
        return _from_interface(array, ai, False)
    raise TypeError(f"{type(array).__module__}.{type(array).__name__} is not an array cuview can read without "
                    "copying: pass a NumPy, CuPy, PyTorch or JAX array (one with __cuda_array_interface__, "
                    "__dlpack__ or __array_interface__)")
