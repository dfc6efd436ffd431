#include "checkpoint/checkpointer.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <regex>

#include "cuview/error.hpp"
#include "cuview/posix.hpp"

namespace cuview::checkpoint {
namespace fs = std::filesystem;

namespace {
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }
}  // namespace

fs::path default_dir(const std::string& name) {
  if (const char* x = std::getenv("XDG_STATE_HOME"); x != nullptr && *x == '/') return fs::path(x) / "cuview" / name;
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr && *home != '\0' ? home : "/tmp") / ".local" / "state" / "cuview" / name;
}

double parse_duration(const std::string& text) {
  static const std::regex kDuration(R"(\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|min|h)?\s*)");
  std::smatch m;
  if (!std::regex_match(text, m, kDuration))
    throw Error(Errc::bad_value, "duration '" + text + "' is not a number with an optional unit (250ms, 30s, 5m, 1h)");
  double v = std::stod(m[1]);
  const std::string unit = m[2];
  if (unit == "ms") v /= 1000;
  if (unit == "m" || unit == "min") v *= 60;
  if (unit == "h") v *= 3600;
  if (!(v > 0)) throw Error(Errc::bad_value, "duration '" + text + "' must be more than zero");
  return v;
}

Checkpointer::Checkpointer(Options o, Executor& executor, sim::Simulation& sim, Meta base)
    : o_(std::move(o)), executor_(executor), sim_(sim), base_(std::move(base)), specs_(sim.state()) {
  std::error_code ec;
  fs::create_directories(o_.dir, ec);
  if (ec || !fs::is_directory(o_.dir))
    throw Error(Errc::system, "cannot create the checkpoint directory " + o_.dir.string() + ": " + ec.message() +
                                  "; choose another with --checkpoint-dir");
  ::chmod(o_.dir.c_str(), 0700);
  // What writes that were killed left: .step-N.h5.tmp-PID of processes that are gone.
  static const std::regex kTmp(R"(\..*\.h5\.tmp-(\d+))");
  for (const auto& e : fs::directory_iterator(o_.dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, m, kTmp)) {
      const auto pid = static_cast<pid_t>(std::stol(m[1]));
      if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) {
        fs::remove(e.path(), ec);
        spdlog::info("removed {}, the remains of a checkpoint write that was killed", e.path().string());
      }
    }
  }
  status_.enabled = true;
  status_.dir = o_.dir.string();
  status_.every_s = o_.every_s;
  status_changed_ = true;  // the first take_status() says so
  // The capture buffers (pinned on CUDA: gigabytes for a large grid, seconds to allocate) are
  // made at the first checkpoint, so that a run starts at once.
  writer_ = std::thread([this] { run_writer(); });
}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
}

void Checkpointer::request(std::uint64_t ticket, std::string path) { requests_.emplace_back(ticket, std::move(path)); }

Checkpointer::Job Checkpointer::capture(std::uint64_t step, double sim_time,
                                        const std::map<std::string, double>& params, std::string path,
                                        std::uint64_t ticket) {
  // The steps already queued run first (the GPU is busy with them, nothing is lost); the stall
  // is what follows: the GPU copying the state out while no step can run.
  executor_.finish();
  if (blocks_.empty()) {
    const double a0 = now_ms();
    for (const auto& s : specs_) blocks_.push_back({s, executor_.host_memory(std::max<std::size_t>(1, s.bytes()))});
    spdlog::info("checkpoint buffers allocated ({:.0f} ms, kept for the next checkpoints)", now_ms() - a0);
  }
  const double t0 = now_ms();
  std::vector<void*> out;
  for (auto& b : blocks_) out.push_back(b.data.get());
  sim_.save_state(out);
  executor_.finish();  // the stall: the state is in host memory when this returns
  Job j;
  j.stall_ms = now_ms() - t0;
  j.meta = base_;
  j.meta.step = step;
  j.meta.sim_time = sim_time;
  j.meta.params = params;
  j.meta.written_utc = utc_now();
  j.ticket = ticket;
  j.prune = path.empty();
  j.path = path.empty() ? o_.dir / file_name(step) : fs::path(path);
  return j;
}

