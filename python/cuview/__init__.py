"""cuview for Python: attach to a running simulation and read its live fields as arrays, zero-copy.

    import cuview, cupy  # or numpy on the host backend
    with cuview.attach("default") as sim:
        with sim.next_frame() as frame:
            u = cupy.asarray(frame["u"])       # the GPU memory of the frame, not a copy
            print(frame.step, float(u.mean()))
        sim.set(F=0.03)

Remote: `cuview.attach(name, remote="ssh://host")` attaches through the cuview-gateway of another
host (docs/remote.md). `next_frame()` works as locally, its float32 fields fetched whole into NumPy
arrays (what it costs the link: docs/remote.md); `view()` gives a view of a field fitted to the link,
within a stated error bound, `fetch()` a rectangle at full resolution, exact, and every control call
(status, pause, set, draw, ...) works as for a local client. `cuview.list(remote=URL)` lists what
runs there.

Runs of parts (`mpirun -n N cuview-compute ...`: one part per rank, each a block of the global
grid): `cuview.attach(name)` returns a `Group`, whose `next_frame()` gives a `GroupFrame` of one
step from every part. `group_frame.parts` lists `(frame, (y0, x0))`, each frame a block read as
above; `group_frame.assemble("u")` is the whole grid (NumPy on the host backend, CuPy on part 0's
GPU on CUDA). Steering a group goes to part 0, which hands it to every part at one step.

Field views speak DLPack (`torch.from_dlpack`, `cupy.from_dlpack`, `numpy.from_dlpack`),
`__cuda_array_interface__` (CUDA) and NumPy's `__array_interface__` (host backend). They are
read-only and valid inside the frame's `with` block: leaving it releases the slot (after the GPU
work this process queued on the device is done), and the publisher may then overwrite it — copy
what you keep. Built on libcuview.so (cuview/client.h) through ctypes; no compiled extension.
"""
import ctypes
import json
import os
import time

from . import _capi, _dlpack
from ._capi import lib

__all__ = ["attach", "attach_group", "list", "Client", "Group", "Frame", "GroupFrame", "FieldView", "View",
           "CuviewError", "version"]

_UNSUPPORTED, _BAD_VALUE = 19, 6

_TYPESTR = {"float32": "<f4", "float16": "<f2", "int32": "<i4", "uint8": "|u1"}


def version():
    return lib.cuview_version().decode()


class CuviewError(Exception):
    """A cuview failure: `code` is the wire name ("no_daemon", "out_of_range", ...)."""

    def __init__(self, status, message):
        self.code = lib.cuview_status_name(status).decode()
        super().__init__(message)


def _check(status):
    if status != _capi.OK:
        raise CuviewError(status, lib.cuview_last_error().decode())


def attach(name="default", client="cuview python", control_only=False, timeout=3.0, remote=None):
    """Attaches to the publisher `name` (cuview-compute or a program embedding the publisher).
    Raises CuviewError("no_daemon", ...) when none runs under that name.

    remote: the cuview-gateway of another host to attach through, "ssh://[user@]host[:port]",
    "tcp://host:port?key=KEY" or "unix:/path/gateway.sock" (docs/remote.md), or a list of them,
    one per host of a run of parts. A remote client has views (Client.view) and exact regions
    (Client.fetch) besides frames: its next_frame() fetches the frame's float32 fields whole into
    host memory (NumPy), so a script written against a local publisher runs unchanged.

    A Client for a whole publisher; a Group when `name` runs as parts (mpirun -n N
    cuview-compute ...). The library opens what the name and `remote` denote (cuview::open)."""
    group = attach_group(name, client, control_only, timeout, remote)
    if group.decomposed:
        return group
    return Client._of_group(group)


def attach_group(name="default", client="cuview python", control_only=False, timeout=3.0, remote=None):
    """Attaches to every part of `name` as a Group, also when a whole publisher runs under it (a
    group of one part covering the whole grid), so that a tool can treat both alike. A part not up
    yet, or still one of an earlier run, is waited for until `timeout` seconds pass; then
    CuviewError names it. remote: a gateway's URL, or a list of them, one per host of the run
    (docs/remote.md "Runs of parts"): the group then has views (Group.view), not frames."""
    if remote:
        return Group(name, client, True, timeout, remote=[remote] if isinstance(remote, str) else [*remote])
    return Group(name, client, control_only, timeout)


