"""cuview for Python: attach to a running simulation and read its live fields as arrays, zero-copy.

    import cuview, cupy  # or numpy on the host backend
    with cuview.attach("default") as sim:
        with sim.next_frame() as frame:
            u = cupy.asarray(frame["u"])       # the GPU memory of the frame, not a copy
            print(frame.step, float(u.mean()))
        sim.set(F=0.03)

Field views speak DLPack (`torch.from_dlpack`, `cupy.from_dlpack`, `numpy.from_dlpack`),
`__cuda_array_interface__` (CUDA) and NumPy's `__array_interface__` (host backend). They are
read-only and valid inside the frame's `with` block: leaving it releases the slot (after the GPU
work this process queued on the device is done), and the publisher may then overwrite it — copy
what you keep. Built on libcuview.so (cuview/client.h) through ctypes; no compiled extension.
"""
import ctypes
import json
import os

from . import _capi, _dlpack
from ._capi import lib

__all__ = ["attach", "Client", "Frame", "FieldView", "CuviewError", "version"]

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


def attach(name="default", client="cuview python", control_only=False, timeout=3.0):
    """Attaches to the publisher `name` (cuview-compute or a program embedding the publisher).
    Raises CuviewError("no_daemon", ...) when none runs under that name."""
    return Client(name, client, control_only, timeout)


class Client:
    """An attachment; detaches when closed (or at the end of a `with` block)."""

    def __init__(self, name, client, control_only, timeout):
        self._h = None
        handle = ctypes.c_void_p()
        _check(lib.cuview_attach(name.encode(), client.encode(), int(control_only), int(timeout * 1000),
                                 ctypes.byref(handle)))
        self._h = handle
        self.name = name
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
        if self._h:
            lib.cuview_detach(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _handle(self):
        if not self._h:
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
        exited or restarted."""
        handle = ctypes.c_void_p()
        status = lib.cuview_next_frame(self._handle(), int(timeout * 1000), ctypes.byref(handle))
        if status == _capi.NO_FRAME:
            return None
        _check(status)
        return Frame(self, handle)

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
    """One published frame, its slot held. `frame["u"]` is a zero-copy view of field u."""

    def __init__(self, client, handle):
        self._h = None
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
        self.release()

    def release(self):
        """Lets the publisher write the slot again, after this process's GPU work on the device."""
        if self._h:
            if self.device >= 0:
                lib.cuview_frame_synchronize(self._h)
            lib.cuview_frame_release(self._h)
            self._h = None

    def verify(self):
        """Raises CuviewError("bad_value") unless the frame is intact (trailer and checksum)."""
        _check(lib.cuview_frame_verify(self._alive()))

    def _alive(self):
        if not self._h:
            raise CuviewError(6, f"frame {self.seq} was released; take a new one with next_frame()")
        return self._h

    def __getitem__(self, name):
        for i, (key, dtype, shape, strides) in enumerate(self._client._blocks):
            if key == name:
                return FieldView(self, key, lib.cuview_frame_data(self._alive(), i), dtype, shape, strides)
        raise KeyError(f"'{self._client.name}' publishes no field '{name}'; it has: {', '.join(self._client.fields)}")


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
