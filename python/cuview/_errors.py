"""The failures of the C API: CuviewError and the status checks. Internal: use the `cuview` package."""
from . import _capi
from ._capi import lib

# The statuses' names, as the C library gives them (cuview_status_name): none restated here.
_UNSUPPORTED, _BAD_VALUE = "unsupported", "bad_value"


class CuviewError(Exception):
    """A cuview failure: `code` is the wire name ("no_daemon", "out_of_range", ...)."""

    def __init__(self, status, message):
        # A status from the C library, or the name of one for a failure this package finds itself.
        self.code = status if isinstance(status, str) else lib.cuview_status_name(status).decode()
        super().__init__(message)


def _check(status):
    if status != _capi.OK:
        raise CuviewError(status, lib.cuview_last_error().decode())


_dtypes = {}


def _dtype(name):
    """What the C library says a dtype is (cuview_dtype): bytes, typestr ("<f4"), DLPack code, bits."""
    if name not in _dtypes:
        info = _capi.DtypeInfo()
        _check(lib.cuview_dtype(name.encode(), info))
        _dtypes[name] = (info.bytes, info.typestr.decode(), info.dlpack_code, info.dlpack_bits)
    return _dtypes[name]