class _Handle:
    """A C handle that `free` frees once, when closed or when nothing refers to it any more. An
    object and the borrowed handles inside it (a group's part clients, a group frame's part frames)
    share one, so that no reference cycle delays the freeing."""

    def __init__(self, h, free):
        self.h, self._free = h, free

    def close(self):
        if self.h:
            h, self.h = self.h, None
            self._free(h)

    def __del__(self):
        self.close()


def list(remote=None, timeout=5.0):
    """The publishers running now, as dicts with at least "name": this host's (remote=None), or
    those the cuview-gateway at `remote` serves, each also with "sim", "backend", "device",
    "width", "height" and "viewers" (that gateway's remote watchers). Raises CuviewError when the
    gateway cannot be reached."""
    out = ctypes.c_char_p()
    _check(lib.cuview_list_json(remote.encode() if remote else None, int(timeout * 1000), ctypes.byref(out)))
    return json.loads(out.value.decode())


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
            raise CuviewError(8, f"the client of '{self.name}' is closed; attach again")
        return self._h

    def status(self):
        """The publisher's `stats` (docs/protocol.md) as a dict: step, rates, params, ..."""
        out = ctypes.c_char_p()
        _check(lib.cuview_stats_json(self._handle(), ctypes.byref(out)))
        return json.loads(out.value.decode())

    def next_frame(self, timeout=1.0):
        """The newest frame not seen yet, held until released (use it in a `with` block); None when
        none came within `timeout` seconds. Raises CuviewError("daemon_gone") when the publisher
        exited or restarted. Remote: the frame's float32 fields fetched whole into host memory (4
        bytes a value over the link, compressed; view() costs the link far less)."""
        handle = ctypes.c_void_p()
        status = lib.cuview_next_frame(self._handle(), int(timeout * 1000), ctypes.byref(handle))
        if status == _capi.NO_FRAME:
            return None
        _check(status)
        return Frame(self, handle)

    def _grid_field(self, field, call):
        """The field `field` names (the first field when None), refused by name when it is none."""
        names = [f["name"] for f in self.description["fields"]]
        if field is None:
            return names[0]
        if field not in names:
            raise CuviewError(_BAD_VALUE, f"{call}: '{self.name}' has no field '{field}'; its fields: {', '.join(names)}")
        return field

    def view(self, field=None, width=None, height=None, zoom=1.0, center=None, encoding="auto", timeout=2.0):
        """Remote: the next view of `field` (None: the first field), a View whose `.values` is a
        (height, width) float32 array (a vector field's magnitude), NaN outside the grid.

        width, height: the output's samples (None: the grid's). The whole grid is fitted into them,
        times `zoom`, centred on cell `center` = (x, y) (None: the grid's centre). encoding: "auto"
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
        width = int(width or d["width"])
        height = int(height or d["height"])
        _rewatch(self, lib.cuview_watch, (field, width, height, float(zoom), center, encoding))
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
                return View(v, (d["width"], d["height"]))
            if left == 0:
                return None

    def fetch(self, field=None, x=0, y=0, w=None, h=None):
        """Remote: the rectangle [x, x+w) × [y, y+h) of `field` (None: the first field) in the newest
        frame, at full resolution and exact: a float32 NumPy array of shape (h, w), or
        (h, w, components) for a vector field, with `.seq`, `.step`, `.time`, `.x`, `.y` and
        `.field` of where it came from. w, h None: to the grid's edge. Raises
        CuviewError("out_of_range") for a rectangle leaving the grid, ("bad_value") naming an
        unknown field."""
        if not self.remote:
            raise CuviewError(_UNSUPPORTED, f"fetch() of '{self.name}': a local client reads frames "
                              "(next_frame); fetch is for clients attached with remote=URL")
        field = self._grid_field(field, "fetch")
        r = _capi.Region()
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

    def draw(self, input, x, y, radius=3.0, erase=False):
        """Draws (or erases) a disc of `radius` cells at grid (x, y) into the publisher's input
        `input` (description["inputs"]): obstacles in a flow, bodies in N-body, ..."""
        _check(lib.cuview_draw(self._handle(), input.encode(), float(x), float(y), float(radius), 0 if erase else 1))

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


class Frame:
    """One published frame, its slot held. `frame["u"]` is a zero-copy view of field u.

    A part of a GroupFrame is one part's block, held with the other parts' (`held`): releasing it
    releases the group frame."""

    def __init__(self, client, handle, held=None):
        self._h = None
        self._held = held
        self._client = client
        self._h = handle
        self.seq = lib.cuview_frame_seq(handle)
        self.step = lib.cuview_frame_step(handle)
        self.time = lib.cuview_frame_time(handle)
        self.device = lib.cuview_frame_device(handle)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def __del__(self):
        if self._held is None:
            self.release()

    def release(self):
        """Lets the publisher write the slot again, after this process's GPU work on the device."""
        if self._held is not None:
            self._h = None
            self._held.close()  # a group frame's parts go together
            return
        if self._h:
            if self.device >= 0:
                lib.cuview_frame_synchronize(self._h)
            lib.cuview_frame_release(self._h)
            self._h = None

    def verify(self):
        """Raises CuviewError("bad_value") unless the frame is intact (trailer and checksum)."""
        _check(lib.cuview_frame_verify(self._alive()))

    def _alive(self):
        if not self._h or (self._held is not None and not self._held.h):
            raise CuviewError(6, f"frame {self.seq} was released; take a new one with next_frame()")
        return self._h

    def __getitem__(self, name):
        for i, (key, dtype, shape, strides) in enumerate(self._client._blocks):
            if key == name:
                data = lib.cuview_frame_data(self._alive(), i)
                if not data:
                    raise CuviewError(_UNSUPPORTED, f"'{key}' of '{self._client.name}' does not come through the "
                                      f"gateway {self._client.remote}: a remote frame holds the float32 grid fields")
                return FieldView(self, key, data, dtype, shape, strides)
        raise KeyError(f"'{self._client.name}' publishes no field '{name}'; it has: {', '.join(self._client.fields)}")


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
        #: per part, where its block lies and what runs it: index, count, offset_x, offset_y, width,
        #: height, global_width, global_height, rank (-1 for a whole publisher), pid, host, device, group
        self.parts_info = []
        for k in range(count):
            p = _capi.PartInfo()
            _check(lib.cuview_group_part_info(handle, k, ctypes.byref(p)))
            info = {f: getattr(p, f) for f, _ in _capi.PartInfo._fields_}
            for f in ("host", "device", "group"):
                info[f] = info[f].decode()
            self.parts_info.append(info)
        #: part 0, which takes the run's steering
        self.leader = self.parts[0]
        self.backend = self.leader.backend
        #: (global_height, global_width)
        self.shape = (self.parts_info[0]["global_height"], self.parts_info[0]["global_width"])

    @property
    def fields(self):
        """Names of the fields (every part has the same), as Client.fields."""
        return self.leader.fields

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
            raise CuviewError(8, f"the group of '{self.name}' is closed; attach again")
        return self._g.h

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

    def view(self, field=None, width=None, height=None, zoom=1.0, center=None, encoding="auto", timeout=2.0):
        """Remote (attached with remote=[URL, ...]): the next picture of `field` over the global
        grid, put together from one step of every part, as a View (Client.view's arguments; its
        error_bound is the largest of the parts'). None when none came within `timeout` seconds."""
        if not self.remote:
            raise CuviewError(_UNSUPPORTED, f"view() of '{self.name}': a local group takes frames (next_frame); "
                              "views are for groups attached with remote=[URL, ...]")
        field = self.leader._grid_field(field, "view")
        gh, gw = self.shape
        width, height = int(width or gw), int(height or gh)
        _rewatch(self, lib.cuview_group_watch, (field, width, height, float(zoom), center, encoding))
        v = _capi.View()
        status = lib.cuview_group_next_view(self._handle(), int(timeout * 1000), ctypes.byref(v))
        if status == _capi.NO_FRAME:
            return None
        _check(status)
        return View(v, (gw, gh))

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


