"""Group: an attachment to every part of a run decomposed into parts. Internal: use the `cuview`
package."""
import ctypes

from . import _capi
from ._capi import lib
from ._client import Client
from ._errors import _UNSUPPORTED, CuviewError, _check
from ._frames import GroupFrame
from ._handle import _Handle
from ._views import View, _picture, _rewatch, _watch_plane
from ._grids import Grid


class Group:
    """An attachment to every part of a run decomposed into parts (cuview.attach of a name that runs
    as parts, or cuview.attach_group); detaches from all when closed (or at the end of a `with`
    block). A whole publisher attached with attach_group is a group of one part.

    Steering (set, step, pause, resume, reset, draw, checkpoint, shutdown) and status() go to the
    leader, part 0, which hands each request to every part at one step; `parts` are the part
    clients (each part's description and status; the others refuse steering)."""

    def __init__(self, name, client, control_only, timeout, remote=None):
        handle = ctypes.c_void_p()
        #: the gateways this group attached through (one per host); None when local
        self.remote = [str(r) for r in remote] if remote else None
        self._watching = None
        if self.remote:
            urls = (ctypes.c_char_p * len(self.remote))(*[r.encode() for r in self.remote])
            _check(lib.cuview_group_attach_remote(name.encode(), client.encode(), urls, len(self.remote),
                                                  int(timeout * 1000), ctypes.byref(handle)))
        else:
            _check(lib.cuview_group_attach(name.encode(), client.encode(), int(control_only), int(timeout * 1000),
                                           ctypes.byref(handle)))
        self._g = _Handle(handle.value, lib.cuview_group_detach)
        self.name = name
        #: False when a whole publisher runs under the name (a group of one part)
        self.decomposed = bool(lib.cuview_group_decomposed(handle))
        count = lib.cuview_group_parts(handle)
        #: one Client per part, in part order (borrowed from the group: closing the group closes them)
        self.parts = [Client._borrowed(lib.cuview_group_part(handle, k), name, self._g) for k in range(count)]
        #: per part, where its block lies and what runs it: index, count, offset, dims, global_dims
        #: (tuples, slowest axis first: (y, x) and (height, width) of a plane), rank (-1 for a whole
        #: publisher), pid, host, device, group
        self.parts_info = []
        for k in range(count):
            p = _capi.PartInfo()
            _check(lib.cuview_group_part_info(handle, k, ctypes.byref(p)))
            info = {f: getattr(p, f) for f in ("index", "count", "rank", "pid")}
            for f in ("host", "device", "group"):
                info[f] = getattr(p, f).decode()
            for f in ("offset", "dims", "global_dims"):
                info[f] = tuple(getattr(p, f)[: p.ndim])
            self.parts_info.append(info)
        #: part 0, which takes the run's steering
        self.leader = self.parts[0]
        self.backend = self.leader.backend
        #: the global grid, slowest axis first: (height, width), or (depth, height, width) for a volume
        self.shape = self.parts_info[0]["global_dims"]

    @property
    def fields(self):
        """Names of the fields (every part has the same), as Client.fields."""
        return self.leader.fields

    def grid(self, field=None):
        """The grid of the whole run that `field` (default: the first) lies on, with the program's
        coordinates: part 0's grid placed at the global grid's first cell (each part's grid is its
        own block, origin at its first cell), shape the global grid's. A cuview.Grid, slowest axis
        first, as Client.grid."""
        g = self.leader.grid(field)
        offset = self.parts_info[0]["offset"]
        if len(offset) != len(g.shape):
            return g
        return Grid(origin=tuple(o - k * s for o, k, s in zip(g.origin, offset, g.spacing)), spacing=g.spacing,
                    units=g.units, name=g.name, shape=self.shape, axes=g.axes)

    def part(self, k):
        """Part k's Client."""
        if not 0 <= k < len(self.parts):
            raise IndexError(f"part {k} of '{self.name}' does not exist: the group has {len(self.parts)} part(s)")
        return self.parts[k]

    def close(self):
        self._g.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._g.h:
            raise CuviewError("not_attached", f"the group of '{self.name}' is closed; attach again")
        return self._g.h

    def read_fields(self, names=()):
        """Reads only these fields (names; a particle set's name: all its attributes) from now on:
        the publishers copy into a frame only what their readers read, so reading one field of
        five costs the run a fifth. Empty: every field, the default. Frames from before that lack
        one are skipped. Through gateways nothing changes. Raises CuviewError("bad_value") naming a
        field the run lacks."""
        names = [names] if isinstance(names, str) else [*names]
        arr = (ctypes.c_char_p * max(1, len(names)))(*[n.encode() for n in names])
        _check(lib.cuview_group_read_fields(self._handle(), arr, len(names)))

    def next_frame(self, timeout=1.0):
        """The newest step not seen yet that every part offers, as a GroupFrame holding that step's
        frame in every part (use it in a `with` block); None when none came within `timeout`
        seconds. Raises CuviewError("daemon_gone") naming the part that went away."""
        handle = ctypes.c_void_p()
        status = lib.cuview_group_next(self._handle(), int(timeout * 1000), ctypes.byref(handle))
        if status == _capi.NO_FRAME:
            return None
        _check(status)
        return GroupFrame(self, handle.value)

    def view(self, field=None, width=None, height=None, zoom=1.0, center=None, encoding="auto", timeout=2.0,
             axis=None, index=None):
        """Remote (attached with remote=[URL, ...]): the next picture of `field` over the global
        grid, put together from one step of every part, as a View (Client.view's arguments, a
        volume's plane by `axis` and `index` of the whole volume included; its error_bound is the
        largest of the parts'). None when none came within `timeout` seconds."""
        if not self.remote:
            raise CuviewError(_UNSUPPORTED, f"view() of '{self.name}': a local group takes frames (next_frame); "
                              "views are for groups attached with remote=[URL, ...]")
        field = self.leader._grid_field(field, "view")
        rows, cols, plane = _picture(list(self.shape), axis, index)
        width, height = int(width or cols), int(height or rows)
        watch = (field, width, height, float(zoom), center, encoding)
        if plane is None:
            _rewatch(self, lib.cuview_group_watch, watch)
        else:
            _rewatch(self, _watch_plane(lib.cuview_group_watch_plane, plane), watch, key=plane)
        v = _capi.View()
        status = lib.cuview_group_next_view(self._handle(), int(timeout * 1000), ctypes.byref(v))
        if status == _capi.NO_FRAME:
            return None
        _check(status)
        return View(v, (cols, rows))

    def picture(self, field=None, mode="mip", camera=None, size=(1280, 720), colormap="viridis", range=None,
                opacity="ramp", level=None, timeout=2.0):
        """A picture of the volume `field` cast by the run itself from every cell, where the data is
        (on the simulation's GPU, inside its cost budget; a run of parts casts each part's block and
        the pictures are composited here; through gateways they come compressed): a VolumeView as
        Frame.view's, of the whole grid (stride 1), with `step`, `seq` and `cast_ms` (its time where
        it was cast). `range` = (lo, hi), the values the colours span, is required (the run's cells
        are not read here); `opacity` "ramp", "peak" or "flat"; `camera` as Frame.view's, pan in the
        grid's cells. None when the run has cast no picture of this view within `timeout` seconds:
        the first ask starts the casting, from the newest frame the run holds, else its next (ask again; a view nobody asks for in
        5 s is dropped). `mode` "plane" (protocol 11) shows the middle z-plane of a volume (a 2-D
        field: itself) of any dtype as it is, each pixel its cell's value: what a notebook can show
        without a CUDA context of its own. Raises CuviewError("unsupported") for a field that is not
        a float32 volume (in a volume mode)."""
        import time

        import numpy as np
        from ._volume import VolumeView, _camera, _rgb

        field = self.leader._grid_field(field, "picture")
        if range is None:
            raise CuviewError("bad_value", f"picture of '{field}': give range=(lo, hi), the values the colours "
                                           "span (the run's cells are not read here)")
        camera = _camera(camera)
        lo, hi = float(range[0]), float(range[1])
        level = (lo + hi) / 2 if level is None else float(level)
        w, h = int(size[0]), int(size[1])
        argb = np.empty((h, w), np.uint32)
        values = np.empty((h, w), np.float32)
        info = _capi.PictureInfo()
        pan = camera["pan"]
        deadline = time.monotonic() + timeout
        while True:
            status = lib.cuview_group_render(self._handle(), field.encode(), mode.encode(), camera["azimuth"],
                                             camera["elevation"], camera["zoom"], pan[0], pan[1], colormap.encode(),
                                             lo, hi, opacity.encode(), level, w, h, argb.ctypes.data,
                                             values.ctypes.data, ctypes.byref(info))
            if status != _capi.NO_FRAME:
                break
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.02)
        _check(status)
        view = VolumeView(_rgb(argb), values, tuple(self.leader.grid(field).shape), 1, mode, camera, (lo, hi), level)
        view.step, view.seq, view.cast_ms = info.step, info.seq, info.cast_ms
        return view

    def gone_reason(self):
        """None while every part runs; otherwise which part went and why."""
        reason = lib.cuview_group_gone_reason(self._handle()).decode()
        return reason or None

    def statuses(self):
        """Every part's status(), in part order."""
        return [p.status() for p in self.parts]


def _leader_call(name):
    def call(self, *args, **kwargs):
        self._handle()
        return getattr(self.leader, name)(*args, **kwargs)

    call.__name__ = name
    call.__doc__ = f"Client.{name} of the leader (part 0), which hands it to every part at one step."
    return call


for _name in ("status", "set", "pause", "resume", "step", "reset", "draw", "checkpoint", "shutdown"):
    setattr(Group, _name, _leader_call(_name))
