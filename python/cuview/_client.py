"""Client: an attachment to one publisher (or one part of a group). Internal: use the `cuview`
package."""
import ctypes
import json
import os
import time

from . import _capi
from ._capi import lib
from ._errors import _BAD_VALUE, _UNSUPPORTED, CuviewError, _check
from ._frames import Frame
from ._grids import Grid
from ._views import View, _picture, _region, _rewatch, _watch_plane


class Client:
    """An attachment; detaches when closed (or at the end of a `with` block). Local clients
    receive frames (next_frame); remote ones views (view) and regions (fetch)."""

    def __init__(self, name, client, control_only, timeout, remote=None):
        self._h = None
        handle = ctypes.c_void_p()
        if remote:
            _check(lib.cuview_attach_remote(name.encode(), client.encode(), remote.encode(), int(timeout * 1000),
                                            ctypes.byref(handle)))
        else:
            _check(lib.cuview_attach(name.encode(), client.encode(), int(control_only), int(timeout * 1000),
                                     ctypes.byref(handle)))
        self._adopt(handle, name, remote)

    @classmethod
    def _of_group(cls, group):
        """The one part of a group of one part (a whole publisher), owning the group: closing the
        client closes it."""
        c = cls.__new__(cls)
        c._adopt(lib.cuview_group_part(group._handle(), 0), group.name, group.remote[0] if group.remote else None,
                 group._g)
        c._group = group
        return c

    @classmethod
    def _borrowed(cls, handle, name, owner):
        """A part client of a group (cuview_group_part): `owner` (the group's _Handle) frees it."""
        c = cls.__new__(cls)
        c._adopt(handle, name, None, owner)
        return c

    def _adopt(self, handle, name, remote, owner=None):
        self._h = handle
        self._owner = owner
        self.name = name
        #: the gateway's URL this client attached through; None when local
        self.remote = remote or None
        self._watching = None  # the arguments of the current watch (remote)
        self.backend = lib.cuview_backend(handle).decode()
        #: "shm" (host), "legacy", "vmm" or "pool": how the frames reach this process
        self.sharing = lib.cuview_sharing(handle).decode()
        self.description = json.loads(lib.cuview_describe_json(handle).decode())
        self._blocks = []
        for i in range(lib.cuview_block_count(handle)):
            b = _capi.Block()
            _check(lib.cuview_block_info(handle, i, ctypes.byref(b)))
            key = b.name.decode() if not b.set else b.set.decode() + "." + b.name.decode()
            self._blocks.append((key, b.dtype.decode(), tuple(b.shape[: b.ndim]), tuple(b.strides[: b.ndim])))

    @property
    def fields(self):
        """Names of the fields, then "set.attribute" for each particle attribute, in slot order."""
        return [b[0] for b in self._blocks]

    @property
    def grids(self):
        """The grids the fields lie on, by name: cuview.Grid values with shape, origin, spacing,
        units and axes, slowest axis first (description["grids"]). A publisher of protocol 7 names
        none: one grid "grid" of the description's dims, origin 0 and spacing 1. A part's grid is
        its own block, origin at its first cell."""
        d = self.description
        described = d.get("grids")
        if not described:
            described = [{"name": "grid", "dims": d["dims"]}]
        return {g["name"]: Grid._described(g) for g in described}

    def grid(self, field=None):
        """The cuview.Grid field `field` (None: the first field) lies on; CuviewError("bad_value")
        naming an unknown field."""
        field = self._grid_field(field, "grid")
        grids = self.grids
        named = next(f.get("grid") for f in self.description["fields"] if f["name"] == field)
        return grids.get(named) or next(iter(grids.values()))

    def close(self):
        """Detaches. A group's part client (Group.leader, Group.part) stays attached with its group:
        closing the group detaches it."""
        if getattr(self, "_group", None) is not None:  # attach() of a whole publisher: the group is ours
            self._group.close()
            self._group = None
            self._h = None
        elif self._h and self._owner is None:
            lib.cuview_detach(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None):
            self.close()

    def _handle(self):
        if not self._h or (self._owner is not None and not self._owner.h):
            raise CuviewError("not_attached", f"the client of '{self.name}' is closed; attach again")
        return self._h

    def status(self):
        """The publisher's `stats` (docs/protocol.md) as a dict: step, rates, params, ..."""
        out = ctypes.c_char_p()
        _check(lib.cuview_stats_json(self._handle(), ctypes.byref(out)))
        return json.loads(out.value.decode())

    def read_fields(self, names=()):
        """Reads only these fields from now on (Group.read_fields); empty: every field, the default."""
        group = getattr(self, "_group", None)
        if group is None:
            raise CuviewError("unsupported", f"read_fields() on part client '{self.name}': call it on its group")
        group.read_fields(names)

    def next_frame(self, timeout=1.0):
        """The newest frame not seen yet, held until released (use it in a `with` block); None when
        none came within `timeout` seconds. Raises CuviewError("daemon_gone") when the publisher
        exited or restarted. Remote: the frame's grid fields fetched whole into host memory, exact (their
        dtype's bytes per value over the link, compressed; view() costs the link far less)."""
        handle = ctypes.c_void_p()
        status = lib.cuview_next_frame(self._handle(), int(timeout * 1000), ctypes.byref(handle))
        if status == _capi.NO_FRAME:
            return None
        _check(status)
        return Frame(self, handle)

    def _dims_of(self, field):
        """The cells of the grid `field` lies on, slowest axis first: the description's dims (the
        whole run's, for a group) for a field of the first grid, else its own grid's."""
        d = self.description
        grids = d.get("grids") or []
        named = next((f.get("grid") for f in d["fields"] if f["name"] == field), None)
        if grids and named and named != grids[0]["name"]:
            return list(self.grids[named].shape)
        return d["dims"]

    def _grid_field(self, field, call):
        """The field `field` names (the first field when None), refused by name when it is none."""
        names = [f["name"] for f in self.description["fields"]]
        if field is None:
            return names[0]
        if field not in names:
            raise CuviewError(_BAD_VALUE, f"{call}: '{self.name}' has no field '{field}'; its fields: {', '.join(names)}")
        return field

    def view(self, field=None, width=None, height=None, zoom=1.0, center=None, encoding="auto", timeout=2.0,
             axis=None, index=None):
        """Remote: the next view of `field` (None: the first field), a View whose `.values` is a
        (height, width) float32 array (a vector field's magnitude), NaN outside the grid.

        A volume's field is viewed a plane at a time: `axis` "x", "y" or "z" across it and `index`
        along it (None: "z" and the middle); the grid below is then that plane's (a z-plane's columns
        are x and rows y, a y-plane's x and z, an x-plane's y and z).

        width, height: the output's samples (None: the grid's). zoom=1 fits the whole grid into
        them with its aspect kept (samples per cell: the smaller of width / grid width and height /
        grid height); zoom=2 twice as large; centred on cell `center` = (x, y) (None: the grid's
        centre). encoding: "auto"
        (the gateway fits it to the link) or pinned "u8", "u16", "f32" (exact); every value is within
        the view's `error_bound` of the true one. A changed region starts a new watch; views come as
        frames are published (one at once after a new watch). Returns None when no new view came
        within `timeout` seconds (a paused publisher sends none after the first). Raises
        CuviewError("unsupported") on a local client, ("bad_value") naming an unknown field."""
        if not self.remote:
            raise CuviewError(_UNSUPPORTED, f"view() of '{self.name}': a local client takes frames (next_frame); "
                              "views are for clients attached with remote=URL")
        d = self.description
        field = self._grid_field(field, "view")
        rows, cols, plane = _picture(self._dims_of(field), axis, index)
        width = int(width or cols)
        height = int(height or rows)
        if plane is None:
            _rewatch(self, lib.cuview_watch, (field, width, height, float(zoom), center, encoding))
        else:  # the C API names a wrong axis, or an axis of a plane
            _rewatch(self, _watch_plane(lib.cuview_watch_plane, plane),
                     (field, width, height, float(zoom), center, encoding), key=plane)
        deadline = time.monotonic() + timeout
        v = _capi.View()
        while True:
            left = max(0, int((deadline - time.monotonic()) * 1000))
            status = lib.cuview_next_view(self._handle(), left, ctypes.byref(v))
            if status == _capi.NO_FRAME:
                return None
            _check(status)
            # Views of an earlier watch may still be on their way: skip them.
            if (v.field.decode() == field and (v.view_w, v.view_h) == (width, height)
                    and encoding in ("auto", v.encoding.decode())):
                return View(v, (cols, rows))
            if left == 0:
                return None

    def fetch(self, field=None, x=0, y=0, w=None, h=None, z=None, d=None):
        """Remote: the rectangle [x, x+w) × [y, y+h) of `field` (None: the first field) in the newest
        frame, at full resolution and exact: a float32 NumPy array of shape (h, w), or
        (h, w, components) for a vector field, with `.seq`, `.step`, `.time`, `.x`, `.y` and
        `.field` of where it came from. w, h None: to the grid's edge. In a volume, z and d give the
        layers [z, z+d) (None: every layer from z, or 0): an array of (d, h, w[, components]). Raises
        CuviewError("out_of_range") for a rectangle leaving the grid, ("bad_value") naming an
        unknown field."""
        if not self.remote:
            raise CuviewError(_UNSUPPORTED, f"fetch() of '{self.name}': a local client reads frames "
                              "(next_frame); fetch is for clients attached with remote=URL")
        field = self._grid_field(field, "fetch")
        r = _capi.Region()
        if len(self._dims_of(field)) == 3 or z is not None or d is not None:
            oz, od = ctypes.c_uint32(), ctypes.c_uint32()
            _check(lib.cuview_fetch_box(self._handle(), field.encode(), int(x), int(y), int(z or 0), int(w or 0),
                                        int(h or 0), int(d or 0), ctypes.byref(r), ctypes.byref(oz), ctypes.byref(od)))
            return _region(field, r, oz.value, od.value)
        _check(lib.cuview_fetch(self._handle(), field.encode(), int(x), int(y), int(w or 0), int(h or 0),
                                ctypes.byref(r)))
        return _region(field, r)

    def set(self, preset=None, **params):
        """Steers: set(F=0.03, k=0.06) or set(preset="maze"); each value is checked against its range."""
        if preset is not None:
            _check(lib.cuview_set_preset(self._handle(), preset.encode()))
        for k, v in params.items():
            _check(lib.cuview_set(self._handle(), k.encode(), float(v)))

    def pause(self):
        _check(lib.cuview_pause(self._handle()))

    def resume(self):
        _check(lib.cuview_resume(self._handle()))

    def step(self, n=1):
        _check(lib.cuview_step(self._handle(), int(n)))

    def reset(self):
        _check(lib.cuview_reset(self._handle()))

    def draw(self, input, x, y, radius=3.0, erase=False, z=None):
        """Draws (or erases) a disc of `radius` cells at grid (x, y) into the publisher's input
        `input` (description["inputs"]): obstacles in a flow, bodies in N-body, ... In a volume,
        give `z` too: a ball centred at (x, y, z)."""
        value = 0 if erase else 1
        if z is None:
            _check(lib.cuview_draw(self._handle(), input.encode(), float(x), float(y), float(radius), value))
        else:
            _check(lib.cuview_draw_ball(self._handle(), input.encode(), float(x), float(y), float(z), float(radius),
                                        value))

    def checkpoint(self, path=None, timeout=600.0):
        """Has the daemon write a checkpoint (to `path`; None: its checkpoint directory) and waits
        for it. Returns (file, step). docs/checkpoints.md; h5py opens the file."""
        step = ctypes.c_uint64(0)
        written = ctypes.create_string_buffer(4096)
        target = None if path is None else os.path.abspath(path).encode()
        _check(lib.cuview_checkpoint(self._handle(), target, int(timeout * 1000), ctypes.byref(step), written, 4096))
        return written.value.decode(), step.value

    def shutdown(self):
        _check(lib.cuview_shutdown(self._handle()))
