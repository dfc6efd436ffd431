"""ctypes bindings of libcuview.so (cuview/client.h). Internal: use the `cuview` package."""
import ctypes
import ctypes.util
import os
from pathlib import Path

c_void_p, c_char_p, c_int, c_size_t = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t
c_uint32, c_uint64, c_double, c_long = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_double, ctypes.c_long

OK, NO_FRAME = 0, 100


class Block(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("set", c_char_p),
        ("dtype", c_char_p),
        ("components", c_uint32),
        ("ndim", c_uint32),
        ("shape", ctypes.POINTER(c_uint64)),
        ("strides", ctypes.POINTER(c_uint64)),
        ("offset", c_uint64),
        ("bytes", c_uint64),
    ]


class View(ctypes.Structure):
    _fields_ = [
        ("seq", c_uint64),
        ("step", c_uint64),
        ("sim_time", c_double),
        ("field", c_char_p),
        ("encoding", c_char_p),
        ("error_bound", c_double),
        ("lo", ctypes.c_float),
        ("hi", ctypes.c_float),
        ("view_w", c_uint32),
        ("view_h", c_uint32),
        ("center_x", c_double),
        ("center_y", c_double),
        ("pixels_per_cell", c_double),
        ("values", ctypes.POINTER(ctypes.c_float)),
        ("count", c_size_t),
    ]


class Region(ctypes.Structure):
    _fields_ = [
        ("seq", c_uint64),
        ("step", c_uint64),
        ("sim_time", c_double),
        ("x", c_uint32),
        ("y", c_uint32),
        ("w", c_uint32),
        ("h", c_uint32),
        ("components", c_uint32),
        ("values", ctypes.POINTER(ctypes.c_float)),
        ("count", c_size_t),
    ]


class DtypeInfo(ctypes.Structure):
    _fields_ = [("bytes", c_size_t), ("typestr", c_char_p), ("dlpack_code", ctypes.c_uint8),
                ("dlpack_bits", ctypes.c_uint8)]


class PartInfo(ctypes.Structure):
    _fields_ = [
        ("index", c_uint32),
        ("count", c_uint32),
        ("ndim", c_uint32),
        ("offset", ctypes.POINTER(c_uint32)),
        ("dims", ctypes.POINTER(c_uint32)),
        ("global_dims", ctypes.POINTER(c_uint32)),
        ("rank", ctypes.c_int32),
        ("pid", ctypes.c_int32),
        ("host", c_char_p),
        ("device", c_char_p),
        ("group", c_char_p),
    ]


class PictureInfo(ctypes.Structure):
    _fields_ = [("seq", ctypes.c_uint64), ("step", ctypes.c_uint64), ("sim_time", ctypes.c_double),
                ("cast_ms", ctypes.c_double), ("every", c_uint32)]


def _candidates():
    here = Path(__file__).resolve().parent
    yield here.parents[2] / "libcuview.so.0"  # installed: PREFIX/lib/python3/dist-packages/cuview
    yield here.parents[2] / "libcuview.so"
    yield here.parents[1] / "build" / "lib" / "libcuview.so"  # the source tree's build/
    found = ctypes.util.find_library("cuview")
    if found:
        yield Path(found)


def named_library(variable, name):
    """The library the environment `variable` names — the library file itself, or a folder that
    holds `name`.0 or `name` — or None when it is unset. ImportError naming the path when nothing
    is there: a library set on purpose is never silently replaced by another."""
    value = os.environ.get(variable)
    if not value:
        return None
    path = Path(value).expanduser()
    if path.is_dir():
        for file in (path / (name + ".0"), path / name):
            if file.exists():
                return file
        raise ImportError(f"cuview: {variable}={value} is a folder without {name}.0 or {name}; set {variable} to "
                          f"the library file or the folder that holds it (such as build/lib), or unset it")
    if not path.exists():
        raise ImportError(f"cuview: {variable}={value} does not exist; set {variable} to the library file ({name}) "
                          "or the folder that holds it (such as build/lib), or unset it to search the usual places")
    return path


