"""The Fortran module `cuview` as a Fortran program uses it: element (i, j, k) of a Fortran array is
what a reader sees at cell (i-1, j-1, k-1) (float32 and int32; real(8) and integer(8) interiors of
arrays with ghost cells, published in place, with their grid's coordinates); refusals reach Fortran with their
message; examples/fortran-heat (real(8) with ghost cells, on a grid in mm) serves steerable frames,
and its MPI variant on 2 ranks, assembled, equals the 1-rank run bit for bit at the same step. Run by CTest (fortran) with PYTHONPATH=python."""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

import numpy as np

import cuview
from private_runtime import PrivateRuntimeTest, mpirun_argv

BIN = os.environ.get("CUVIEW_BIN_DIR", "build/bin")


def attached(name, group=False, seconds=30):
    deadline = time.time() + seconds
    while True:
        try:
            return cuview.attach_group(name) if group else cuview.attach(name)
        except cuview.CuviewError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def at_step(source, step, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        f = source.next_frame(timeout=1)
        if f is not None and f.step == step:
            return f
        if f is not None:
            f.release()
    raise AssertionError(f"no frame of step {step}")


def until(source, test, assembled=False, seconds=60):
    """Field T of the first frame of `source` (a Client, or a Group with assembled=True) for which
    test(frame, T) holds."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        f = source.next_frame(timeout=1)
        if f is not None:
            with f:
                T = f.assemble("T", host=True) if assembled else np.array(f["T"])
                if test(f, T):
                    return T
    raise AssertionError("no such frame")


class Fortran(PrivateRuntimeTest):

    def stop(self, name, process):
        with cuview.attach(name, control_only=True) as c:
            c.shutdown()
        out, _ = process.communicate(timeout=60)
        self.assertEqual(process.returncode, 0, out)
        return out

    def test_element_i_j_k_is_the_readers_cell_i_1_j_1_k_1(self):
        p = subprocess.Popen([f"{BIN}/cuview-test-fortran-cells", "cells"], stdout=subprocess.PIPE, text=True)
        try:
            with attached("cells") as sim:
                shapes = {f["name"]: (f["dtype"], f["shape"]) for f in sim.description["fields"]}
                self.assertEqual(shapes, {"T": ("float32", [4, 5, 6]), "N": ("int32", [4, 5, 6])})
                with sim.next_frame(timeout=10) as f:
                    f.verify()
                    T, N = np.asarray(f["T"]), np.asarray(f["N"])
                    z, y, x = np.meshgrid(np.arange(4), np.arange(5), np.arange(6), indexing="ij")
                    expected = (x + 1) + 10 * (y + 1) + 100 * (z + 1)
                    np.testing.assert_array_equal(T, expected.astype(np.float32))
                    np.testing.assert_array_equal(N, -expected.astype(np.int32))
                    self.assertEqual(T[3, 4, 5], 6 + 50 + 400)  # T(6, 5, 4): the last element
        finally:
            out = self.stop("cells", p)
        self.assertIn("publish before start: status 6: cuview_publisher_publish of 'cells' before "
                      "cuview_publisher_start", out)

    def test_a_section_whose_first_axis_is_not_of_unit_stride_is_refused_naming_the_field(self):
        out = subprocess.run([f"{BIN}/cuview-test-fortran-cells", "strided", "--section"], capture_output=True,
                             text=True, timeout=60, check=True).stdout
        self.assertIn("status 6: ", out)
        self.assertIn("field 'strided'", out)
        self.assertIn("the fastest axis's stride must be one cell's size (4 bytes)", out)

    def test_real8_and_integer8_interiors_of_arrays_with_ghost_cells_are_read_cell_for_cell(self):
        p = subprocess.Popen([f"{BIN}/cuview-test-fortran-cells", "halo", "--halo"], stdout=subprocess.PIPE, text=True)
        try:
            with attached("halo") as sim:
                shapes = {f["name"]: (f["dtype"], f["shape"]) for f in sim.description["fields"]}
                self.assertEqual(shapes, {"H1": ("float64", [4, 5, 6]), "H2": ("float64", [4, 5, 6]),
                                          "K": ("int64", [4, 5, 6]), "S": ("float32", [5, 6])})
                with sim.next_frame(timeout=10) as f:
                    f.verify()
                    z, y, x = np.meshgrid(np.arange(4), np.arange(5), np.arange(6), indexing="ij")
                    cell = ((x + 1) + 10 * (y + 1) + 100 * (z + 1))
                    h1 = cell.astype(np.float64) + 1.0 / 3.0  # the same double Fortran computed: no ghost, no rounding
                    np.testing.assert_array_equal(np.asarray(f["H1"]), h1)
                    np.testing.assert_array_equal(np.asarray(f["H2"]), -h1)
                    np.testing.assert_array_equal(np.asarray(f["K"]), 2**40 + cell.astype(np.int64))
                    y2, x2 = np.meshgrid(np.arange(5), np.arange(6), indexing="ij")
                    np.testing.assert_array_equal(np.asarray(f["S"]), ((x2 + 1) + 10 * (y2 + 1)).astype(np.float32))
            described = json.loads(subprocess.run([f"{BIN}/cuview-ctl", "--name", "halo", "describe", "--json"],
                                                  capture_output=True, text=True, timeout=60, check=True).stdout)
            grids = {g["name"]: g for g in described["grids"]}
            self.assertEqual(list(grids), ["box", "surface"])  # H2, declared without grid=, lies on the first
            self.assertEqual(grids["box"]["dims"], [4, 5, 6])  # slowest axis first: z, y, x
            self.assertEqual(grids["box"]["origin"], [2.0, -1.0, 0.5])
            self.assertEqual(grids["box"]["spacing"], [2.0, 0.5, 0.25])
            self.assertEqual(grids["box"]["units"], "m")
            self.assertEqual({f["name"]: f["grid"] for f in described["fields"]},
                             {"H1": "box", "H2": "box", "K": "box", "S": "surface"})
            self.assertEqual((grids["surface"]["dims"], grids["surface"]["origin"]), ([5, 6], [0.0, 10.0]))
        finally:
            out = self.stop("halo", p)
        said = dict(line.split(": status ", 1) for line in out.splitlines() if ": status " in line)
        self.assertIn("field 'whole' of 'halo': the array is (8, 7, 6) but grid 'box' is (6, 5, 4)", said["not the grid"])
        self.assertIn("T(1:nx, 1:ny, 1:nz)", said["not the grid"])
        self.assertIn("field 'Z' of 'halo': a complex(8) array is not one cuview publishes; give real(4), real(8), "
                      "integer(4), integer(8)", said["complex"])

    def errors(self, name, options, env_level=None):
        env = {k: v for k, v in os.environ.items() if k != "CUVIEW_LOG"}
        if env_level:
            env["CUVIEW_LOG"] = env_level
        return subprocess.run([f"{BIN}/cuview-test-fortran-cells", name, "--errors", options], capture_output=True,
                              text=True, timeout=60, env=env, check=True)

    def test_refusals_name_the_modules_calls_and_keywords(self):
        said = dict(line.split(": status ", 1) for line in self.errors("fwords", "").stdout.splitlines())
        self.assertIn("pass cuview_create another name", said["name in use"])
        self.assertIn("declare it with cuview_add_preset first", said["unknown preset"])
        self.assertIn("declare at least one with cuview_add_field before cuview_start", said["no field"])
        self.assertIn("(memory=cuview_memory_host)", said["host memory as device"])
        self.assertIn("6: publisher 'fwords': cannot declare field 'late' after publishing began; call "
                      "cuview_add_field", said["after start"])
        for message in said.values():
            for c_or_cpp in ("cuview_publisher_", "Memory::", "FieldWriter", "add_field()", "pick another --name"):
                self.assertNotIn(c_or_cpp, message)

    def test_the_librarys_log_goes_to_stderr_at_the_level_asked_for(self):
        info = self.errors("flog", "log=info")
        self.assertNotIn("[cuview]", info.stdout)
        self.assertIn("[cuview] [info] publisher 'flog' session", info.stderr)
        quiet = self.errors("flog", "log=error")
        self.assertNotIn("[cuview]", quiet.stdout)
        self.assertNotIn("[info]", quiet.stderr)
        self.assertIn("[cuview] [info]", self.errors("flog", "log=error", env_level="info").stderr)  # env wins

    def test_through_a_gateway_a_remote_reader_sees_the_cells_and_steers(self):
        gateway = subprocess.Popen([f"{BIN}/cuview-gateway", "--log-level", "warn"])
        url = "unix:" + os.path.join(self.rt.name, "cuview", ".gateway", "gateway.sock")
        cells = subprocess.Popen([f"{BIN}/cuview-test-fortran-cells", "rcells"], stdout=subprocess.PIPE, text=True)
        heat = subprocess.Popen([f"{BIN}/fortran-heat", "--name", "rheat", "--size", "16"], stdout=subprocess.PIPE,
                                text=True)
        try:
            attached("rcells").close()
            attached("rheat").close()
            deadline = time.time() + 30
            while True:
                try:
                    remote = cuview.attach("rcells", remote=url)
                    break
                except cuview.CuviewError:
                    self.assertLess(time.time(), deadline, "the gateway never served 'rcells'")
                    time.sleep(0.1)
            with remote:
                region = remote.fetch("T", 0, 0, z=0, d=4)  # the whole box, exact
                z, y, x = np.meshgrid(np.arange(4), np.arange(5), np.arange(6), indexing="ij")
                np.testing.assert_array_equal(np.asarray(region), ((x + 1) + 10 * (y + 1) + 100 * (z + 1)))
            with cuview.attach("rheat", remote=url) as remote:
                remote.set(alpha=0.05)
                deadline = time.time() + 30
                while remote.status()["params"]["alpha"] != 0.05:  # the Fortran loop's poll took it
                    self.assertLess(time.time(), deadline)
                    time.sleep(0.05)
        finally:
            self.stop("rcells", cells)
            self.stop("rheat", heat)
            gateway.terminate()
            gateway.wait(30)

    @unittest.skipUnless(shutil.which("mpirun") and os.path.exists(f"{BIN}/fortran-heat-mpi"),
                         "no mpirun or no MPI Fortran here (Debian: openmpi-bin libopenmpi-dev)")
    def test_the_heat_example_on_2_ranks_equals_1_rank_in_real8_in_mm_and_takes_steering(self):
        # --size 16: 16 x 16 x 8 cells of 1 x 1 x 2 mm, held with a layer of ghost cells, the
        # interior published in place; on 2 ranks two slabs of 4 layers exchanging their halos.
        one = subprocess.Popen([f"{BIN}/fortran-heat", "--name", "heat1", "--size", "16", "--steps", "12", "--hold"],
                               stdout=subprocess.PIPE, text=True)
        two = subprocess.Popen(mpirun_argv(2, f"{BIN}/fortran-heat-mpi", ["--name", "heat2", "--size", "16",
                                                                          "--steps", "12", "--hold"]),
                               stdout=subprocess.PIPE, text=True)
        try:
            with attached("heat1") as sim, attached("heat2", group=True) as group:
                self.assertEqual([(f["name"], f["dtype"], f["shape"]) for f in sim.description["fields"]],
                                 [("T", "float64", [8, 16, 16])])
                box = sim.grid("T")  # slowest axis first: z, y, x; the first cell's centre at half a cell
                self.assertEqual((box.name, box.shape, box.units), ("box", (8, 16, 16), "mm"))
                self.assertEqual(box.spacing, (2.0, 1.0, 1.0))
                self.assertEqual(box.origin, (1.0, 0.5, 0.5))
                self.assertTrue(group.decomposed)
                self.assertEqual(group.shape, (8, 16, 16))
                slabs = [group.part(k).grid("T") for k in range(2)]  # each rank's grid is its slab
                self.assertEqual([(g.shape, g.origin, g.spacing, g.units) for g in slabs],
                                 [((4, 16, 16), (1.0, 0.5, 0.5), (2.0, 1.0, 1.0), "mm"),
                                  ((4, 16, 16), (9.0, 0.5, 0.5), (2.0, 1.0, 1.0), "mm")])
                with at_step(sim, 12) as whole, at_step(group, 12) as gf:
                    expected = np.array(whole["T"])
                    self.assertEqual(expected.dtype, np.float64)
                    self.assertGreater(float(expected.max()), 0.1)  # the hot ball, diffused
                    assembled = gf.assemble("T", host=True)
                    self.assertEqual(assembled.dtype, np.float64)
                    np.testing.assert_array_equal(assembled, expected)  # bit for bit: halos exchanged exactly
                # Steering reaches the Fortran loops, held at step 12: a stroke across the slabs'
                # boundary (layers 3 | 4, 5) draws heat into the interiors, the same on 1 and 2 ranks...
                for source in (sim, group):
                    source.draw("heat", 3, 4, radius=1.0, z=4)
                drawn = lambda f, T: T[3, 4, 3] == 1.0 and T[5, 4, 3] == 1.0
                np.testing.assert_array_equal(until(group, drawn, assembled=True), until(sim, drawn))
                # ... and a reset starts both again from the hot ball: step 12 comes again, as before.
                for source in (sim, group):
                    source.reset()
                again = lambda f, T: f.step == 12 and T[4, 4, 3] != 1.0
                np.testing.assert_array_equal(until(sim, again), expected)
                np.testing.assert_array_equal(until(group, again, assembled=True), expected)
        finally:
            self.stop("heat1", one)
            with cuview.attach("heat2", control_only=True) as c:
                c.shutdown()
            two.communicate(timeout=60)
            self.assertEqual(two.returncode, 0)

if __name__ == "__main__":
    sys.exit(unittest.main())
