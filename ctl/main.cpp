// cuview-ctl: the command-line client. Status, attach (with frame verification) and control.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "cuview/client.hpp"
#include "cuview/protocol_json.hpp"
#include "cuview/remote/curve_keys.hpp"
#include "cuview/runtime_dir.hpp"
#include "executor/executor.hpp"
#include "publisher/parameter_set.hpp"
#include "sims/simulation.hpp"

namespace {
using namespace std::chrono_literals;
using cuview::Client;

std::string clock_time(double unix_time) {
  const auto t = static_cast<std::time_t>(unix_time);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

void print_checkpoint(const cuview::proto::CheckpointStatus& c) {
  std::printf("checkpoint of step %llu written to %s (%.1f MiB; the simulation waited %.1f ms, writing took %.0f ms)\n",
              static_cast<unsigned long long>(c.step), c.path.c_str(), static_cast<double>(c.bytes) / (1 << 20),
              c.stall_ms, c.write_ms);
}

void print_status(const cuview::proto::Stats& s) {
  std::printf("%s: %s %ux%u on %s (%s), shared by %s, %s\n", s.name.c_str(), s.sim.c_str(), s.width, s.height,
              s.backend.c_str(), s.device.c_str(), s.sharing.c_str(), s.paused ? "paused" : "running");
  std::printf("  step %llu (t = %.1f), %.0f steps/s\n", static_cast<unsigned long long>(s.step), s.sim_time,
              s.steps_per_second);
  if (s.readers == 0)  // the publisher copies nothing then (docs/architecture.md, "No reader, no copy")
    std::printf("  frames %llu published, none while nobody reads; %u slots\n",
                static_cast<unsigned long long>(s.frames_published), s.slots);
  else
    std::printf("  frames %llu published (%.1f/s), %llu skipped; %u slots, %u held\n",
                static_cast<unsigned long long>(s.frames_published), s.frames_per_second,
                static_cast<unsigned long long>(s.frames_skipped), s.slots, s.held_slots);
  std::printf("  clients %u (%u reading), memory %llu KiB, up %.0f s, session %s\n", s.clients, s.readers,
              static_cast<unsigned long long>(s.rss_kib), s.uptime_s, s.session.c_str());
  std::printf("  params:");
  for (const auto& [k, v] : s.params) std::printf(" %s=%g", k.c_str(), v);
  std::printf("\n");
  const auto& c = s.checkpoint;
  if (!c.enabled) {
    std::printf("  checkpoints: none (this program does not write them)\n");
    return;
  }
  char every[64] = "on request and at exit";
  if (c.every_s > 0) std::snprintf(every, sizeof every, "every %g s and at exit", c.every_s);
  std::printf("  checkpoints: %s into %s", every, c.dir.c_str());
  if (c.written > 0)
    std::printf("; last: step %llu at %s (%s)", static_cast<unsigned long long>(c.step),
                clock_time(c.unix_time).c_str(), c.path.c_str());
  std::printf("\n");
  if (!c.error.empty()) std::printf("  last checkpoint failure: %s\n", c.error.c_str());
}

/// `status` of a run of parts: one line per part, then what they have in common and how far apart
/// they are.
void print_part_status(const std::vector<cuview::proto::Stats>& parts) {
  const auto& s0 = parts.front();
  const auto& p0 = *s0.part;
  std::printf("%s: %s %ux%u in %zu parts on %s (group %s), %s\n", s0.name.c_str(), s0.sim.c_str(), p0.global_width,
              p0.global_height, parts.size(), s0.backend.c_str(), p0.group.c_str(), s0.paused ? "paused" : "running");
  std::uint64_t lo = UINT64_MAX, hi = 0, published = 0, skipped = 0;
  double slowest = 0, fewest_fps = 0;
  std::uint32_t held = 0, readers = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const auto& s = parts[k];
    const auto& p = *s.part;
    const std::string rank = p.rank >= 0 ? std::to_string(p.rank) : "-";
    std::printf("  part %u  rank %s  on %s  %s  rows %u-%u cols %u-%u  step %llu  %.0f steps/s  %.1f frames/s  "
                "%u reading  %u/%u held\n",
                p.index, rank.c_str(), p.host.c_str(), s.device.c_str(), p.offset_y, p.offset_y + s.height - 1,
                p.offset_x, p.offset_x + s.width - 1, static_cast<unsigned long long>(s.step), s.steps_per_second,
                s.frames_per_second, s.readers, s.held_slots, s.slots);
    lo = std::min(lo, s.step), hi = std::max(hi, s.step);
    slowest = k == 0 ? s.steps_per_second : std::min(slowest, s.steps_per_second);
    fewest_fps = k == 0 ? s.frames_per_second : std::min(fewest_fps, s.frames_per_second);
    published += s.frames_published, skipped += s.frames_skipped;
    held += s.held_slots, readers = std::max(readers, s.readers);
  }
  std::printf("  %zu parts: steps %llu-%llu, slowest part %.0f steps/s and %.1f frames/s; frames %llu published, "
              "%llu skipped; %u reading, %u slots held in all\n",
              parts.size(), static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi), slowest,
              fewest_fps, static_cast<unsigned long long>(published), static_cast<unsigned long long>(skipped), readers,
              held);
  std::printf("  params:");
  for (const auto& [k, v] : s0.params) std::printf(" %s=%g", k.c_str(), v);
  std::printf("\n");
}

