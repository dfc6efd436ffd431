"""A client of cuview protocol 7 (and remote protocol 1), written from docs/protocol.md and
docs/remote.md alone: ZeroMQ and MessagePack from Debian (python3-zmq, python3-msgpack), the
control block read through mmap and libatomic, no code of cuview's.

FROZEN. This file is what an outside program written against protocol 7 does and relies on. It
must never be edited to follow a later change of cuview: protocol 7 is stable (later versions
only add), so if a test of it fails, the change broke every version-7 client. Fix the change.
"""
import ctypes
import ctypes.util
import mmap
import os
import struct
import time

import msgpack
import numpy as np
import zmq

VERSION = 7
REMOTE_VERSION = 1

HELLO_KEYS = {"session", "protocol", "daemon_version", "name", "daemon_pid", "backend"}
DESCRIBE_KEYS = {"session", "backend", "device", "sim", "width", "height", "dims", "slots", "slot_bytes",
                 "trailer_offset", "fields", "particles", "params", "presets", "inputs", "part"}
FIELD_KEYS = {"name", "dtype", "components", "shape", "strides", "offset", "bytes", "help"}
PARAM_KEYS = {"name", "value", "min", "max", "integer", "help"}
HANDLES_KEYS = {"backend", "sharing", "control_shm", "lease", "data_shm", "device_pci", "allocation_bytes", "fds",
                "fd_socket", "fd_token", "fd_numbers", "slots"}
STATS_KEYS = {"session", "name", "backend", "sharing", "device", "sim", "width", "height", "dims", "slots", "paused",
              "step", "sim_time", "frames_published", "frames_skipped", "clients", "readers", "held_slots",
              "steps_per_second", "frames_per_second", "cost", "max_cost", "max_fps", "limited_by", "rss_kib",
              "uptime_s", "params", "checkpoint", "part"}
CHECKPOINT_KEYS = {"enabled", "dir", "every_s", "written", "answered", "path", "step", "sim_time", "unix_time",
                   "bytes", "stall_ms", "write_ms", "error", "error_ticket"}
FRAME_NOTICE_KEYS = {"session", "seq", "slot", "step", "sim_time", "stamp_ns"}
GATEWAY_HELLO_KEYS = {"protocol", "local_protocol", "gateway_version", "session", "host", "user", "encodings"}
LIST_ENTRY_KEYS = {"name", "sim", "backend", "device", "width", "height", "viewers"}
VIEW_KEYS = {"session", "seq", "step", "sim_time", "stamp_ns", "sent_ns", "field", "view_w", "view_h", "center_x",
             "center_y", "pixels_per_cell", "encoding", "compression", "lo", "hi", "error_bound", "raw_bytes",
             "link_bytes_per_s", "rect", "latest_step", "axis", "index", "through", "brick"}
FETCH_KEYS = {"session", "seq", "step", "sim_time", "x", "y", "w", "h", "components", "compression", "raw_bytes",
              "data", "z", "d"}

# The control block (docs/protocol.md, "The control block").
MAGIC = 0x31424B4C43574556
SLOTS_AT, SLOT_BYTES = 104, 40
LEASES_AT, LEASE_BYTES = 744, 80
CONTROL_BYTES = 6192


class ProtocolError(Exception):
    """A reply with ok: false: .code and .message as the daemon sent them."""

    def __init__(self, code, message):
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


def expect_keys(what, got, keys):
    if set(got) != keys:
        raise AssertionError(f"{what}: keys {sorted(got)}, protocol 7 defines {sorted(keys)} "
                             f"(missing {sorted(keys - set(got))}, unknown {sorted(set(got) - keys)})")


def runtime_dir():
    return os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/cuview-{os.getuid()}"


class _Atomics:
    """Sequentially consistent 32-bit operations on shared memory, through libatomic."""

    def __init__(self):
        lib = ctypes.CDLL(ctypes.util.find_library("atomic") or "libatomic.so.1")
        self.fetch_add = getattr(lib, "__atomic_fetch_add_4")
        self.fetch_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int]
        self.fetch_add.restype = ctypes.c_uint32
        self.cas = getattr(lib, "__atomic_compare_exchange_4")
        self.cas.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_bool, ctypes.c_int,
                             ctypes.c_int]
        self.cas.restype = ctypes.c_bool
        self.load8 = getattr(lib, "__atomic_load_8")
        self.load8.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.load8.restype = ctypes.c_uint64
        self.load4 = getattr(lib, "__atomic_load_4")
        self.load4.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.load4.restype = ctypes.c_uint32


SEQ_CST = 5


