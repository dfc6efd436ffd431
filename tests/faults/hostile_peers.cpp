// Hostile peers: random, truncated, oversized, multi-part and out-of-order messages on raw sockets,
// while a well-behaved client is served.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <zmq.hpp>

#include "campaign.hpp"
#include "cuview/client.hpp"
#include "cuview/protocol.hpp"
#include "cuview/runtime_dir.hpp"

using namespace cuview::test;
using namespace std::chrono_literals;

namespace cuview::faults {

std::vector<Row> hostile(const Config& c) {
  RuntimeDir rt;
  auto daemon = daemon_for(c, "f");
  Row row{"hostile peers: random, truncated, oversized, multi-part and out-of-order messages for " +
          std::to_string(c.hostile.count()) + " s"};
  Row good{"a well-behaved client served during the hostile run"};
  std::atomic<bool> done{false};
  std::atomic<int> good_frames{0};
  double worst_stats_ms = 0;
  std::string good_problem;
  std::thread well_behaved([&] {
    try {
      auto client = Client::attach(AttachOptions{.name = "f", .client = "faults good client"});
      while (!done) {
        auto f = client.next_frame(10s);
        if (!f) throw std::runtime_error("no frame within 10 s");
        if (auto bad = f->verify()) throw std::runtime_error(*bad);
        ++good_frames;
        const auto t = Clock::now();
        (void)client.stats();
        worst_stats_ms = std::max(worst_stats_ms, ms_since(t));
      }
    } catch (const std::exception& e) {
      good_problem = e.what();
    }
  });
  std::mt19937_64 rng(c.seed);
  zmq::context_t ctx;
  const std::string endpoint = InstancePaths("f").control_endpoint();
  const std::string session = stats("f").session;
  auto fresh_socket = [&] {
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::rcvtimeo, 3000);
    s.connect(endpoint);
    return s;
  };
  auto sock = fresh_socket();
  std::uint64_t sent = 0, answered = 0, dropped_by_design = 0;
  const std::string hello = proto::encode_request("hello", 1, "", proto::HelloArgs{"hostile", ::getpid()});
  const auto end = Clock::now() + c.hostile;
  while (Clock::now() < end) {
    std::vector<std::string> parts;
    bool expect_reply = true, ok_allowed = false;
    switch (rng() % 7) {
      case 0: {  // random bytes
        std::string b(rng() % 2048, '\0');
        for (auto& ch : b) ch = static_cast<char>(rng());
        parts = {b};
        break;
      }
      case 1: {  // a valid request cut short
        const auto full = proto::encode_request("set", rng(), session,
                                                proto::SetArgs{std::map<std::string, double>{{"F", 0.03}}, {}});
        parts = {full.substr(0, 1 + rng() % (full.size() - 1))};
        break;
      }
      case 2:  // over the 64 KiB request limit: answered with an error
        parts = {std::string(64 * 1024 + 1 + rng() % 4096, '\x90')};
        break;
      case 3:  // over the 1 MiB wire limit: ZeroMQ drops the connection, by design
        parts = {std::string(2 << 20, 'x')};
        expect_reply = false;
        break;
      case 4: {  // several parts
        parts.resize(2 + rng() % 4, "junk");
        break;
      }
      case 5: {  // out of order: ops before hello on a new connection, or hello twice
        sock = fresh_socket();
        const char* ops[] = {"handles", "detach", "step", "shutdown", "set"};
        parts = {proto::encode_request(ops[rng() % 5], rng(), session, proto::NoArgs{})};
        break;
      }
      default:  // well-formed, legal: hello (again)
        parts = {hello};
        ok_allowed = true;
        break;
    }
    for (std::size_t i = 0; i < parts.size(); ++i)
      sock.send(zmq::buffer(parts[i]), i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
    ++sent;
    ++row.trials;
    if (!expect_reply) {
      ++dropped_by_design;
      sock = fresh_socket();
      continue;
    }
    zmq::message_t m;
    if (!sock.recv(m)) {
      row.fail("no answer to message " + std::to_string(sent) + " (kind " + std::to_string(parts.size()) + " parts)");
      sock = fresh_socket();
      continue;
    }
    ++answered;
    try {
      const auto r = proto::decode_reply(m.to_string_view());
      if (r.ok && !ok_allowed) row.fail("a hostile message was accepted");
      if (!r.ok && r.error.message.empty()) row.fail("an error without a message");
    } catch (const std::exception& e) {
      row.fail(std::string("an undecodable reply: ") + e.what());
    }
  }
  done = true;
  well_behaved.join();
  if (!daemon.running()) row.fail("the daemon exited: " + daemon.err());
  const auto after = stats("f");
  ++good.trials;
  if (!good_problem.empty()) good.fail(good_problem);
  if (good_frames.load() == 0) good.fail("it received no frame");
  row.worst = std::to_string(answered) + " answered with structured errors, " + std::to_string(dropped_by_design) +
              " oversized connections dropped by the 1 MiB limit; daemon still stepping (step " +
              std::to_string(after.step) + ")";
  good.worst =
      std::to_string(good_frames.load()) + " frames verified; slowest stats call " + fmt(worst_stats_ms, 1) + " ms";
  return {row, good};
}

}  // namespace cuview::faults