struct AttachArgs {
  std::uint64_t frames = 10;
  bool verify = false;
  int hold_ms = 0;
  bool reattach = false;
  double timeout_s = 10;
  std::string save;  ///< write the last frame's slot here
  // --remote: views
  std::string field, encoding = "auto", view_size = "640x360";
  int view_w = 640, view_h = 360;
};

bool retryable(const cuview::Error& e) {
  return e.code() == cuview::Errc::daemon_gone || e.code() == cuview::Errc::no_daemon ||
         e.code() == cuview::Errc::timeout;
}

/// Waits for frames; returns the process exit code. With `reattach`, a daemon that goes away is
/// waited for (up to the frame timeout) and its successor attached.
/// Writes a frame's whole slot (fields at their `describe` offsets, then the trailer) to `path`.
void save_slot(const cuview::Frame& frame, const cuview::proto::DescribeResult& d, const std::string& path) {
  std::vector<std::byte> slot(d.slot_bytes);
  frame.copy_to_host(slot);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(slot.data()), static_cast<std::streamsize>(slot.size()));
  if (!out)
    throw cuview::Error(cuview::Errc::system, "could not write frame " + std::to_string(frame.info().seq) + " to " +
                                                  path + ": " + std::strerror(errno));
  std::printf("saved frame %llu (step %llu, %zu bytes: fields at their describe offsets, then the trailer) to %s\n",
              static_cast<unsigned long long>(frame.info().seq), static_cast<unsigned long long>(frame.info().step),
              slot.size(), path.c_str());
}

