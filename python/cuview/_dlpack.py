"""DLPack capsules (https://dmlc.github.io/dlpack/latest/) made with ctypes, no compiled code.

A capsule's tensor keeps its owner (a field view, hence its frame) alive until the consumer calls
the deleter, or until the capsule is destroyed unconsumed."""
import ctypes

from ._errors import _dtype

KDL_CPU, KDL_CUDA = 1, 2
FLAG_READ_ONLY = 1 << 0


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _Deleter),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

_live = {}  # address of a managed tensor -> what it keeps alive


def _delete(address):
    _live.pop(address, None)


_deleter = _Deleter(_delete)

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# The destructor runs while the capsule is being freed (reference count 0): it must see it as a raw
# pointer, never as a Python object (that would take and drop a reference and free it again).
_api = ctypes.PyDLL(None)
_capsule_is_valid = _api.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_get = _api.PyCapsule_GetPointer
_capsule_get.restype = ctypes.c_void_p
_capsule_get.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


def _make_destructor(name):
    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def destructor(capsule):
        # Never consumed (a consumer renames the capsule to "used_..."): free it here.
        if _capsule_is_valid(capsule, name):
            _delete(_capsule_get(capsule, name))

    return destructor


_NAME_V, _NAME = b"dltensor_versioned", b"dltensor"
_destructor_v, _destructor = _make_destructor(_NAME_V), _make_destructor(_NAME)


def capsule(owner, data, device, dtype, shape, strides_bytes, versioned):
    """A capsule viewing `data` (read-only) with `shape` and byte strides; keeps `owner` alive."""
    _, _, code, bits = _dtype(dtype)
    itemsize = bits // 8
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * ndim)(*shape)
    strides_arr = (ctypes.c_int64 * ndim)(*[s // itemsize for s in strides_bytes])
    managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    t = managed.dl_tensor
    t.data = data
    t.device = DLDevice(*device)
    t.ndim = ndim
    t.dtype = DLDataType(code, bits, 1)
    t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    if versioned:
        managed.version = DLPackVersion(1, 0)
        managed.flags = FLAG_READ_ONLY
    address = ctypes.addressof(managed)
    managed.manager_ctx = address
    managed.deleter = _deleter
    _live[address] = (managed, shape_arr, strides_arr, owner)
    if versioned:
        return _capsule_new(address, _NAME_V, ctypes.cast(_destructor_v, ctypes.c_void_p))
    return _capsule_new(address, _NAME, ctypes.cast(_destructor, ctypes.c_void_p))