class GroupFrame:
    """The frames of one step from every part of a group, held until released (use it in a `with`
    block): `parts` lists `(frame, (y0, x0))`, each part's Frame (its block: `frame["u"]`) and
    where its block starts in the global grid; assemble() puts a field's blocks together."""

    def __init__(self, group, handle):
        count = lib.cuview_group_frame_parts(handle)
        raw = [lib.cuview_group_frame_part(handle, k) for k in range(count)]
        devices = [lib.cuview_frame_device(p) for p in raw]

        def free(h):
            for p, d in zip(raw, devices):
                if d >= 0:
                    lib.cuview_frame_synchronize(p)
            lib.cuview_group_frame_release(h)

        self._held = _Handle(handle, free)
        self.name = group.name
        self.step = lib.cuview_group_frame_step(handle)
        #: (global_height, global_width)
        self.shape = group.shape
        self._fields = [f["name"] for f in group.leader.description["fields"]]
        self.parts = [(Frame(group.parts[k], raw[k], self._held),
                       (group.parts_info[k]["offset_y"], group.parts_info[k]["offset_x"])) for k in range(count)]
        self.time = self.parts[0][0].time
        #: part 0's frame's GPU (where assemble() puts the global array); -1 on the host backend
        self.device = devices[0]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()

    def release(self):
        """Lets every part's publisher write its slot again, after this process's GPU work."""
        self._held.close()

    def _alive(self):
        if not self._held.h:
            raise CuviewError(6, f"the frames of step {self.step} of '{self.name}' were released; take new ones "
                              "with next_frame()")
        return self._held.h

    def verify(self):
        """Raises CuviewError("bad_value") naming the first part whose frame is not intact."""
        _check(lib.cuview_group_frame_verify(self._alive()))

    def assemble(self, field, host=False):
        """Field `field` over the whole global grid, each part's block at its offset: a NumPy array on
        the host backend (or with host=True); on CUDA a CuPy array on part 0's GPU, filled from each
        part's GPU (peer copies). Shape (global_height, global_width) or (..., components)."""
        h = self._alive()
        if field not in self._fields:
            raise KeyError(f"'{self.name}' publishes no grid field '{field}'; it has: {', '.join(self._fields)}")
        index = self._fields.index(field)
        _, dtype, shape, _ = self.parts[0][0]._client._blocks[index]
        full = self.shape + tuple(shape[2:])
        if self.device < 0 or host:
            import numpy as np
            out = np.empty(full, dtype=np.dtype(_TYPESTR[dtype]))
            _check(lib.cuview_group_frame_copy_field(h, index, out.ctypes.data, out.nbytes))
            return out
        try:
            import cupy
        except ImportError as e:
            raise ImportError(f"assemble('{field}') of the CUDA run '{self.name}' makes a CuPy array on GPU "
                              f"{self.device}, and CuPy is not installed: install it (cupy-cuda12x), or pass "
                              "host=True for a NumPy copy") from e
        with cupy.cuda.Device(self.device):
            out = cupy.empty(full, dtype=_TYPESTR[dtype])
            for frame, (y0, x0) in self.parts:
                with cupy.cuda.Device(frame.device):
                    block = cupy.ascontiguousarray(cupy.from_dlpack(frame[field]))
                if frame.device != self.device:  # to part 0's GPU first
                    moved = cupy.empty(block.shape, block.dtype)
                    moved.data.copy_from_device(block.data, block.nbytes)
                    block = moved
                out[y0:y0 + block.shape[0], x0:x0 + block.shape[1]] = block
            # Done reading the frames before any of them is released (release waits on their GPUs only).
            cupy.cuda.get_current_stream().synchronize()
        return out