/// `attach --remote`: views instead of frames, each stating its encoding and error bound. With
/// `reattach`, a daemon or gateway that goes away is waited for and attached to again.
int attach_remote(const cuview::AttachOptions& base, const std::vector<std::string>& gateways, const AttachArgs& a) {
  auto opts = base;
  opts.client = "cuview-ctl attach";
  const auto frame_timeout = std::chrono::milliseconds(static_cast<long>(a.timeout_s * 1000));
  cuview::RemoteView view;
  std::map<std::string, std::uint64_t> encodings;
  std::uint64_t received = 0, first_seq = 0, last_seq = 0, sessions = 0;
  double worst_bound = 0;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (received < a.frames) {
    try {
      // A run of parts over several hosts is one group: a gateway per host, views assembled.
      auto client = cuview::RemoteGroup::attach(opts, gateways);
      deadline = std::chrono::steady_clock::time_point::max();
      ++sessions;
      const auto& d = client.leader().description();
      const auto gw = client.global_width(), gh = client.global_height();
      if (d.fields.empty()) throw cuview::Error(cuview::Errc::bad_value, "daemon '" + opts.name + "' has no fields");
      cuview::ViewWatch w;
      w.field = a.field.empty() ? d.fields.front().name : a.field;
      w.encoding = a.encoding;
      w.region = cuview::ViewRegion::fit(static_cast<int>(gw), static_cast<int>(gh), a.view_w, a.view_h, 1, gw / 2.0,
                                         gh / 2.0);
      client.watch(w);
      std::string through;
      for (const auto& g : gateways) through += (through.empty() ? "" : ", ") + g;
      std::printf("attached to '%s' session %s through %s: %s %ux%u on %s (%s); views of %s, %dx%d, encoding %s\n",
                  opts.name.c_str(), client.leader().hello().session.c_str(), through.c_str(), d.sim.c_str(), gw, gh,
                  d.backend.c_str(), d.device.c_str(), w.field.c_str(), a.view_w, a.view_h, a.encoding.c_str());
      for (std::size_t k = 0; client.decomposed() && k < client.size(); ++k) {
        const auto& p = client.part_desc(k);
        std::printf("  part %u (rank %d on %s, %s) through %s: block %ux%u at (%u, %u)\n", p.index, p.rank,
                    p.host.c_str(), client.part(k).description().device.c_str(),
                    gateways.size() == 1 ? gateways.front().c_str() : "its host's gateway",
                    client.part(k).description().width, client.part(k).description().height, p.offset_x,
                    p.offset_y);
      }
      std::fflush(stdout);
      while (received < a.frames) {
        if (!client.next_view(view, frame_timeout))
          throw cuview::Error(cuview::Errc::timeout, "no view from '" + opts.name + "' within " +
                                                         std::to_string(a.timeout_s) +
                                                         " s; is it paused? (`cuview-ctl resume`)");
        if (received == 0) first_seq = view.header.seq;
        last_seq = view.header.seq;
        ++received;
        ++encodings[view.header.encoding];
        worst_bound = std::max(worst_bound, view.header.error_bound);
        if (a.hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.hold_ms));
      }
    } catch (const cuview::Error& e) {
      if (!a.reattach || !retryable(e)) throw;
      if (deadline == std::chrono::steady_clock::time_point::max()) {
        std::printf("gone (%s); waiting to re-attach\n", e.what());
        std::fflush(stdout);
        deadline = std::chrono::steady_clock::now() + frame_timeout;
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw cuview::Error(cuview::Errc::no_daemon, "daemon '" + opts.name + "' through " + opts.remote +
                                                         " did not come back within " + std::to_string(a.timeout_s) +
                                                         " s (" + e.what() + ")");
      std::this_thread::sleep_for(100ms);
    }
  }
  std::string enc;
  for (const auto& [e, n] : encodings) enc += (enc.empty() ? "" : ", ") + e + " " + std::to_string(n);
  std::printf("received %llu views (seq %llu..%llu; encodings: %s; largest error bound %.6g, last range [%g, %g]) "
              "from %llu session(s)\n",
              static_cast<unsigned long long>(received), static_cast<unsigned long long>(first_seq),
              static_cast<unsigned long long>(last_seq), enc.c_str(), worst_bound, view.header.lo, view.header.hi,
              static_cast<unsigned long long>(sessions));
  return 0;
}

/// The first lines `attach` prints: for a whole publisher as ever, for a run of parts one more
/// line per part (where its block lies, where it runs).
void print_attached(const cuview::Group& g, const std::string& name) {
  const auto& lead = g.leader();
  const auto& d = lead.description();
  if (!g.decomposed()) {
    std::printf("attached to '%s' session %s: %s %ux%u on %s (%s), %u slots shared by %s\n", name.c_str(),
                lead.hello().session.c_str(), d.sim.c_str(), d.width, d.height, d.backend.c_str(), d.device.c_str(),
                d.slots, lead.sharing().c_str());
    return;
  }
  std::printf("attached to '%s' group %s: %s %ux%u in %zu parts on %s, shared by %s\n", name.c_str(),
              g.group_id().c_str(), d.sim.c_str(), g.global_width(), g.global_height(), g.size(), d.backend.c_str(),
              lead.sharing().c_str());
  for (std::size_t k = 0; k < g.size(); ++k) {
    const auto& c = g.part(k);
    const auto& p = g.part_desc(k);
    std::printf("  part %u (rank %d on %s, pid %d, %s): block %ux%u at (%u, %u), session %s, %u slots\n", p.index,
                p.rank, p.host.c_str(), c.hello().daemon_pid, c.description().device.c_str(), c.description().width,
                c.description().height, p.offset_x, p.offset_y, c.hello().session.c_str(), c.description().slots);
  }
}

