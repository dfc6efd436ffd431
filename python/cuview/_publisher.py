"""Publishing from Python: cuview.Publisher, a thin layer over the C API of libcuview-publisher.so
(cuview/publisher.h; docs/sdk.md). Arrays are read where they are (NumPy on the host, CuPy, PyTorch
or JAX on the GPU): a frame's copy into the ring runs on the GPU, on the caller's stream, with no
round trip through host memory."""
import os
from ctypes import POINTER, byref, c_char_p, c_double, c_int, c_int64, c_size_t, c_uint32, c_uint64, c_void_p
from pathlib import Path

from . import _capi
from ._arrays import borrow, layout
from ._errors import CuviewError, _check, _dtype
from ._grids import Grid


def _candidates():
    """Where libcuview-publisher.so is looked for when CUVIEW_PUBLISHER_LIBRARY (a file or a folder,
    as CUVIEW_LIBRARY) is unset."""
    if os.path.dirname(_capi.lib._name):  # next to the libcuview.so this package loaded (build/lib, PREFIX/lib)
        beside = Path(_capi.lib._name).parent
        yield beside / "libcuview-publisher.so.0"
        yield beside / "libcuview-publisher.so"
    yield Path("libcuview-publisher.so.0")  # the dynamic linker's search path


_lib = None


def _publisher_lib():
    global _lib
    if _lib is None:
        lib = _capi.load_library(_candidates(), "libcuview-publisher.so", "CUVIEW_PUBLISHER_LIBRARY")
        p = c_void_p
        for name, restype, *args in [
            ("cuview_publisher_abi", c_int),
            ("cuview_publisher_create", c_int, c_char_p, c_char_p, c_int, c_char_p, c_char_p, POINTER(p)),
            ("cuview_publisher_add_field", c_int, p, c_char_p, c_char_p, c_uint32, POINTER(c_uint64), c_uint32, p,
             c_int, c_char_p),
            ("cuview_publisher_add_grid", c_int, p, c_char_p, c_uint32, POINTER(c_uint64), POINTER(c_double),
             POINTER(c_double), c_char_p),
            ("cuview_publisher_add_field_on", c_int, p, c_char_p, c_char_p, c_char_p, c_uint32, p,
             POINTER(c_int64), c_int, c_char_p),
            ("cuview_publisher_add_param", c_int, p, c_char_p, c_double, c_double, c_double, c_int, c_char_p),
            ("cuview_publisher_add_preset", c_int, p, c_char_p, c_char_p),
            ("cuview_publisher_add_input", c_int, p, c_char_p, c_char_p, c_char_p),
            ("cuview_publisher_use_preset", c_int, p, c_char_p),
            ("cuview_publisher_start", c_int, p),
            ("cuview_publisher_publish_data", c_int, p, c_uint64, c_double, c_size_t, POINTER(p), p, POINTER(c_int)),
            ("cuview_publisher_record_step", c_int, p, c_uint64, c_double),
            ("cuview_publisher_frame_due", c_int, p),
            ("cuview_publisher_poll", c_int, p),
            ("cuview_publisher_changed_count", c_size_t, p),
            ("cuview_publisher_changed", c_int, p, c_size_t, POINTER(c_char_p), POINTER(c_double)),
            ("cuview_publisher_param", c_int, p, c_char_p, POINTER(c_double)),
            ("cuview_publisher_reset_requested", c_int, p),
            ("cuview_publisher_shutdown_requested", c_int, p),
            ("cuview_publisher_stroke_count", c_size_t, p),
            ("cuview_publisher_stroke", c_int, p, c_size_t, POINTER(c_char_p), POINTER(c_double), POINTER(c_double),
             POINTER(c_double), POINTER(c_double), POINTER(c_int)),
            ("cuview_publisher_steps_allowed", c_uint64, p, c_uint64),
            ("cuview_publisher_paused", c_int, p),
            ("cuview_publisher_wait", c_int, p, c_int),
            ("cuview_publisher_checkpoint_enable", c_int, p, c_char_p, c_double),
            ("cuview_publisher_checkpoint_count", c_size_t, p),
            ("cuview_publisher_checkpoint_request", c_int, p, c_size_t, POINTER(c_uint64), POINTER(c_char_p)),
            ("cuview_publisher_checkpoint_written", c_int, p, c_uint64, c_char_p, c_uint64, c_double, c_uint64),
            ("cuview_publisher_checkpoint_failed", c_int, p, c_uint64, c_char_p),
            ("cuview_publisher_backend", c_char_p, p),
            ("cuview_publisher_device", c_char_p, p),
            ("cuview_publisher_close", None, p, c_char_p),
        ]:
            f = getattr(lib, name)
            f.restype, f.argtypes = restype, list(args)
        _lib = lib
    return _lib