def _rewatch(owner, watch_call, watch):
    """Starts a watch (watch_call: cuview_watch or cuview_group_watch) of `watch` = (field, width,
    height, zoom, center or None, encoding) unless `owner` watches just that already."""
    field, width, height, zoom, center, encoding = watch
    if watch == owner._watching:
        return
    owner._watching = None
    cx, cy = (float("nan"), float("nan")) if center is None else (float(center[0]), float(center[1]))
    _check(watch_call(owner._handle(), field.encode(), width, height, zoom, cx, cy, encoding.encode()))
    owner._watching = watch


def _copied(pointer, count):
    """A NumPy copy of `count` float32 values the C API lends until its next call."""
    import numpy as np
    if count == 0:
        return np.empty(0, dtype=np.float32)
    return np.ctypeslib.as_array(pointer, shape=(count,)).copy()


class View:
    """A view of a remote frame (Client.view). `values`: (height, width) float32 NumPy array, NaN
    outside the grid, each within `error_bound` of the true value (0 for "f32"). Also an array
    itself: numpy.asarray(view) is `values`."""

    def __init__(self, v, grid):
        self.seq, self.step, self.time = v.seq, v.step, v.sim_time
        self._grid = grid
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
        h, w = self.values.shape
        fx = self.center[0] + (col + 0.5 - w * 0.5) / self.pixels_per_cell
        fy = self.center[1] + (row + 0.5 - h * 0.5) / self.pixels_per_cell
        inside = 0 <= fx < self._grid[0] and 0 <= fy < self._grid[1]
        return (int(fx), int(fy)) if inside else None

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)

    def __repr__(self):
        return (f"<cuview view of {self.field} {self.values.shape[1]}x{self.values.shape[0]} {self.encoding} "
                f"(error <= {self.error_bound:g}), frame {self.seq}, step {self.step}>")