/// Receives frames (of a run of parts: groups of one step from every part) through cuview::Group;
/// returns the process exit code. With `reattach`, a daemon (or part) that goes away is waited for
/// (up to the frame timeout) and its successor attached.
int attach(const cuview::AttachOptions& base, const std::vector<std::string>& gateways, const AttachArgs& a) {
  if (!gateways.empty()) return attach_remote(base, gateways, a);
  auto opts = base;
  opts.client = "cuview-ctl attach";
  std::uint64_t received = 0, verified = 0, sessions = 0, first_seq = 0, last_seq = 0, gaps = 0;
  const auto frame_timeout = std::chrono::milliseconds(static_cast<long>(a.timeout_s * 1000));
  std::string last_session;
  auto deadline = std::chrono::steady_clock::time_point::max();  // set while waiting for a successor
  bool first_attempt = true, decomposed = false;
  while (received < a.frames) {
    std::optional<cuview::Group> group;
    try {
      group.emplace(cuview::Group::attach(opts));
      if (group->leader().hello().session == last_session)  // the old daemon, still shutting down
        throw cuview::Error(cuview::Errc::daemon_gone, "daemon '" + opts.name + "' is shutting down");
    } catch (const cuview::Error& e) {
      // A name with no daemon at all fails at once; a daemon that went away is waited for.
      const bool give_up = !a.reattach || !retryable(e) || (first_attempt && e.code() == cuview::Errc::no_daemon);
      first_attempt = false;
      if (give_up) throw;
      if (deadline == std::chrono::steady_clock::time_point::max())
        deadline = std::chrono::steady_clock::now() + frame_timeout;
      if (std::chrono::steady_clock::now() > deadline)
        throw cuview::Error(cuview::Errc::no_daemon, "daemon '" + opts.name + "' did not come back within " +
                                                         std::to_string(a.timeout_s) + " s (" + e.what() + ")");
      std::this_thread::sleep_for(50ms);  // between attempts to attach to a successor
      continue;
    }
    first_attempt = false;
    ++sessions;
    last_session = group->leader().hello().session;
    decomposed = group->decomposed();
    deadline = std::chrono::steady_clock::time_point::max();
    opts.timeout = base.timeout;
    print_attached(*group, opts.name);
    std::fflush(stdout);
    try {
      std::uint64_t prev = 0;
      while (received < a.frames) {
        auto frames = group->next(frame_timeout);
        if (!frames)
          throw cuview::Error(cuview::Errc::timeout, "no frame from '" + opts.name + "' within " +
                                                         std::to_string(a.timeout_s) +
                                                         " s; is it paused? (`cuview-ctl resume`)");
        // Sequence numbers (and so gaps) are part 0's: every part counts its own.
        const auto& info = frames->part(0).info();
        if (received == 0) first_seq = info.seq;
        if (prev != 0 && info.seq != prev + 1) ++gaps;
        prev = last_seq = info.seq;
        ++received;
        if (decomposed) {
          std::printf("step %llu:", static_cast<unsigned long long>(frames->step()));
          for (std::size_t k = 0; k < frames->size(); ++k)
            std::printf(" part %zu seq %llu slot %u;", k, static_cast<unsigned long long>(frames->part(k).info().seq),
                        frames->part(k).info().slot);
          std::printf("\n");
        }
        if (a.verify) {
          if (auto problem = frames->verify()) {
            std::fprintf(stderr, "cuview-ctl: verification failed: %s\n", problem->c_str());
            return 1;
          }
          ++verified;
        }
        if (a.hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.hold_ms));
        if (received == a.frames && !a.save.empty()) {
          if (!decomposed)
            save_slot(frames->part(0), group->leader().description(), a.save);
          else  // one file per part, each the part's own slot layout
            for (std::size_t k = 0; k < frames->size(); ++k)
              save_slot(frames->part(k), group->part(k).description(), a.save + ".part-" + std::to_string(k));
        }
      }
    } catch (const cuview::Error& e) {
      if (e.code() != cuview::Errc::daemon_gone || !a.reattach) throw;
      std::printf("daemon gone (%s); waiting to re-attach\n", e.what());
      std::fflush(stdout);
      deadline = std::chrono::steady_clock::now() + frame_timeout;
      // A daemon that is still shutting down swallows requests: keep each attempt short.
      opts.timeout = std::min<std::chrono::milliseconds>(base.timeout, 1000ms);
    }
  }
  std::printf("received %llu %s (seq %llu..%llu, %llu gaps where frames were skipped) from %llu session(s)",
              static_cast<unsigned long long>(received), decomposed ? "groups" : "frames",
              static_cast<unsigned long long>(first_seq), static_cast<unsigned long long>(last_seq),
              static_cast<unsigned long long>(gaps), static_cast<unsigned long long>(sessions));
  if (a.verify) std::printf(", %llu verified intact", static_cast<unsigned long long>(verified));
  std::printf("\n");
  return 0;
}

