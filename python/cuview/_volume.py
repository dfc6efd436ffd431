"""A picture of a volume field, as the viewer's volume view draws it (cuview_render_volume: ray
casting on the CPU): Frame.view(field, mode=..., camera=...). NumPy is imported when a picture is
made. Internal: use the `cuview` package."""
import ctypes

from ._capi import lib
from ._errors import CuviewError, _check

lib.cuview_render_volume.restype = ctypes.c_int
lib.cuview_render_volume.argtypes = [
    ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_double,
    ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_char_p, ctypes.c_float,
    ctypes.c_float, ctypes.c_char_p, ctypes.c_float, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p,
    ctypes.c_void_p]
lib.cuview_frame_brick.restype = ctypes.c_int
lib.cuview_frame_brick.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint32,
                                   ctypes.POINTER(ctypes.c_uint32), ctypes.c_void_p]


class VolumeView:
    """A rendered picture of a volume: `image` (height, width, 3) uint8 RGB; `values` (height,
    width) float32, what each pixel shows (the largest value, the opacity reached, or the surface's
    distance; NaN: nothing); `brick`, the (depth, height, width) rendered (every `stride`-th cell);
    `mode`, `camera`, `range`, `level`."""

    def __init__(self, image, values, brick, stride, mode, camera, value_range, level):
        self.image, self.values, self.brick, self.stride = image, values, brick, stride
        self.mode, self.camera, self.range, self.level = mode, camera, value_range, level

    def __repr__(self):
        return (f"VolumeView({self.mode}, {self.image.shape[1]}x{self.image.shape[0]}, brick "
                f"{'x'.join(map(str, reversed(self.brick)))} (stride {self.stride}), camera {self.camera})")


def _host_volume(view, max_brick):
    """The field as a float32 (d, h, w) host array, every k-th cell so that no axis exceeds
    max_brick (a CUDA frame's by the copy engine, cuview_frame_brick); a vector's magnitude."""
    import numpy as np  # here, not at import: the package imports without NumPy (a control-only client)
    shape = view.shape
    grid = shape[:3] if len(shape) >= 3 else None
    if grid is None or len(shape) < 3:
        raise CuviewError("bad_value", f"'{view.name}' is not a volume (its shape is {tuple(shape)}); view a "
                                       "field of 3 axes, or a plane of it with next_frame()")
    frame = view.frame
    client = frame._client
    if not client.remote:
        # As cuview-gui takes it: a host wait and the copy engine, no kernel in this process's context.
        index = [key for key, *_ in client._blocks].index(view.name)
        dims = (ctypes.c_uint32 * 4)()
        _check(lib.cuview_frame_brick(client._handle(), frame._alive(), index, int(max_brick), dims, None))
        a = np.empty((dims[0], dims[1], dims[2]), np.float32)
        _check(lib.cuview_frame_brick(client._handle(), frame._alive(), index, int(max_brick), dims, a.ctypes.data))
        return a, int(dims[3])
    k = max(1, -(-max(grid) // max(int(max_brick), 1)))
    a = np.asarray(view)[::k, ::k, ::k]  # a remote frame's fields are on the host
    if a.ndim == 4:
        a = np.sqrt((a.astype(np.float32) ** 2).sum(axis=3))
    a = np.ascontiguousarray(a, dtype=np.float32)
    return a, k


def _camera(camera):
    """`camera` with the defaults filled in; CuviewError("bad_value") naming keys it does not know."""
    camera = {"azimuth": 0.0, "elevation": 0.0, "zoom": 1.0, "pan": (0.0, 0.0), **(camera or {})}
    unknown = set(camera) - {"azimuth", "elevation", "zoom", "pan"}
    if unknown:
        raise CuviewError("bad_value", f"camera keys {', '.join(sorted(unknown))} are not azimuth, elevation, "
                                       "zoom or pan")
    return camera


def _rgb(argb):
    """(height, width, 3) uint8 RGB of (height, width) 0xAARRGGBB pixels."""
    import numpy as np
    return np.stack([(argb >> 16) & 0xFF, (argb >> 8) & 0xFF, argb & 0xFF], axis=-1).astype(np.uint8)


def render(view, mode="mip", camera=None, size=(640, 360), colormap="viridis", range=None, opacity="ramp",
           level=None, max_brick=128):
    import numpy as np
    camera = _camera(camera)
    brick, k = _host_volume(view, max_brick)
    finite = brick[np.isfinite(brick)]
    lo, hi = range if range is not None else ((float(finite.min()), float(finite.max())) if finite.size else (0, 1))
    if hi <= lo:
        hi = lo + 1
    level = (lo + hi) / 2 if level is None else float(level)
    w, h = int(size[0]), int(size[1])
    argb = np.empty((h, w), np.uint32)
    values = np.empty((h, w), np.float32)
    d_, h_, w_ = brick.shape
    pan = camera["pan"]
    _check(lib.cuview_render_volume(brick.ctypes.data, w_, h_, d_, mode.encode(), camera["azimuth"],
                                    camera["elevation"], camera["zoom"], pan[0] / k, pan[1] / k,
                                    colormap.encode(), lo, hi, opacity.encode(), level, w, h, argb.ctypes.data,
                                    values.ctypes.data))
    return VolumeView(_rgb(argb), values, brick.shape, k, mode, camera, (lo, hi), level)