_region_array = None


def _region(field, r):
    """The fetched values as a NumPy array (a subclass carrying where they came from)."""
    global _region_array
    if _region_array is None:
        import numpy as np

        class RegionArray(np.ndarray):
            """A rectangle of a remote field at full resolution (Client.fetch), exact: `field`,
            `seq`, `step` and `time` of its frame, `x`, `y` its corner in the grid."""
            _meta = ("field", "seq", "step", "time", "x", "y")

            def __array_finalize__(self, obj):
                for k in self._meta:
                    setattr(self, k, getattr(obj, k, None))

        _region_array = RegionArray
    shape = (r.h, r.w) if r.components == 1 else (r.h, r.w, r.components)
    out = _copied(r.values, r.count).reshape(shape).view(_region_array)
    out.field, out.seq, out.step, out.time, out.x, out.y = field, r.seq, r.step, r.sim_time, r.x, r.y
    return out


class FieldView:
    """A read-only, zero-copy view of one field of a held frame."""

    def __init__(self, frame, name, data, dtype, shape, strides):
        self.frame, self.name, self.data = frame, name, data
        self.dtype, self.shape, self.strides = dtype, shape, strides

    def __repr__(self):
        where = f"cuda:{self.frame.device}" if self.frame.device >= 0 else "host"
        return f"<cuview field {self.name} {self.dtype} {self.shape} on {where}, frame {self.frame.seq}>"

    def _interface(self):
        self.frame._alive()
        return {
            "shape": self.shape,
            "typestr": _TYPESTR[self.dtype],
            "data": (self.data, True),  # read-only
            "strides": self.strides,
            "version": 3,
        }

    @property
    def __cuda_array_interface__(self):
        if self.frame.device < 0:
            raise AttributeError("a host-backend field has no __cuda_array_interface__; use numpy.asarray")
        d = self._interface()
        d["stream"] = None  # complete already: next_frame waited for it on the host
        return d

    @property
    def __array_interface__(self):
        if self.frame.device >= 0:
            raise AttributeError("a CUDA field is in GPU memory: use cupy.asarray or torch.as_tensor")
        return self._interface()

    def __dlpack_device__(self):
        return (_dlpack.KDL_CUDA, self.frame.device) if self.frame.device >= 0 else (_dlpack.KDL_CPU, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.frame._alive()
        if copy:
            raise BufferError("cuview field views are zero-copy; copy the array you get instead")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"field {self.name} is on device {self.__dlpack_device__()}, not {tuple(dl_device)}")
        if self.frame.device < 0 and stream is not None:
            raise BufferError("a host-backend field takes no stream")
        # On CUDA any consumer stream may read at once: next_frame waited for the data on the host.
        versioned = max_version is not None and max_version[0] >= 1
        return _dlpack.capsule(self, self.data, self.__dlpack_device__(), self.dtype, self.shape, self.strides,
                               versioned)
