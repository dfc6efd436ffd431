// Runs cuview-compute under the MPI launcher users have (Open MPI's mpirun), for the tests of
// decomposed runs. The launcher gets a process group of its own, so a test that ends early
// takes every rank with it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "process.hpp"

namespace cuview::test {

/// The absolute path of mpirun, or empty when none is installed (the [mpi] tests then say so).
std::string mpirun_path();

/// The command line `mpirun … -n N PROGRAM ARGS`: as root it needs --allow-run-as-root, on a
/// 2-core machine --oversubscribe; the test's XDG_RUNTIME_DIR and XDG_STATE_HOME (and on GPU
/// hosts the library path and NCCL's settings) go to every rank with -x.
std::vector<std::string> mpirun_argv(int ranks, const std::string& program, const std::vector<std::string>& args);

/// Starts `mpirun -n N PROGRAM ARGS` (a program of bin/) publishing NAME as N parts and returns
/// once every part answers (fails the test with mpirun's output if it exits first or takes
/// longer than 60 s).
ChildProcess start_program_parts(const std::string& name, int ranks, const std::string& program,
                                 const std::vector<std::string>& args);

/// Starts `mpirun -n N cuview-compute --name NAME --backend B --size SIZE EXTRA…` and returns
/// once every part answers (fails the test with mpirun's output if it exits first or takes
/// longer than 60 s).
ChildProcess start_parts(const std::string& name, int ranks, Backend backend, std::vector<std::string> extra = {},
                         const std::string& size = "96x64");

/// Starts cuview-compute under mpirun as a run over several hosts played on one machine: rank k
/// publishes in the runtime directory hosts[k] and says it runs on "host-k" (CUVIEW_HOST), so that
/// each "host" holds only its ranks' parts, as a real multi-host run does. Returns once every
/// part answers.
ChildProcess start_parts_on_hosts(const std::string& name, const std::vector<std::filesystem::path>& hosts,
                                  Backend backend, std::vector<std::string> extra = {},
                                  const std::string& size = "96x64");

}  // namespace cuview::test
