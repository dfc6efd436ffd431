// The subcommands that are one request each (the protocol's op table: status, describe, pause,
// resume, step, set, reset, draw, checkpoint, shutdown), to the run the name and --remote denote.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "cuview/protocol_json.hpp"

namespace cuview::ctl {

namespace {
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

int control(const Target& t, proto::Op op, const ControlArgs& a) {
  using Op = proto::Op;
  const bool json = t.json;
  // The run the name and --remote denote (cuview::open): status of a run of parts shows every
  // part; everything else goes to part 0, which steers the run (it hands each request to all
  // parts at one step) and describes its own block.
  std::string command;
  for (const auto& spec : proto::kOps)
    if (spec.op == op) command = spec.command;
  auto run = open(t.open("cuview-ctl " + command, Import::control_only));
  if (op == Op::stats && run->decomposed()) {
    const auto parts = run->stats();
    if (json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& s : parts) out.push_back(proto::to_json(s));
      std::cout << out.dump(2) << "\n";
    } else {
      print_part_status(parts);
    }
    return 0;
  }
  Attachment& client = run->leader();
  switch (op) {
    case Op::stats: {
      const auto status = client.stats();
      if (json)
        std::cout << proto::to_json(status).dump(2) << "\n";
      else
        print_status(status);
      break;
    }
    case Op::describe:
      if (json) {
        std::cout << proto::to_json(client.description()).dump(2) << "\n";
        break;
      }
      print_description(client.description());
      if (const auto& p = client.description().part) {
        const std::string at = position_text(p->offset);
        std::printf(
            "  part %u of %u (rank %d on %s, group %s): the grid above is its block, at %s in the "
            "global grid of %s; `status` shows every part\n",
            p->index, p->count, p->rank, p->host.c_str(), p->group.c_str(), at.c_str(),
            Extent{p->global_dims}.text().c_str());
      }
      break;
    case Op::pause:
      client.pause();
      break;
    case Op::resume:
      client.resume();
      break;
    case Op::step:
      client.step(a.steps);
      break;
    case Op::set: {
      const auto values = parse_assignments(a.assignments, a.preset);
      if (!values) return 2;
      client.set(*values, a.preset.empty() ? std::nullopt : std::optional<std::string>(a.preset));
      break;
    }
    case Op::reset:
      client.reset();
      break;
    case Op::draw:
      client.draw({a.draw_input, a.draw_x, a.draw_y, a.draw_radius, a.erase ? 0 : 1, a.draw_z});
      break;
    case Op::checkpoint: {
      const std::string path = a.checkpoint_path.empty()
                                   ? std::string()
                                   : std::filesystem::absolute(a.checkpoint_path).lexically_normal().string();
      const auto ticket = client.checkpoint(path);
      if (a.no_wait) {
        std::printf("checkpoint %llu requested\n", static_cast<unsigned long long>(ticket));
        return 0;
      }
      print_checkpoint(client.wait_checkpoint(ticket, std::max(t.timeout, std::chrono::milliseconds(600000))));
      break;
    }
    case Op::shutdown:
      client.shutdown();
      break;
    case Op::hello:
    case Op::handles:
    case Op::detach:
    case Op::render:
      break;  // no subcommand: attach and its destructor send these; pictures are the viewer's
  }
  return 0;
}

}  // namespace cuview::ctl