def load_library(candidates, name, variable):
    """The library the environment `variable` names (named_library), else the first of
    `candidates` (paths) that loads; ImportError naming every one tried and `variable`."""
    named = named_library(variable, name)
    if named is not None:
        try:
            return ctypes.CDLL(str(named))
        except OSError as e:
            raise ImportError(f"cuview: {variable}={os.environ[variable]} cannot be loaded ({e}); set it to "
                              f"cuview's {name} or the folder that holds it, or unset it") from None
    tried = []
    for path in candidates:
        tried.append(str(path))
        if path.is_absolute() and not path.exists():
            continue
        try:
            return ctypes.CDLL(str(path))
        except OSError as e:
            tried[-1] += f" ({e})"
    raise ImportError(
        f"cuview: cannot find {name} (looked at: " + ", ".join(tried) + "); build cuview "
        f"(scripts/build.sh), install it (cmake --install build --prefix PREFIX), or set {variable} "
        "to the library's path")


lib = load_library(_candidates(), "libcuview.so", "CUVIEW_LIBRARY")


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)


_proto("cuview_status_name", c_char_p, c_int)
_proto("cuview_last_error", c_char_p)
_proto("cuview_version", c_char_p)
_proto("cuview_attach", c_int, c_char_p, c_char_p, c_int, c_int, ctypes.POINTER(c_void_p))
_proto("cuview_detach", None, c_void_p)
_proto("cuview_backend", c_char_p, c_void_p)
_proto("cuview_sharing", c_char_p, c_void_p)
_proto("cuview_describe_json", c_char_p, c_void_p)
_proto("cuview_block_count", c_size_t, c_void_p)
_proto("cuview_block_info", c_int, c_void_p, c_size_t, ctypes.POINTER(Block))
_proto("cuview_block_index", c_long, c_void_p, c_char_p)
_proto("cuview_stats_json", c_int, c_void_p, ctypes.POINTER(c_char_p))
_proto("cuview_next_frame", c_int, c_void_p, c_int, ctypes.POINTER(c_void_p))
_proto("cuview_frame_release", None, c_void_p)
_proto("cuview_frame_seq", c_uint64, c_void_p)
_proto("cuview_frame_step", c_uint64, c_void_p)
_proto("cuview_frame_time", c_double, c_void_p)
_proto("cuview_frame_data", c_void_p, c_void_p, c_size_t)
_proto("cuview_frame_device", c_int, c_void_p)
_proto("cuview_frame_wait_on", c_int, c_void_p, c_void_p)
_proto("cuview_frame_synchronize", c_int, c_void_p)
_proto("cuview_frame_verify", c_int, c_void_p)
for _name in ("cuview_pause", "cuview_resume", "cuview_reset", "cuview_shutdown"):
    _proto(_name, c_int, c_void_p)
_proto("cuview_step", c_int, c_void_p, c_uint64)
_proto("cuview_set", c_int, c_void_p, c_char_p, c_double)
_proto("cuview_set_preset", c_int, c_void_p, c_char_p)
_proto("cuview_checkpoint", c_int, c_void_p, c_char_p, ctypes.c_int64, ctypes.POINTER(c_uint64), c_char_p, c_size_t)
_proto("cuview_draw", c_int, c_void_p, c_char_p, c_double, c_double, c_double, c_int)
_proto("cuview_draw_ball", c_int, c_void_p, c_char_p, c_double, c_double, c_double, c_double, c_int)
_proto("cuview_attach_remote", c_int, c_char_p, c_char_p, c_char_p, c_int, ctypes.POINTER(c_void_p))
_proto("cuview_remote", c_char_p, c_void_p)
_proto("cuview_watch", c_int, c_void_p, c_char_p, c_uint32, c_uint32, c_double, c_double, c_double, c_char_p)
_proto("cuview_next_view", c_int, c_void_p, c_int, ctypes.POINTER(View))
_proto("cuview_fetch", c_int, c_void_p, c_char_p, c_uint32, c_uint32, c_uint32, c_uint32, ctypes.POINTER(Region))
_proto("cuview_watch_plane", c_int, c_void_p, c_char_p, c_char_p, c_uint32, c_uint32, c_uint32, c_double, c_double,
       c_double, c_char_p)
