"""Held frames and their zero-copy field views: Frame, FieldView, and GroupFrame (one step of every
part of a group). Internal: use the `cuview` package."""
from . import _dlpack
from ._capi import lib
from ._errors import _UNSUPPORTED, CuviewError, _check, _dtype
from ._handle import _Handle



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

    def view(self, field, mode="mip", camera=None, size=(640, 360), colormap="viridis", range=None,
             opacity="ramp", level=None, max_brick=128):
        """A picture of volume field `field`, as the viewer's volume view draws it: a VolumeView
        whose `image` is a (height, width, 3) RGB array, for notebooks. size: (width, height) in
        pixels. mode "mip" (maximum-intensity projection), "emission" (emission–absorption, `opacity`
        "ramp", "peak", "flat" over `range`, or "auto": the value most cells hold clear and rarer ones
        opaque, as shells at five evenly spaced values, as cuview-gui's default) or "isosurface" (at `level`, default the middle of
        `range`, shaded). range: (lo, hi) mapped onto `colormap` (None: the field's smallest and
        largest value). camera: {"azimuth": degrees about y, "elevation": degrees, "zoom": 1 makes
        the volume's diagonal span the picture's shorter side, so the whole box fits at any angle (2:
        twice as large), "pan": (x, y) the picture's centre moved by that many cells, right and
        down}; (0, 0) looks along +z with x right and y down, as a z-plane lies. The VolumeView's
        `values` is a (height, width) float32 array of what each pixel shows: "mip" the largest value
        on its ray (the field's units), "emission" the opacity reached (0 to 1), "isosurface" the
        distance from where the ray enters the box to the surface (in cells of the brick: times
        `stride` for the field's); NaN where the ray misses the box (or the surface). A vector
        field shows its magnitude. The field is taken every k-th cell (`stride`) so that no axis
        exceeds max_brick, then rendered on this host's CPU."""
        from ._volume import render
        return render(self[field], mode, camera, size, colormap, range, opacity, level, max_brick)

    def grid(self, field=None):
        """The cuview.Grid field `field` (None: the first field) lies on: its shape, origin,
        spacing, units and axes, slowest axis first (Client.grid)."""
        return self._client.grid(field)

    def _alive(self):
        if not self._h or (self._held is not None and not self._held.h):
            raise CuviewError("bad_value", f"frame {self.seq} was released; take a new one with next_frame()")
        return self._h

    def __getitem__(self, name):
        for i, (key, dtype, shape, strides) in enumerate(self._client._blocks):
            if key == name:
                data = lib.cuview_frame_data(self._alive(), i)
                if not data and not self._client.remote:
                    raise CuviewError("bad_value", f"frame {self.seq} of '{self._client.name}' does not hold '{key}': no "
                                      "reader read it when it was published; read it (read_fields) and take the "
                                      "next frame")
                if not data:
                    raise CuviewError(_UNSUPPORTED, f"'{key}' of '{self._client.name}' does not come through the "
                                      f"gateway {self._client.remote}: a remote frame holds the float32 grid fields")
                return FieldView(self, key, data, dtype, shape, strides)
        raise KeyError(f"'{self._client.name}' publishes no field '{name}'; it has: {', '.join(self._client.fields)}")


class FieldView:
    """A read-only, zero-copy view of one field of a held frame."""

    def __init__(self, frame, name, data, dtype, shape, strides):
        self.frame, self.name, self.data = frame, name, data
        self.dtype, self.shape, self.strides = dtype, shape, strides

    @property
    def grid(self):
        """The cuview.Grid the field lies on (Frame.grid): where its cells are in the program's
        space."""
        return self.frame.grid(self.name)

    def __repr__(self):
        where = f"cuda:{self.frame.device}" if self.frame.device >= 0 else "host"
        return f"<cuview field {self.name} {self.dtype} {self.shape} on {where}, frame {self.frame.seq}>"

    def _interface(self):
        self.frame._alive()
        if self.dtype == "bfloat16":
            raise TypeError(f"field '{self.name}' is bfloat16, which NumPy and CuPy have no dtype for: read it "
                            f"through DLPack, torch.from_dlpack(frame['{self.name}'])")
        return {
            "shape": self.shape,
            "typestr": _dtype(self.dtype)[1],
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
        #: the global grid, slowest axis first: (height, width) or (depth, height, width)
        self.shape = group.shape
        self._fields = [f["name"] for f in group.leader.description["fields"]]
        #: per part, its frame and its block's offset in the global grid (slowest axis first)
        self.parts = [(Frame(group.parts[k], raw[k], self._held), group.parts_info[k]["offset"]) for k in range(count)]
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
            raise CuviewError("bad_value", f"the frames of step {self.step} of '{self.name}' were released; take new ones "
                              "with next_frame()")
        return self._held.h

    def verify(self):
        """Raises CuviewError("bad_value") naming the first part whose frame is not intact."""
        _check(lib.cuview_group_frame_verify(self._alive()))

    def assemble(self, field, host=False):
        """Field `field` over the whole global grid, each part's block at its offset: a NumPy array on
        the host backend (or with host=True); on CUDA a CuPy array on part 0's GPU, filled from each
        part's GPU (peer copies). Shape: the global grid's (`shape`), then components for a vector."""
        h = self._alive()
        if field not in self._fields:
            raise KeyError(f"'{self.name}' publishes no grid field '{field}'; it has: {', '.join(self._fields)}")
        index = self._fields.index(field)
        _, dtype, shape, _ = self.parts[0][0]._client._blocks[index]
        # A run of parts decomposes its first grid; one publisher's field of another grid is whole.
        full = tuple(shape) if len(self.parts) == 1 else tuple(self.shape) + tuple(shape[len(self.shape):])
        typestr = _dtype(dtype)[1]
        if self.device < 0 or host:
            import numpy as np
            out = np.empty(full, dtype=np.dtype(typestr))
            _check(lib.cuview_group_frame_copy_field(h, index, out.ctypes.data, out.nbytes))
            return out
        try:
            import cupy
        except ImportError as e:
            raise ImportError(f"assemble('{field}') of the CUDA run '{self.name}' makes a CuPy array on GPU "
                              f"{self.device}, and CuPy is not installed: install it (cupy-cuda12x), or pass "
                              "host=True for a NumPy copy") from e
        with cupy.cuda.Device(self.device):
            out = cupy.empty(full, dtype=typestr)
        # Each part's block by the copy engine (peer copies between GPUs), done when the call returns.
        _check(lib.cuview_group_frame_copy_field_to_device(h, index, out.data.ptr, out.nbytes))
        return out