/// `sims`: the built-in simulations, each made on the host at a small grid just to read what it
/// declares (fields, parameters with ranges, presets).
int list_simulations(bool json) {
  nlohmann::json out = nlohmann::json::array();
  auto host = cuview::make_host_executor();
  for (const auto& f : cuview::sim::builtin_simulations()) {
    const auto s = f.make(*host, cuview::sim::SimulationConfig{16, 16, {}});
    const cuview::ParameterSet params(cuview::with_publisher_params(s->params()), s->presets());
    nlohmann::json j{{"name", f.name}, {"help", f.help}};
    for (const auto& field : s->fields())
      j["fields"].push_back({{"name", field.name},
                             {"dtype", cuview::sim::to_string(field.dtype)},
                             {"components", field.components},
                             {"help", field.help}});
    for (const auto& p : params.describe())
      j["params"].push_back({{"name", p.name},
                             {"default", p.value},
                             {"min", p.min},
                             {"max", p.max},
                             {"integer", p.integer},
                             {"help", p.help}});
    for (const auto& p : params.presets()) j["presets"].push_back(p.name);
    out.push_back(j);
  }
  if (json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  for (const auto& j : out) {
    std::printf("%s — %s\n  fields:\n", j["name"].get<std::string>().c_str(), j["help"].get<std::string>().c_str());
    for (const auto& f : j["fields"]) {
      const int c = f["components"].get<int>();
      std::printf("    %-16s %s%s  %s\n", f["name"].get<std::string>().c_str(), f["dtype"].get<std::string>().c_str(),
                  c > 1 ? ("×" + std::to_string(c)).c_str() : "", f["help"].get<std::string>().c_str());
    }
    std::printf("  parameters (default, range):\n");
    for (const auto& p : j["params"])
      std::printf("    %-16s %-8g [%g, %g]%s  %s\n", p["name"].get<std::string>().c_str(), p["default"].get<double>(),
                  p["min"].get<double>(), p["max"].get<double>(), p["integer"].get<bool>() ? " whole" : "",
                  p["help"].get<std::string>().c_str());
    if (j.contains("presets")) {
      std::string names;
      for (const auto& p : j["presets"]) names += (names.empty() ? "" : ", ") + p.get<std::string>();
      std::printf("  presets: %s\n", names.c_str());
    }
  }
  return 0;
}

void print_description(const cuview::proto::DescribeResult& d) {
  std::printf("%s %ux%u on %s (%s), session %s, %u slots of %llu bytes\n", d.sim.c_str(), d.width, d.height,
              d.backend.c_str(), d.device.c_str(), d.session.c_str(), d.slots,
              static_cast<unsigned long long>(d.slot_bytes));
  auto shape = [](const cuview::proto::FieldDesc& f) {
    std::string s;
    for (auto n : f.shape) s += (s.empty() ? "" : ", ") + std::to_string(n);
    return "[" + s + "]";
  };
  for (const auto& in : d.inputs)
    std::printf("  input %s (%s): %s\n", in.name.c_str(), in.kind.c_str(), in.help.c_str());
  for (const auto& f : d.fields)
    std::printf("  field %-3s %s %s at offset %llu: %s\n", f.name.c_str(), f.dtype.c_str(), shape(f).c_str(),
                static_cast<unsigned long long>(f.offset), f.help.c_str());
  for (const auto& set : d.particles) {
    std::printf("  particles %s: %llu, %s\n", set.name.c_str(), static_cast<unsigned long long>(set.count),
                set.help.c_str());
    for (const auto& a : set.attributes)
      std::printf("    %-10s %s %s at offset %llu: %s\n", a.name.c_str(), a.dtype.c_str(), shape(a).c_str(),
                  static_cast<unsigned long long>(a.offset), a.help.c_str());
  }
  for (const auto& p : d.params)
    std::printf("  param %-16s = %-8g in [%g, %g]%s: %s\n", p.name.c_str(), p.value, p.min, p.max,
                p.integer ? " (integer)" : "", p.help.c_str());
  for (const auto& p : d.presets) {
    std::printf("  preset %-8s", p.name.c_str());
    for (const auto& [k, v] : p.values) std::printf(" %s=%g", k.c_str(), v);
    std::printf("\n");
  }
}

/// KEY=VALUE arguments as parameter values; prints what is wrong and returns nothing otherwise.
std::optional<std::map<std::string, double>> parse_assignments(const std::vector<std::string>& assignments,
                                                               const std::string& preset) {
  std::map<std::string, double> values;
  for (const auto& kv : assignments) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "cuview-ctl: '%s' is not KEY=VALUE (for example F=0.03)\n", kv.c_str());
      return std::nullopt;
    }
    try {
      std::size_t used = 0;
      values[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1), &used);
      if (used != kv.size() - eq - 1) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      std::fprintf(stderr, "cuview-ctl: the value in '%s' is not a number\n", kv.c_str());
      return std::nullopt;
    }
  }
  if (values.empty() && preset.empty()) {
    std::fprintf(stderr, "cuview-ctl: set needs KEY=VALUE arguments or --preset NAME\n");
    return std::nullopt;
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  cuview::AttachOptions opts;
  opts.client = "cuview-ctl";
  double timeout_s = 3;
  CLI::App app{"cuview-ctl: inspect and steer a running cuview-compute daemon."};
  app.set_version_flag("--version", "cuview-ctl " CUVIEW_VERSION);
  app.add_option("--name", opts.name, "instance name of the daemon")->capture_default_str();
  app.add_option("--timeout", timeout_s, "seconds to wait for each answer")->capture_default_str();
  std::vector<std::string> gateways;
  app.add_option("--remote", gateways,
                 "the daemon runs on another host: reach it through its cuview-gateway at ssh://[user@]host[:port], "
                 "tcp://host:port[?key=KEY] or unix:PATH (docs/remote.md); tcp+listen://ADDR:PORT?key=KEY waits "
                 "there for a gateway that dials out (cuview-gateway --dial). A run of parts over several hosts: "
                 "give --remote once per host");
  app.require_subcommand(1);

  // The subcommands that are one request each come from the protocol's op table, with its summaries.
  std::map<CLI::App*, cuview::proto::Op> op_of;
  auto command = [&](cuview::proto::Op op) {
    for (auto& [sub, o] : op_of)
      if (o == op) return sub;
    return static_cast<CLI::App*>(nullptr);
  };
  for (const auto& spec : cuview::proto::kOps)
    if (!spec.command.empty())
      op_of[app.add_subcommand(std::string(spec.command), std::string(spec.summary))] = spec.op;
  using Op = cuview::proto::Op;

  bool json = false;
  command(Op::stats)->add_flag("--json", json, "print JSON");
  auto* list = app.add_subcommand("list", "list the daemons running for this user");
  list->add_flag("--json", json, "print JSON");
  auto* sims =
      app.add_subcommand("sims", "list the simulations cuview-compute --sim can run, with their fields and parameters");
  sims->add_flag("--json", json, "print JSON");
  std::string key_file;
  auto* keygen = app.add_subcommand("keygen",
                                    "make this user's CURVE key for tcp:// gateways (kept if it exists) and print the "
                                    "line to add to the gateway host's ~/.config/cuview/authorized_keys");
  keygen->add_option("--out", key_file, "the secret key's file (default ~/.config/cuview/client.key)");
  AttachArgs aa;
  auto* att = app.add_subcommand("attach", "import the frame ring and receive frames");
  att->add_option("--frames", aa.frames, "frames to receive")->capture_default_str();
  att->add_flag("--verify", aa.verify, "check every frame is intact (sequence, step and checksum)");
  att->add_option("--hold-ms", aa.hold_ms, "hold each frame this long (a slow viewer)");
  att->add_flag("--reattach", aa.reattach, "when the daemon restarts, attach to the new one and go on");
  att->add_option("--save", aa.save, "write the last frame's slot (raw bytes, layout as in describe) to this file");
  att->add_option("--frame-timeout", aa.timeout_s, "seconds to wait for each frame")->capture_default_str();
  att->add_option("--field", aa.field, "with --remote: the field to view (default: the first)");
  att->add_option("--view", aa.view_size, "with --remote: the view's size WxH")->capture_default_str();
  att->add_option("--encoding", aa.encoding, "with --remote: auto (fitted to the link), u8, u16 or f32")
      ->check(CLI::IsMember({"auto", "u8", "u16", "f32"}))
      ->capture_default_str();
  std::uint64_t steps = 1;
  command(Op::step)->add_option("N", steps)->required();
  std::vector<std::string> assignments;
  std::string preset;
  auto* set = command(Op::set);
  set->add_option("KEY=VALUE", assignments);
  set->add_option("--preset", preset, "apply a named preset first");
  std::string draw_input;
  double draw_x = 0, draw_y = 0, draw_radius = 3;
  bool erase = false;
  auto* draw = command(Op::draw);
  draw->add_option("INPUT", draw_input)->required();
  draw->add_option("X", draw_x, "grid column of the disc's centre")->required();
  draw->add_option("Y", draw_y, "grid row of the disc's centre (0 at the top)")->required();
  draw->add_option("--radius", draw_radius, "in cells")->capture_default_str();
  draw->add_flag("--erase", erase, "clear the disc instead of filling it");
  std::string checkpoint_path;
  bool no_wait = false;
  auto* ckpt = command(Op::checkpoint);
  ckpt->add_option("PATH", checkpoint_path, "the file (default: step-N.h5 in the daemon's checkpoint directory)");
  ckpt->add_flag("--no-wait", no_wait, "return once the daemon has the request");
  CLI11_PARSE(app, argc, argv);
  if (!gateways.empty()) opts.remote = gateways.front();
  opts.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  if (std::sscanf(aa.view_size.c_str(), "%dx%d", &aa.view_w, &aa.view_h) != 2 || aa.view_w < 1 || aa.view_h < 1) {
    std::fprintf(stderr, "cuview-ctl: --view '%s' is not WxH (e.g. 1280x720)\n", aa.view_size.c_str());
    return 2;
  }

  try {
    if (*sims) return list_simulations(json);
    if (*keygen) {
      const std::filesystem::path file =
          key_file.empty() ? cuview::remote::default_client_key() : std::filesystem::path(key_file);
      const bool existed = std::filesystem::exists(file);
      char host[256] = {};
      ::gethostname(host, sizeof host - 1);
      const char* user = std::getenv("USER");
      const auto key = cuview::remote::load_or_create_keypair(file, std::string(user ? user : "user") + "@" + host);
      std::printf("%s %s (public key in %s.pub)\n", existed ? "kept the existing key" : "made a new key",
                  file.c_str(), file.c_str());
      std::printf("add this line to ~/.config/cuview/authorized_keys on the gateway's host:\n%s %s@%s\n",
                  key.public_key.c_str(), user ? user : "user", host);
      return 0;
    }
    if (*list) {
      nlohmann::json out = nlohmann::json::array();
      std::vector<cuview::RunningInstance> instances;
      // Where each instance is reached: here, or through the gateway that lists it.
      std::map<std::string, std::string> through;
      if (gateways.empty()) {
        instances = cuview::list_instances();
      } else {
        for (const auto& url : gateways) {
          auto host = cuview::RemoteHost::connect(url, "cuview-ctl list", std::max(opts.timeout, 5000ms));
          for (const auto& p : host.publishers()) {
            // Parts are listed as NAME/part-K: folded into one line per run.
            const auto a = cuview::parse_publisher_address(p.name);
            auto it = std::find_if(instances.begin(), instances.end(), [&](const auto& i) { return i.name == a.name; });
            if (it == instances.end()) it = instances.insert(instances.end(), {a.name, 0, {}});
            if (a.part) it->here.push_back(*a.part);
            if (!through.count(a.name) || a.part == 0u) through[a.name] = url;
          }
        }
        for (auto& i : instances) {
          std::sort(i.here.begin(), i.here.end());
          while (i.parts < i.here.size() && i.here[i.parts] == i.parts) ++i.parts;
        }
      }
      for (const auto& [n, parts, here] : instances) {
        auto o = opts;
        o.name = n;
        o.import = cuview::Import::control_only;
        if (auto it = through.find(n); it != through.end()) o.remote = it->second;
        // A run of parts is listed once, as its part 0 (which steers it) sees it; parts of a run
        // whose part 0 is elsewhere, as the first of them.
        if (!here.empty()) o.part = parts > 0 ? 0 : here.front();
        std::string shown = n;
        if (parts > 0) shown += " (" + std::to_string(parts) + " parts)";
        if (parts == 0 && !here.empty()) {
          std::string ks;
          for (auto k : here) ks += (ks.empty() ? "" : ",") + std::to_string(k);
          shown += " (parts " + ks + "; part 0 elsewhere)";
        }
        try {
          auto s = o.remote.empty() ? Client::attach(o).stats() : cuview::RemoteClient::attach(o).stats();
          const auto w = s.part ? s.part->global_width : s.width, h = s.part ? s.part->global_height : s.height;
          if (json) {
            out.push_back(cuview::proto::to_json(s));
            if (!here.empty()) out.back()["parts_here"] = here;
          } else {
            std::printf("%-16s %s %ux%u on %s, %s, step %llu\n", shown.c_str(), s.sim.c_str(), w, h,
                        s.backend.c_str(), s.paused ? "paused" : "running", static_cast<unsigned long long>(s.step));
          }
        } catch (const cuview::Error& e) {
          if (json)
            out.push_back(nlohmann::json{{"name", n}, {"error", e.what()}});
          else
            std::printf("%-16s (not answering: %s)\n", shown.c_str(), e.what());
        }
      }
      if (json) std::cout << out.dump(2) << "\n";
      return 0;
    }
    if (*att) return attach(opts, gateways, aa);
    opts.client = "cuview-ctl " + app.get_subcommands().front()->get_name();
    opts.import = cuview::Import::control_only;
    const auto op = op_of.at(app.get_subcommands().front());
    // The run the name and --remote denote (cuview::open): status of a run of parts shows every
    // part; everything else goes to part 0, which steers the run (it hands each request to all
    // parts at one step) and describes its own block.
    auto run = cuview::open(cuview::OpenOptions{opts.name, gateways, opts.client, opts.import, opts.timeout});
    if (op == Op::stats && run->decomposed()) {
      const auto parts = run->stats();
      if (json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& s : parts) out.push_back(cuview::proto::to_json(s));
        std::cout << out.dump(2) << "\n";
      } else {
        print_part_status(parts);
      }
      return 0;
    }
    cuview::Attachment& client = run->leader();
    switch (op) {
      case Op::stats: {
        const auto status = client.stats();
        if (json)
          std::cout << cuview::proto::to_json(status).dump(2) << "\n";
        else
          print_status(status);
        break;
      }
      case Op::describe:
        print_description(client.description());
        if (const auto& p = client.description().part)
          std::printf("  part %u of %u (rank %d on %s, group %s): the grid above is its block, at (%u, %u) in the "
                      "global grid of %ux%u; `status` shows every part\n",
                      p->index, p->count, p->rank, p->host.c_str(), p->group.c_str(), p->offset_x, p->offset_y,
                      p->global_width, p->global_height);
        break;
      case Op::pause: client.pause(); break;
      case Op::resume: client.resume(); break;
      case Op::step: client.step(steps); break;
      case Op::set: {
        const auto values = parse_assignments(assignments, preset);
        if (!values) return 2;
        client.set(*values, preset.empty() ? std::nullopt : std::optional<std::string>(preset));
        break;
      }
      case Op::reset: client.reset(); break;
      case Op::draw: client.draw({draw_input, draw_x, draw_y, draw_radius, erase ? 0 : 1}); break;
      case Op::checkpoint: {
        const std::string path = checkpoint_path.empty()
                                     ? std::string()
                                     : std::filesystem::absolute(checkpoint_path).lexically_normal().string();
        const auto ticket = client.checkpoint(path);
        if (no_wait) {
          std::printf("checkpoint %llu requested\n", static_cast<unsigned long long>(ticket));
          return 0;
        }
        print_checkpoint(client.wait_checkpoint(ticket, std::max(opts.timeout, std::chrono::milliseconds(600000))));
        break;
      }
      case Op::shutdown: client.shutdown(); break;
      case Op::hello:
      case Op::handles:
      case Op::detach: break;  // no subcommand: attach and its destructor send these
    }
    return 0;
  } catch (const cuview::Error& e) {
    std::fprintf(stderr, "cuview-ctl: %s [%s]\n", e.what(), std::string(cuview::to_string(e.code())).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-ctl: unexpected error: %s\n", e.what());
    return 1;
  }
}