_proto("cuview_fetch_box", c_int, c_void_p, c_char_p, c_uint32, c_uint32, c_uint32, c_uint32, c_uint32, c_uint32,
       ctypes.POINTER(Region), ctypes.POINTER(c_uint32), ctypes.POINTER(c_uint32))
_proto("cuview_list_json", c_int, c_char_p, c_int, ctypes.POINTER(c_char_p))
_proto("cuview_running_parts", c_uint32, c_char_p)
_proto("cuview_group_attach", c_int, c_char_p, c_char_p, c_int, c_int, ctypes.POINTER(c_void_p))
_proto("cuview_group_attach_remote", c_int, c_char_p, c_char_p, ctypes.POINTER(c_char_p), ctypes.c_size_t, c_int,
       ctypes.POINTER(c_void_p))
_proto("cuview_group_watch", c_int, c_void_p, c_char_p, c_uint32, c_uint32, c_double, c_double, c_double, c_char_p)
_proto("cuview_group_watch_plane", c_int, c_void_p, c_char_p, c_char_p, c_uint32, c_uint32, c_uint32, c_double,
       c_double, c_double, c_char_p)
_proto("cuview_group_next_view", c_int, c_void_p, c_int, ctypes.POINTER(View))
_proto("cuview_group_render", c_int, c_void_p, c_char_p, c_char_p, ctypes.c_double, ctypes.c_double, ctypes.c_double,
       ctypes.c_double, ctypes.c_double, c_char_p, ctypes.c_float, ctypes.c_float, c_char_p, ctypes.c_float, c_uint32,
       c_uint32, c_void_p, c_void_p, ctypes.POINTER(PictureInfo))
_proto("cuview_group_detach", None, c_void_p)
_proto("cuview_group_decomposed", c_int, c_void_p)
_proto("cuview_group_parts", c_size_t, c_void_p)
_proto("cuview_group_part_info", c_int, c_void_p, c_size_t, ctypes.POINTER(PartInfo))
_proto("cuview_group_part", c_void_p, c_void_p, c_size_t)
_proto("cuview_group_leader", c_void_p, c_void_p)
_proto("cuview_group_gone_reason", c_char_p, c_void_p)
_proto("cuview_group_next", c_int, c_void_p, c_int, ctypes.POINTER(c_void_p))
_proto("cuview_group_read_fields", c_int, c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t)
_proto("cuview_group_frame_release", None, c_void_p)
_proto("cuview_group_frame_step", c_uint64, c_void_p)
_proto("cuview_group_frame_parts", c_size_t, c_void_p)
_proto("cuview_group_frame_part", c_void_p, c_void_p, c_size_t)
_proto("cuview_group_frame_field_bytes", c_size_t, c_void_p, c_size_t)
_proto("cuview_group_frame_copy_field", c_int, c_void_p, c_size_t, c_void_p, c_size_t)
_proto("cuview_group_frame_copy_field_to_device", c_int, c_void_p, c_size_t, c_void_p, c_size_t)
_proto("cuview_dtype", c_int, c_char_p, ctypes.POINTER(DtypeInfo))
_proto("cuview_view_cell", c_int, ctypes.POINTER(View), c_uint32, c_uint32, c_uint32, c_uint32,
       ctypes.POINTER(c_uint32), ctypes.POINTER(c_uint32))
_proto("cuview_group_frame_verify", c_int, c_void_p)
