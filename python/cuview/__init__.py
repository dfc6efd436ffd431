"""cuview for Python: attach to a running simulation and read its live fields as arrays, zero-copy.

    import cuview, cupy  # or numpy on the host backend
    with cuview.attach("default") as sim:
        with sim.next_frame() as frame:
            u = cupy.asarray(frame["u"])       # the GPU memory of the frame, not a copy
            print(frame.step, float(u.mean()))
        sim.set(F=0.03)

Remote: `cuview.attach(name, remote="ssh://host")` attaches through the cuview-gateway of another
host (docs/remote.md). `next_frame()` works as locally, its grid fields fetched whole, exact, into NumPy
arrays (what it costs the link: docs/remote.md); `view()` gives a view of a field fitted to the link,
within a stated error bound, `fetch()` a rectangle at full resolution, exact, and every control call
(status, pause, set, draw, ...) works as for a local client. `cuview.list(remote=URL)` lists what
runs there.

Runs of parts (`mpirun -n N cuview-compute ...`: one part per rank, each a block of the global
grid): `cuview.attach(name)` returns a `Group`, whose `next_frame()` gives a `GroupFrame` of one
step from every part. `group_frame.parts` lists `(frame, (y0, x0))`, each frame a block read as
above; `group_frame.assemble("u")` is the whole grid (NumPy on the host backend, CuPy on part 0's
GPU on CUDA). Steering a group goes to part 0, which hands it to every part at one step.

Publishing: `cuview.Publisher(name, fields={...}, params={...})` makes your own program's arrays
(NumPy, CuPy, PyTorch, JAX) visible to viewers, with `publish(step, time, arrays)` in your loop and
`poll()` for steering (docs/sdk.md "Python"). Fields may be float32, float64, float16, int32,
int64 or uint8, and the interior of an array with ghost cells (`a[1:-1, 1:-1, 1:-1]`) is read in
place; `grid=cuview.Grid(origin=..., spacing=..., units="m")` gives the cells' coordinates, which
a reader gets back as `frame.grid("u")` (origin, spacing, units, axes; slowest axis first).

Field views speak DLPack (`torch.from_dlpack`, `cupy.from_dlpack`, `numpy.from_dlpack`),
`__cuda_array_interface__` (CUDA) and NumPy's `__array_interface__` (host backend). They are
read-only and valid inside the frame's `with` block: leaving it releases the slot (after the GPU
work this process queued on the device is done), and the publisher may then overwrite it — copy
what you keep. Built on libcuview.so (cuview/client.h) through ctypes; no compiled extension.
"""
import ctypes
import json

from . import _capi, _dlpack  # noqa: F401  (cuview._capi: python3 -m cuview version)
from ._capi import lib
# The package's parts, by concept; everything is re-exported here (the private names too, as before
# the split), and the public classes keep `cuview` as their module (repr, tracebacks, help).
from ._errors import _BAD_VALUE, _UNSUPPORTED, CuviewError, _check  # noqa: F401
from ._handle import _Handle  # noqa: F401
from ._frames import FieldView, Frame, GroupFrame  # noqa: F401
from ._views import View, _copied, _region, _rewatch  # noqa: F401
from ._client import Client
from ._groups import Group, _leader_call  # noqa: F401
from ._grids import Grid
from ._publisher import Publisher, Steering
from ._volume import VolumeView

__all__ = ["attach", "attach_group", "list", "Client", "Group", "Frame", "GroupFrame", "FieldView", "View",
           "CuviewError", "version", "Publisher", "Steering", "VolumeView", "Grid"]

for _cls in (CuviewError, Client, Group, Frame, GroupFrame, FieldView, View, Publisher, Steering, VolumeView,
             Grid):
    _cls.__module__ = __name__
del _cls


def version():
    return lib.cuview_version().decode()


def attach(name="default", client="cuview python", control_only=False, timeout=3.0, remote=None):
    """Attaches to the publisher `name` (cuview-compute or a program embedding the publisher).
    Raises CuviewError("no_daemon", ...) when none runs under that name.

    remote: the cuview-gateway of another host to attach through, "ssh://[user@]host[:port]",
    "tcp://host:port?key=KEY" or "unix:/path/gateway.sock" (docs/remote.md), or a list of them,
    one per host of a run of parts. A remote client has views (Client.view) and exact regions
    (Client.fetch) besides frames: its next_frame() fetches the frame's grid fields whole (exact, each in its dtype) into
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


def list(remote=None, timeout=5.0):
    """The publishers running now, as dicts with at least "name": this host's (remote=None), or
    those the cuview-gateway at `remote` serves, each also with "sim", "backend", "device", "dims"
    (every axis of its grid, slowest first) and "viewers" (that gateway's remote watchers). Raises CuviewError when the
    gateway cannot be reached."""
    out = ctypes.c_char_p()
    _check(lib.cuview_list_json(remote.encode() if remote else None, int(timeout * 1000), ctypes.byref(out)))
    return json.loads(out.value.decode())