def checksum(slot, desc, held):
    """docs/protocol.md, "Slot handles": over every 32-bit word of the held blocks' bytes."""
    total = np.uint64(0)
    block = 0
    with np.errstate(over="ignore"):
        for f in desc["fields"]:
            if held == 0 or (block < 64 and held >> block & 1):
                words = np.frombuffer(slot, dtype="<u4", count=f["bytes"] // 4, offset=f["offset"]).astype(np.uint64)
                index = (np.arange(f["bytes"] // 4, dtype=np.uint64) + np.uint64(f["offset"] // 4))
                mult = (index * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
                total += np.sum((words ^ np.uint64(0x5BD1E9955BD1E995)) * mult, dtype=np.uint64)
            block += 1
    return int(total)


class LocalClient:
    """One connection to a publisher NAME on this host, speaking protocol 7."""

    def __init__(self, name, version=VERSION):
        self.name, self.version = name, version
        self.dir = os.path.join(runtime_dir(), "cuview", name)
        self.ctx = zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect("ipc://" + os.path.join(self.dir, "control"))
        self.next_id = 1
        self.session = None
        self.control = self.data = None

    def request(self, op, args=None, timeout_ms=20000):
        msg = {"v": self.version, "op": op, "id": self.next_id}
        if self.session:
            msg["session"] = self.session
        if args is not None:
            msg["args"] = args
        self.next_id += 1
        self.sock.send(msgpack.packb(msg))
        while True:
            if not self.sock.poll(timeout_ms):
                raise AssertionError(f"no reply to '{op}' from '{self.name}' within {timeout_ms} ms")
            reply = msgpack.unpackb(self.sock.recv(), raw=False)
            if reply["id"] == msg["id"]:
                break
        if not reply["ok"]:
            raise ProtocolError(reply["error"]["code"], reply["error"]["message"])
        if reply["v"] != self.version:
            raise AssertionError(f"'{op}' answered in protocol {reply['v']}, asked in {self.version}")
        expect_keys("reply envelope", reply, {"v", "id", "ok", "result"})
        return reply["result"]

    def hello(self):
        r = self.request("hello", {"client": "protocol-7 client", "pid": os.getpid()})
        expect_keys("hello", r, HELLO_KEYS)
        if r["protocol"] != VERSION:
            raise AssertionError(f"hello says protocol {r['protocol']}, this client speaks {VERSION}")
        self.session = r["session"]
        return r

    def describe(self):
        d = self.request("describe")
        expect_keys("describe", d, DESCRIBE_KEYS)
        for f in d["fields"]:
            expect_keys(f"field {f['name']}", f, FIELD_KEYS)
        for p in d["params"]:
            expect_keys(f"param {p['name']}", p, PARAM_KEYS)
        return d

    def stats(self):
        s = self.request("stats")
        expect_keys("stats", s, STATS_KEYS)
        expect_keys("stats.checkpoint", s["checkpoint"], CHECKPOINT_KEYS)
        return s

    def open_ring(self):
        h = self.request("handles")
        expect_keys("handles", h, HANDLES_KEYS)
        if h["sharing"] != "shm":
            raise AssertionError(f"this client reads the host backend's shm sharing, not {h['sharing']}")
        self.handles = h
        self.control = self._map(h["control_shm"], CONTROL_BYTES)
        magic, layout, slot_count = struct.unpack_from("<QII", self.control, 0)
        if magic != MAGIC or layout < 3:
            raise AssertionError(f"control block magic {magic:#x} layout {layout}: not a protocol-7 control block")
        if self.control[16:64].split(b"\0")[0].decode() != self.session:
            raise AssertionError("the control block belongs to another session")
        self.slot_count = slot_count
        self.data = self._map(h["data_shm"], None)
        self.atomics = _Atomics()
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.control))
        self.lease = h["lease"]
        self.generation = self.atomics.load4(self.base + LEASES_AT + self.lease * LEASE_BYTES + 4, SEQ_CST)
        self.last_seq = 0
        return h

    @staticmethod
    def _map(name, size):
        fd = os.open("/dev/shm/" + name.lstrip("/"), os.O_RDWR)
        try:
            return mmap.mmap(fd, size or os.fstat(fd).st_size)
        finally:
            os.close(fd)

    def _holds(self, slot):
        return self.base + LEASES_AT + self.lease * LEASE_BYTES + 8 + 4 * slot

    def take_frame(self, desc, timeout_s=30):
        """Reading a frame, steps 1-4: returns (seq, step, values of every field by name)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            latest = self.atomics.load8(self.base + 80, SEQ_CST)
            seq, slot = latest >> 8, latest & 0xFF
            if seq == 0 or slot >= self.slot_count or seq <= self.last_seq:
                time.sleep(0.002)
                continue
            self.atomics.fetch_add(self._holds(slot), 1, SEQ_CST)
            at = SLOTS_AT + slot * SLOT_BYTES
            state = self.atomics.load8(self.base + at, SEQ_CST)
            if state != seq << 1:
                self._release(slot)
                continue
            step, sim_time, stamp_ns = struct.unpack_from("<Qdq", self.control, at + 8)
            held = self.atomics.load8(self.base + at + 32, SEQ_CST)
            every = self.atomics.load4(self.base + 5872 + 4 * slot, SEQ_CST)
            if every > 1:  # never asked for frames of every k-th cell: skip such a frame
                self._release(slot)
                continue
            off = self.handles["slots"][slot]["offset"]
            frame = bytes(self.data[off:off + desc["slot_bytes"]])
            t_seq, t_step, t_sum, _done = struct.unpack_from("<QQQQ", frame, desc["trailer_offset"])
            self._release(slot)
            if t_seq != seq or t_step != step:
                raise AssertionError(f"trailer of frame {seq} says seq {t_seq} step {t_step}")
            if checksum(frame, desc, held) != t_sum:
                raise AssertionError(f"frame {seq}: the checksum does not match the data")
            values = {}
            for f in desc["fields"]:
                dtype = {"float32": "<f4", "float16": "<f2", "int32": "<i4", "uint8": "u1"}[f["dtype"]]
                count = int(np.prod(f["shape"]))
                values[f["name"]] = np.frombuffer(frame, dtype=dtype, count=count,
                                                  offset=f["offset"]).reshape(f["shape"]).copy()
            self.last_seq = seq
            return seq, step, values
        raise AssertionError(f"no frame from '{self.name}' within {timeout_s} s")

    def _release(self, slot):
        row = self.base + LEASES_AT + self.lease * LEASE_BYTES
        if self.atomics.load4(row + 4, SEQ_CST) != self.generation:
            return
        while True:
            now = self.atomics.load4(self._holds(slot), SEQ_CST)
            if now == 0:
                return
            expected = ctypes.c_uint32(now)
            if self.atomics.cas(self._holds(slot), ctypes.byref(expected), now - 1, False, SEQ_CST, SEQ_CST):
                return

    def subscribe_frames(self):
        """A SUB socket on the publisher's `frames`, subscribed to its `frame` notices."""
        sub = self.ctx.socket(zmq.SUB)
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.SUBSCRIBE, b"frame")
        sub.connect("ipc://" + os.path.join(self.dir, "frames"))
        return sub

    def close(self):
        try:
            if self.session:
                self.request("detach")
        finally:
            self.session = None
            self.sock.close()


class GatewayClient:
    """A connection to a cuview-gateway at a `unix:` path, speaking remote protocol 1."""

    def __init__(self, path):
        self.ctx = zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect("ipc://" + path)
        self.next_id = 1
        self.sessions = {}
        self.zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
        self.zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
        self.zstd.ZSTD_decompress.restype = ctypes.c_size_t

    def _receive(self, want_id, timeout_ms):
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            left = int((deadline - time.monotonic()) * 1000)
            if left <= 0 or not self.sock.poll(left):
                raise AssertionError(f"no reply {want_id} from the gateway within {timeout_ms} ms")
            parts = self.sock.recv_multipart()
            if parts[0] == b"reply":
                body = msgpack.unpackb(parts[2], raw=False)
                if body["id"] == want_id:
                    return body

    def gateway(self, op, args, timeout_ms=20000):
        msg = {"v": REMOTE_VERSION, "op": op, "id": self.next_id, "args": args}
        self.next_id += 1
        self.sock.send_multipart([b"", msgpack.packb(msg)])
        reply = self._receive(msg["id"], timeout_ms)
        if not reply["ok"]:
            raise ProtocolError(reply["error"]["code"], reply["error"]["message"])
        if reply["v"] != REMOTE_VERSION:
            raise AssertionError(f"the gateway answered '{op}' in remote protocol {reply['v']}")
        return reply["result"]

    def publisher(self, name, op, args=None, timeout_ms=20000):
        msg = {"v": VERSION, "op": op, "id": self.next_id}
        if name in self.sessions:
            msg["session"] = self.sessions[name]
        if args is not None:
            msg["args"] = args
        self.next_id += 1
        self.sock.send_multipart([name.encode(), msgpack.packb(msg)])
        reply = self._receive(msg["id"], timeout_ms)
        if not reply["ok"]:
            raise ProtocolError(reply["error"]["code"], reply["error"]["message"])
        if reply["v"] != VERSION:
            raise AssertionError(f"'{op}' to '{name}' answered in protocol {reply['v']}, asked in {VERSION}")
        if op == "hello":
            expect_keys("hello through the gateway", reply["result"], HELLO_KEYS)
            self.sessions[name] = reply["result"]["session"]
        return reply["result"]

    def next_view(self, timeout_ms=30000):
        deadline = time.monotonic() + timeout_ms / 1000
        while True:
            left = int((deadline - time.monotonic()) * 1000)
            if left <= 0 or not self.sock.poll(left):
                raise AssertionError(f"no view within {timeout_ms} ms")
            parts = self.sock.recv_multipart()
            if parts[0] == b"view":
                body = msgpack.unpackb(parts[2], raw=False)
                expect_keys("view", body, VIEW_KEYS)
                return body, self.unzstd(parts[3], body["raw_bytes"])

    def unzstd(self, data, size):
        out = ctypes.create_string_buffer(size)
        n = self.zstd.ZSTD_decompress(out, size, data, len(data))
        if n != size:
            raise AssertionError(f"a zstd payload gave {n} bytes, {size} announced")
        return out.raw

    def close(self):
        self.sock.close()


def f32_planes(raw, count):
    """A view's f32 values, sent as four byte planes, least significant first."""
    planes = np.frombuffer(raw, dtype=np.uint8).reshape(4, count)
    return np.ascontiguousarray(planes.T).view("<f4").reshape(count)
