// The fault campaign's shared pieces (cuview-faults, tests/faults/): its configuration, one row of
// the table it prints, the figures every scenario measures, and the scenarios, one file each.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "process.hpp"

namespace cuview::faults {

using Clock = std::chrono::steady_clock;

struct Config {
  test::Backend backend = test::Backend::host;
  std::string size = "256x256";
  int ctl_kills = 40, gui_kills = 10, daemon_kills = 5, many_viewers = 16, embedded_kills = 20;
  std::chrono::seconds freeze{3}, slow{3}, hostile{5}, baseline{2};
  std::uint64_t seed = 1;
};

struct Row {
  explicit Row(std::string name) : scenario(std::move(name)) {}
  std::string scenario;
  int trials = 0, failures = 0;
  std::string worst;
  std::vector<std::string> problems;  // the first few failures, in words
  void fail(const std::string& why) {
    ++failures;
    if (problems.size() < 3) problems.push_back(why);
  }
};

double ms_since(Clock::time_point t);
std::string fmt(double v, int digits = 1);
test::ChildProcess daemon_for(const Config& c, const std::string& name);
/// Steps per second measured over `window` from the daemon's own step counter.
double step_rate(const std::string& name, std::chrono::seconds window);
/// Device memory in use on GPU 0, MiB (CUDA builds with a usable GPU), else -1.
double device_used_mib(const Config& c);

// The scenarios (cuview-faults --only NAME), each returning its rows of the table.

/// Viewers killed at random moments against `publisher` (cuview-compute, or a program embedding
/// the publisher): the publisher keeps its step rate and memory, and every lease comes back.
std::vector<Row> viewer_death(const Config& c, const std::string& publisher, int ctl_kills, int gui_kills,
                              const std::string& sim = "");
/// A frozen viewer, a slow one and many at once: the daemon keeps stepping and publishing (frozen_and_slow.cpp).
std::vector<Row> frozen_and_slow(const Config& c);
/// The daemon SIGKILLed under attached viewers, then a new one (daemon_death.cpp).
std::vector<Row> daemon_death(const Config& c);
/// Hostile peers on raw sockets beside a well-behaved client (hostile_peers.cpp).
std::vector<Row> hostile(const Config& c);
/// Another Unix user, refused at every door (access.cpp); `self` is this program, for the probes.
std::vector<Row> access(const Config& c, const std::string& self);
/// Remote viewers through cuview-gateway killed, frozen, the gateway killed and restarted under
/// them, malformed messages at its socket (remote.cpp).
std::vector<Row> remote_viewers(const Config& c);
/// Clients of other protocol versions (versions.cpp).
std::vector<Row> versions(const Config& c);

/// The probes cuview-faults runs as the other user (--probe-socket, --probe-shm): 0 when refused.
int probe_socket(const std::string& endpoint);
int probe_shm(const std::string& name);

}  // namespace cuview::faults