def _text(s):
    return (s or "").encode()


def _stream_handle(stream):
    """A cudaStream_t as an int from an int, a CuPy stream (.ptr), a PyTorch one (.cuda_stream) or None."""
    if stream is None:
        return None
    for attr in ("ptr", "cuda_stream"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    return int(stream)


class Steering:
    """What viewers asked for since the last poll(), as plain values: `params` (every parameter's
    value in effect when any changed, else {}), `reset`, `strokes` (dicts: input, x, y, z (None on a
    plane), radius, value), `checkpoints` ((ticket, path) to answer), `shutdown`."""

    __slots__ = ("params", "reset", "strokes", "checkpoints", "shutdown")

    def __init__(self, params, reset, strokes, checkpoints, shutdown):
        self.params, self.reset, self.strokes = params, reset, strokes
        self.checkpoints, self.shutdown = checkpoints, shutdown

    def __repr__(self):
        return (f"Steering(params={self.params}, reset={self.reset}, strokes={self.strokes}, "
                f"checkpoints={self.checkpoints}, shutdown={self.shutdown})")


class Publisher:
    """Makes a running program's arrays visible to cuview viewers (cuview-gui, cuview-ctl, Python),
    who attach to it by `name` as to cuview-compute:

        with cuview.Publisher("gs", fields={"u": u, "v": v}, params={"F": (0.037, 0, 0.1)}) as pub:
            for step in itertools.count():
                F = pub.poll().params.get("F", F)   # steering, applied where you choose
                u, v = advance(u, v, F)
                pub.publish(step, step * dt, {"u": u, "v": v})   # never waits for a viewer

    fields: name -> an array (its shape, dtype and layout declare the field) or a dict with `shape`
    (1 to 3 axes, slowest first), `dtype` ("float32", "float64", "float16", "int32", "int64",
    "uint8", "bfloat16": PyTorch's), and optionally `components` (values per cell, a last axis of
    the arrays), `strides` (bytes per axis of `shape`, as NumPy's; None: C order), `grid` (the name
    of one of `grid`'s) and `help`.
    An array whose rows are contiguous but not its whole — the interior of an array with ghost
    cells, `a[1:-1, 1:-1, 1:-1]` (NumPy, CuPy, PyTorch) — is read in place: the publisher copies
    its cells into the frame itself (on the GPU for a GPU array), and every array published for
    the field must have the declared layout. A last axis that is not contiguous (`a[:, ::2]`, a
    Fortran-ordered array) is refused. grid: a cuview.Grid giving the cells' coordinates (origin,
    spacing, units; slowest axis first), which viewers show and draw the grid's aspect ratio by;
    None: cell indices. Fields may lie on several grids — a volume, a surface, a probe line: pass
    a list of named Grids, `grid=[cuview.Grid(name="volume", spacing=...), cuview.Grid(name="surface")]`;
    a field lies on the grid its dict names, else on the first of its shape, else on the first
    given without a shape. With no grid given, fields of several shapes lie on grids "grid",
    "grid2", ... in cell indices. The first grid is the run's own (a run of parts decomposes it).
    params: name -> (default, min, max), or a dict with value, min, max, integer, help.
    presets: name -> {param: value}; inputs: names of masks viewers draw into (strokes in poll()).
    backend "auto" | "cuda" | "host"; device: the GPU (default: your current one); sharing "auto" |
    "legacy" | "vmm" | "pool"; fps, max_cost (the share of the run publishing may take: 0.01 = 1 %),
    slots, title, paused. log: the level of the library's own lines, which go to stderr, never
    stdout: "trace", "debug", "info" (the default), "warn", "error" or "off"; the environment
    variable CUVIEW_LOG wins over it. No call changes your current GPU."""

    def __init__(self, name, fields, params=None, presets=None, inputs=(), backend="auto", device=None,
                 sharing="auto", fps=60, max_cost=0.01, slots=3, title=None, paused=False, preset=None, log=None,
                 grid=None):
        lib = _publisher_lib()
        self._lib, self.name, self._h, self._kept, self._checked = lib, name, None, None, False
        # api=python: errors name this class's arguments and methods, not the C calls beneath.
        options = f"api=python fps={fps} max_cost={max_cost} slots={slots} paused={int(bool(paused))}"
        if log is not None:
            options += f" log={log}"
        if title:
            options += ' title="' + str(title).replace('"', "'") + '"'
        h = c_void_p()
        _check(lib.cuview_publisher_create(name.encode(), _text(backend), -1 if device is None else int(device),
                                           _text(sharing), options.encode(), byref(h)))
        self._h = h
        self.backend = lib.cuview_publisher_backend(h).decode()
        try:
            self._fields = []  # (name, dtype, shape of the arrays, their layout: layout()'s strides)
            self._grids = []  # the Grids declared, once they are
            self._cells = None  # the grid's shape when none is declared: the first field's
            self._declare_fields(fields, grid)
            self._param_list = list(params or {})
            for param, spec in (params or {}).items():
                if isinstance(spec, dict):
                    s = {"min": 0, "max": 0, "integer": False, "help": "", **spec}
                    value, lo, hi, integer, help_ = s["value"], s["min"], s["max"], s["integer"], s["help"]
                else:
                    (value, lo, hi), integer, help_ = spec, False, ""
                _check(lib.cuview_publisher_add_param(h, param.encode(), value, lo, hi, int(bool(integer)),
                                                      _text(help_)))
            for preset_name, values in (presets or {}).items():
                text = " ".join(f"{k}={float(v)!r}" for k, v in values.items())
                _check(lib.cuview_publisher_add_preset(h, preset_name.encode(), text.encode()))
            for input_name in inputs:
                _check(lib.cuview_publisher_add_input(h, input_name.encode(), b"mask", b""))
            if preset is not None:
                _check(lib.cuview_publisher_use_preset(h, preset.encode()))
            _check(lib.cuview_publisher_start(h))
        except BaseException:
            self.close("failed to start")
            raise
        self._pointers = (c_void_p * len(self._fields))()
        self._kept = None

    def _field_layout(self, field, spec):
        """(dtype, shape of the arrays, components, their layout, help, the grid named or None) of
        field `field`."""
        wanted = None
        if isinstance(spec, dict):
            shape, dtype = tuple(int(n) for n in spec["shape"]), str(spec.get("dtype", "float32"))
            components, help_ = int(spec.get("components", 1)), spec.get("help", "")
            wanted = None if spec.get("grid") is None else str(spec["grid"])
            strides = spec.get("strides")
            size = _dtype(dtype)[0] if strides is not None else 1
            strides = layout(shape, None if strides is None else tuple(int(n) for n in strides), size)
        else:
            b = borrow(spec)
            shape, dtype, components, strides, help_ = b.shape, b.dtype, 1, b.strides, ""
        if components > 1 and (not shape or shape[-1] != components):
            raise CuviewError("bad_value", f"field '{field}' of '{self.name}': {components} components need a "
                                           f"last axis of {components}, but the shape is {shape}")
        return dtype, shape, components, strides, help_, wanted

    def _declare_fields(self, fields, grid):
        """Declares the grids and each field on its own: the grid its spec names, else the first
        of its shape, else the first given without a shape (which takes the field's). Fields of
        one shape, contiguous, with no grid given, lie on the grid their shape gives (cell
        indices); fields of several shapes, with none given, on grids "grid", "grid2", ... of
        their shapes."""
        specs = [(field, *self._field_layout(field, spec)) for field, spec in fields.items()]
        if grid is None:
            grids = []
        elif isinstance(grid, Grid):
            grids = [grid]
        elif isinstance(grid, (list, tuple)) and grid and all(isinstance(g, Grid) for g in grid):
            grids = list(grid)
        else:
            raise CuviewError("bad_value", f"cuview.Publisher '{self.name}': grid={grid!r} is not a cuview.Grid or a "
                                           "list of them; pass cuview.Grid(origin=..., spacing=..., units=...), or "
                                           "one per grid with a name each")
        cells = [tuple(shape[:-1] if components > 1 else shape) for _, _, shape, components, *_ in specs]
        if not grids and (len(set(cells)) > 1 or any(s[4] is not None for s in specs)
                          or any(s[-1] is not None for s in specs)):
            grids = self._grids_of_shapes(specs, cells)
        if not grids:  # contiguous fields of one shape: the grid their shape gives
            for spec in specs:
                self._declare_field(*spec[:-1], None)
            return
        shapes = {id(g): g.shape for g in grids}
        placed = []
        for (field, *_, wanted), c in zip(specs, cells):
            if wanted is not None:
                g = next((g for g in grids if g.name == wanted), None)
                if g is None:
                    raise CuviewError("unknown_field", f"field '{field}' of '{self.name}' lies on grid '{wanted}', "
                                                       "which is not given; grids: "
                                                       + ", ".join(g.name for g in grids))
            else:
                g = next((g for g in grids if shapes[id(g)] == c), None) or \
                    next((g for g in grids if shapes[id(g)] is None), None)
                if g is None:
                    raise CuviewError("bad_value", f"field '{field}' of '{self.name}' is {c} cells, and no grid "
                                                   f"given has that shape ({', '.join(f'{g.name} {g.shape}' for g in grids)}); "
                                                   f"add cuview.Grid(name=..., shape={c}) to grid=[...]")
            if shapes[id(g)] is None:
                shapes[id(g)] = c
            elif shapes[id(g)] != c:
                raise CuviewError("bad_value", f"field '{field}' of '{self.name}' is {c} cells but grid '{g.name}' is "
                                               f"{shapes[id(g)]}; a field of another shape lies on a grid of its own: "
                                               "add one to grid=[...]")
            placed.append(g)
        self._grids = []
        for g in grids:
            if shapes[id(g)] is None:
                raise CuviewError("bad_value", f"grid '{g.name}' of '{self.name}' has no shape, and no field lies on "
                                               "it; give it shape=... or leave it out")
            self._grids.append(self._declare_grid(g, shapes[id(g)]))
        for spec, g in zip(specs, placed):
            self._declare_field(*spec[:-1], self._grids[grids.index(g)])

    @staticmethod
    def _grids_of_shapes(specs, cells):
        """Grids for fields declared with none: one per shape ("grid", "grid2", ...), or the ones
        their specs name."""
        grids, seen = [], {}
        for (*_, wanted), c in zip(specs, cells):
            key = wanted if wanted is not None else c
            if key not in seen:
                seen[key] = Grid(name=wanted if wanted is not None else
                                 "grid" if not grids else f"grid{len(grids) + 1}", shape=c)
                grids.append(seen[key])
        return grids

    def _declare_grid(self, given, shape):
        if given.axes is not None and tuple(given.axes) != tuple("xyzw"[len(shape) - 1 - k] for k in range(len(shape))):
            raise CuviewError("bad_value", f"grid '{given.name}' of '{self.name}': a publisher cannot name its axes "
                                           f"({', '.join(given.axes)}) in this version; leave axes out")
        try:
            g = Grid(given.origin, given.spacing, given.units, given.name)._fit(shape, f"grid '{given.name}' of "
                                                                                   f"'{self.name}'")
        except ValueError as e:
            raise CuviewError("bad_value", str(e)) from None
        n = len(g.shape)
        _check(self._lib.cuview_publisher_add_grid(self._h, g.name.encode(), n, (c_uint64 * max(n, 1))(*g.shape),
                                                   (c_double * max(n, 1))(*g.origin),
                                                   (c_double * max(n, 1))(*g.spacing), g.units.encode()))
        return g

    def _declare_field(self, field, dtype, shape, components, strides, help_, grid):
        cells = shape[:-1] if components > 1 else shape
        memory = 1 if self.backend == "cuda" else 0
        if grid is None:  # a contiguous field on the grid its shape gives
            dims = (c_uint64 * max(len(cells), 1))(*cells)
            _check(self._lib.cuview_publisher_add_field(self._h, field.encode(), dtype.encode(), len(cells), dims,
                                                        components, None, memory, _text(help_)))
            self._fields.append((field, dtype, shape, strides))
            self._cells = self._cells or tuple(cells)
            return
        grid_strides = strides
        if strides is not None and components > 1:
            size = _dtype(dtype)[0]
            if strides[-1] != size:
                raise CuviewError("bad_value", f"field '{field}' of '{self.name}': the {components} components of a "
                                               f"cell are {strides[-1]} bytes apart, not one {dtype} ({size} bytes); "
                                               "pass an array whose last axis is contiguous")
            grid_strides = strides[:-1]
        c_strides = None if grid_strides is None else (c_int64 * len(grid_strides))(*grid_strides)
        _check(self._lib.cuview_publisher_add_field_on(self._h, grid.name.encode(), field.encode(),
                                                       dtype.encode(), components, None, c_strides, memory,
                                                       _text(help_)))
        self._fields.append((field, dtype, shape, strides))

    @property
    def grid(self):
        """The cuview.Grid of the first field (the run's first grid): the one given (its shape the
        fields'), else cell indices (origin 0, spacing 1). `grids` lists them all."""
        if self._grids:
            return self._grids[0]
        return None if self._cells is None else Grid()._fit(self._cells, "")

    @property
    def grids(self):
        """Every grid the fields lie on, the first first: {name: cuview.Grid}."""
        grids = self._grids or ([] if self._cells is None else [Grid()._fit(self._cells, "")])
        return {g.name: g for g in grids}

    def __enter__(self):
        return self

    def __exit__(self, kind, error, tb):
        self.close("shutdown" if kind is None else f"the program failed: {kind.__name__}: {error}")

    def close(self, reason="shutdown"):
        """Tells viewers the publisher is going (and why), waits for the copies queued, frees it."""
        h, self._h = getattr(self, "_h", None), None
        if h:
            self._lib.cuview_publisher_close(h, reason.encode())
        self._kept = None

    def __del__(self):
        self.close()

    def _handle(self):
        if not self._h:
            raise CuviewError("bad_value", f"publisher '{self.name}' is closed; make a new cuview.Publisher")
        return self._h

    def publish(self, step, time=0.0, arrays=None, stream=None):
        """Publishes `arrays` (name -> array, or a sequence in the fields' order) as frame `step` at
        simulated time `time` when a viewer reads, a frame is due (fps, max_cost) and a ring slot is
        free; otherwise records the step. Never waits for a viewer. Device arrays are copied on the
        GPU, on `stream` (an int cudaStream_t, a CuPy or PyTorch stream): by default the array's own
        (`__cuda_array_interface__`'s), else the legacy default stream, which runs after the work of
        every blocking stream; host arrays are copied before it returns. Returns whether a frame
        was published."""
        h = self._handle()
        if self._checked and not self._lib.cuview_publisher_frame_due(h):
            # No frame now (nobody reads, or none is due): the step is recorded and the arrays are
            # not even looked at — they were checked at the first call and are at every frame.
            _check(self._lib.cuview_publisher_record_step(h, int(step), float(time)))
            return False
        chosen, kept = self._prepare(arrays, stream)
        published = c_int(0)
        _check(self._lib.cuview_publisher_publish_data(h, int(step), float(time), len(self._fields), self._pointers,
                                                       chosen or None, byref(published)))
        # The copies run on the GPU after this returns: what the arrays came with (a DLPack capsule)
        # stays alive until the next publish.
        self._kept, self._checked = kept, True
        return bool(published.value)

    def _prepare(self, arrays, stream):
        """Checks `arrays` against the fields and puts their pointers in self._pointers: the
        Python half of a publish that writes a frame (bench/python_publisher.py times it alone).
        Returns the stream to copy on and what keeps the arrays' memory alive."""
        names = [f[0] for f in self._fields]
        if arrays is None:
            raise CuviewError("bad_value", f"publish of '{self.name}': no arrays; pass one per field "
                                           f"({', '.join(names)})")
        if isinstance(arrays, dict):
            missing = [f for f in names if f not in arrays]
            extra = [k for k in arrays if k not in names]
            if missing or extra:
                raise CuviewError("bad_value", f"publish of '{self.name}': " +
                                  (f"no array for {', '.join(missing)}" if missing else "") +
                                  ("; " if missing and extra else "") +
                                  (f"{', '.join(extra)} is not a field" if extra else "") +
                                  f"; the fields are {', '.join(names)}")
            arrays = [arrays[f] for f in names]
        elif len(arrays) != len(self._fields):
            raise CuviewError("bad_value", f"publish of '{self.name}': {len(arrays)} arrays for "
                                           f"{len(self._fields)} fields; pass one per field, in their order")
        wanted = _stream_handle(stream)
        chosen = wanted
        kept = []
        for i, (array, (field, dtype, shape, strides)) in enumerate(zip(arrays, self._fields)):
            b = borrow(array, wanted)
            what = f"publish of '{self.name}', field '{field}'"
            if b.dtype != dtype or tuple(b.shape) != tuple(shape):
                raise CuviewError("bad_value", f"{what}: the array is {b.dtype} {tuple(b.shape)}, but the field "
                                               f"was declared {dtype} {tuple(shape)}; pass an array of that dtype "
                                               "and shape")
            if b.strides != strides and strides is None:
                raise CuviewError("bad_value", f"{what}: the array is not contiguous in C order (strides {b.strides} "
                                               "bytes), but the field was declared contiguous; pass "
                                               "ascontiguousarray(a) (or a.contiguous() in PyTorch), or declare the "
                                               "field with an array of this layout (fields={'name': a})")
            if b.strides != strides:
                raise CuviewError("bad_value", f"{what}: the array's strides are "
                                               f"{b.strides or 'C order'} (bytes), but the field was declared with "
                                               f"{strides}; pass an array of the declared layout (the same section "
                                               "of an array of the same shape)")
            if b.device and self.backend != "cuda":
                raise CuviewError("bad_value", f"{what}: the array is in GPU memory, but '{self.name}' runs on "
                                               "the host backend, which reads host memory; pass a NumPy array, or "
                                               "create the publisher with backend='cuda'")
            if chosen is None and b.stream is not None:
                chosen = 0 if b.stream == 1 else int(b.stream)  # CUDA array interface: 1 = legacy default
            self._pointers[i] = b.pointer
            kept.append(b.keep)
        return chosen, kept

    def record_step(self, step, time=0.0):
        """Records the step for `cuview-ctl status` without publishing."""
        _check(self._lib.cuview_publisher_record_step(self._handle(), int(step), float(time)))

    def poll(self):
        """What viewers asked for since the last poll, as a Steering of plain values."""
        lib, h = self._lib, self._handle()
        _check(lib.cuview_publisher_poll(h))
        name, value = c_char_p(), c_double()
        params = {}
        for i in range(lib.cuview_publisher_changed_count(h)):
            _check(lib.cuview_publisher_changed(h, i, byref(name), byref(value)))
            params[name.value.decode()] = value.value
        strokes = []
        x, y, z, r, v = c_double(), c_double(), c_double(), c_double(), c_int()
        for i in range(lib.cuview_publisher_stroke_count(h)):
            _check(lib.cuview_publisher_stroke(h, i, byref(name), byref(x), byref(y), byref(z), byref(r), byref(v)))
            strokes.append({"input": name.value.decode(), "x": x.value, "y": y.value,
                            "z": None if z.value < 0 else z.value, "radius": r.value, "value": v.value})
        checkpoints = []
        ticket = c_uint64()
        for i in range(lib.cuview_publisher_checkpoint_count(h)):
            _check(lib.cuview_publisher_checkpoint_request(h, i, byref(ticket), byref(name)))
            checkpoints.append((ticket.value, name.value.decode()))
        return Steering(params, bool(lib.cuview_publisher_reset_requested(h)), strokes, checkpoints,
                        bool(lib.cuview_publisher_shutdown_requested(h)))

    @property
    def params(self):
        """Every parameter's value in effect."""
        value = c_double()
        out = {}
        for name in self._param_list:
            _check(self._lib.cuview_publisher_param(self._handle(), name.encode(), byref(value)))
            out[name] = value.value
        return out

    def steps_allowed(self, wanted):
        """How many of `wanted` steps to take now: all while running; while paused only those
        `cuview-ctl step` allowed (often 0: then wait())."""
        return int(self._lib.cuview_publisher_steps_allowed(self._handle(), int(wanted)))

    @property
    def paused(self):
        return bool(self._lib.cuview_publisher_paused(self._handle()))

    def wait(self, timeout=0.05):
        """Blocks until a viewer sends a request or `timeout` seconds pass."""
        _check(self._lib.cuview_publisher_wait(self._handle(), int(timeout * 1000)))

    def enable_checkpoints(self, directory="", every=0.0):
        """Viewers may ask for checkpoints (they arrive in poll().checkpoints); answer each."""
        _check(self._lib.cuview_publisher_checkpoint_enable(self._handle(), _text(directory), float(every)))

    def checkpoint_written(self, ticket, path, step, time=0.0, nbytes=0):
        _check(self._lib.cuview_publisher_checkpoint_written(self._handle(), int(ticket), _text(path), int(step),
                                                             float(time), int(nbytes)))

    def checkpoint_failed(self, ticket, error):
        _check(self._lib.cuview_publisher_checkpoint_failed(self._handle(), int(ticket), _text(error)))

    @property
    def device(self):
        """The device in words."""
        return self._lib.cuview_publisher_device(self._handle()).decode()
