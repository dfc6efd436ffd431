"""What a remote client gets besides frames: views (View, fitted to the link) and exact regions
(Client.fetch), and the watch that feeds views. Internal: use the `cuview` package."""
import ctypes

from . import _capi
from ._capi import lib
from ._errors import _check


def _rewatch(owner, watch_call, watch, key=None):
    """Starts a watch (watch_call: cuview_watch or cuview_group_watch) of `watch` = (field, width,
    height, zoom, center or None, encoding) unless `owner` watches just that already (`key`: what
    else tells watches apart, a volume's plane)."""
    field, width, height, zoom, center, encoding = watch
    if (watch, key) == owner._watching:
        return
    owner._watching = None
    cx, cy = (float("nan"), float("nan")) if center is None else (float(center[0]), float(center[1]))
    _check(watch_call(owner._handle(), field.encode(), width, height, zoom, cx, cy, encoding.encode()))
    owner._watching = (watch, key)


def _picture(dims, axis, index):
    """What a view of a grid of `dims` (slowest first) shows: (rows, cols, plane), plane being
    (axis, index) of a volume's plane (axis None: "z"; index None: the middle) or None for a 2-D
    grid viewed whole. An axis or index given for a 2-D grid is kept, for the C API to refuse."""
    rows = dims[-2] if len(dims) >= 2 else 1  # a line's picture is one row
    if len(dims) != 3 and axis is None and index is None:
        return rows, dims[-1], None
    axis = axis or "z"
    across = {"z": 0, "y": 1, "x": 2}.get(axis)
    if across is None or len(dims) != 3:
        return rows, dims[-1], (axis, 0 if index is None else int(index))
    index = dims[across] // 2 if index is None else int(index)
    rows, cols = [n for k, n in enumerate(dims) if k != across]
    return rows, cols, (axis, index)


def _watch_plane(watch_plane_call, plane):
    """A watch call (as _rewatch takes) of `plane` through cuview_watch_plane or
    cuview_group_watch_plane."""
    axis, index = plane
    return lambda h, f, w_, h_, z_, cx, cy, e: watch_plane_call(h, f, axis.encode(), index, w_, h_, z_, cx, cy, e)


def _copied(pointer, count):
    """A NumPy copy of `count` float32 values the C API lends until its next call."""
    import numpy as np
    if count == 0:
        return np.empty(0, dtype=np.float32)
    return np.ctypeslib.as_array(pointer, shape=(count,)).copy()


class View:
    """A view of a remote frame (Client.view). `values`: (height, width) float32 NumPy array, one
    sample per output pixel: the value of the cell under it (a vector field's magnitude), NaN
    outside the grid, each within `error_bound` of the true value (0 for "f32"); `cell_of` names
    the cell. Also an array itself: numpy.asarray(view) is `values`."""

    def __init__(self, v, grid):
        self.seq, self.step, self.time = v.seq, v.step, v.sim_time
        self._grid = grid
        self._geometry = _capi.View.from_buffer_copy(v)  # for cell_of: its size, centre and scale
        self.field = v.field.decode()
        #: "u8", "u16" or "f32": how the gateway encoded it
        self.encoding = v.encoding.decode()
        self.error_bound = v.error_bound
        self.lo, self.hi = v.lo, v.hi
        self.center = (v.center_x, v.center_y)
        self.pixels_per_cell = v.pixels_per_cell
        self.values = _copied(v.values, v.count).reshape(v.view_h, v.view_w)

    @property
    def shape(self):
        return self.values.shape

    def cell_of(self, row, col):
        """The grid cell (x, y) sample (row, col) shows, or None outside the grid."""
        x, y = ctypes.c_uint32(), ctypes.c_uint32()
        if row < 0 or col < 0 or not lib.cuview_view_cell(self._geometry, self._grid[0], self._grid[1], row, col, x, y):
            return None
        return (x.value, y.value)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def __repr__(self):
        return (f"<cuview view of {self.field} {self.values.shape[1]}x{self.values.shape[0]} {self.encoding} "
                f"(error <= {self.error_bound:g}), frame {self.seq}, step {self.step}>")


_region_array = None


def _region(field, r, z=None, d=None):
    """The fetched values as a NumPy array (a subclass carrying where they came from); a volume's
    box (z, d given) has its layers outermost."""
    global _region_array
    if _region_array is None:
        import numpy as np

        class RegionArray(np.ndarray):
            """A rectangle of a remote field at full resolution (Client.fetch), exact: `field`,
            `seq`, `step` and `time` of its frame, `x`, `y` (and a volume's `z`) its corner in the grid."""
            _meta = ("field", "seq", "step", "time", "x", "y", "z")

            def __array_finalize__(self, obj):
                for k in self._meta:
                    setattr(self, k, getattr(obj, k, None))

        _region_array = RegionArray
    shape = (r.h, r.w) if r.components == 1 else (r.h, r.w, r.components)
    if d is not None:
        shape = (d,) + shape
    out = _copied(r.values, r.count).reshape(shape).view(_region_array)
    out.field, out.seq, out.step, out.time, out.x, out.y, out.z = field, r.seq, r.step, r.sim_time, r.x, r.y, z
    return out