void Checkpointer::tick(std::uint64_t step, double sim_time, const std::map<std::string, double>& params,
                        double now_s) {
  if (next_due_s_ < 0) next_due_s_ = now_s + o_.every_s;
  const bool due = o_.every_s > 0 && now_s >= next_due_s_;
  if (requests_.empty() && !due) return;
  {
    std::lock_guard lock(m_);
    if (busy_) return;  // its turn comes when the writer is free
  }
  std::uint64_t ticket = 0;
  std::string path;
  if (!requests_.empty()) {
    std::tie(ticket, path) = requests_.front();
    requests_.pop_front();
  }
  if (due) next_due_s_ = now_s + o_.every_s;
  hand_over(step, sim_time, params, path, ticket);
}

void Checkpointer::hand_over(std::uint64_t step, double sim_time, const std::map<std::string, double>& params,
                             const std::string& path, std::uint64_t ticket) {
  Job j;
  try {
    j = capture(step, sim_time, params, path, ticket);
  } catch (const Error& e) {
    if (e.code() == Errc::cuda) throw;  // the simulation's GPU work failed: the daemon stops
    Job failed;
    failed.ticket = ticket;
    finish(failed, std::string("copying the state: ") + e.what(), 0);
    return;
  }
  {
    std::lock_guard lock(m_);
    busy_ = true;
    job_ = std::move(j);
  }
  cv_.notify_all();
}

void Checkpointer::capture_now(std::uint64_t step, double sim_time, const std::map<std::string, double>& params,
                               std::uint64_t ticket) {
  {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !busy_; });
  }
  hand_over(step, sim_time, params, {}, ticket);
}

fs::path Checkpointer::write_now(std::uint64_t step, double sim_time, const std::map<std::string, double>& params) {
  {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return !busy_; });
  }
  const Job j = capture(step, sim_time, params, {}, 0);
  const double t0 = now_ms();
  try {
    write(j.path, j.meta, blocks_);
  } catch (const Error& e) {
    finish(j, e.what(), now_ms() - t0);
    throw;
  }
  finish(j, {}, now_ms() - t0);
  return j.path;
}

void Checkpointer::run_writer() {
  std::unique_lock lock(m_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || job_.has_value(); });
    if (!job_) return;  // stopping, nothing left to write
    const Job j = std::move(*job_);
    job_.reset();
    lock.unlock();
    const double t0 = now_ms();
    std::string error;
    try {
      write(j.path, j.meta, blocks_);
    } catch (const std::exception& e) {
      error = e.what();
    }
    finish(j, error, now_ms() - t0);
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

void Checkpointer::finish(const Job& j, const std::string& error, double write_ms) {
  std::uint64_t bytes = 0;
  for (const auto& s : specs_) bytes += s.bytes();
  if (error.empty()) {
    spdlog::info(
        "checkpoint of step {} written to {} ({:.1f} MiB; the simulation waited {:.1f} ms, writing took "
        "{:.0f} ms)",
        j.meta.step, j.path.string(), static_cast<double>(bytes) / (1 << 20), j.stall_ms, write_ms);
    if (j.prune) prune();
  } else {
    spdlog::warn("checkpoint of step {} to {} failed: {}", j.meta.step, j.path.string(), error);
  }
  std::lock_guard lock(m_);
  if (j.ticket > status_.answered) status_.answered = j.ticket;
  if (error.empty()) {
    status_.path = j.path.string();
    status_.step = j.meta.step;
    status_.sim_time = j.meta.sim_time;
    status_.unix_time = unix_now();
    status_.bytes = bytes;
    status_.stall_ms = j.stall_ms;
    status_.write_ms = write_ms;
    ++status_.written;
  } else {
    status_.error = error;
    status_.error_ticket = j.ticket;
  }
  status_changed_ = true;
}

void Checkpointer::prune() {
  if (o_.keep == 0) return;
  const auto files = list(o_.dir);
  for (std::size_t i = 0; i + o_.keep < files.size(); ++i) {
    std::error_code ec;
    fs::remove(files[i], ec);
  }
}

std::optional<proto::CheckpointStatus> Checkpointer::take_status() {
  std::lock_guard lock(m_);
  if (!status_changed_) return std::nullopt;
  status_changed_ = false;
  return status_;
}

std::pair<fs::path, Loaded> Checkpointer::latest(const fs::path& dir) {
  const auto files = list(dir);
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    try {
      return {*it, read(*it)};
    } catch (const Error& e) {
      spdlog::warn("skipping {}", e.what());
    }
  }
  throw Error(Errc::bad_value, "--restore latest: no usable checkpoint in " + dir.string() +
                                   (files.empty() ? " (it has none)" : " (every one is damaged)") +
                                   "; give --checkpoint-dir where they are, or a file with --restore PATH");
}

}  // namespace cuview::checkpoint
