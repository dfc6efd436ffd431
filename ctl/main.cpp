// cuview-ctl: the command-line client. main() is a table: each subcommand's options, then the
// function that runs it (commands.hpp); the one-request subcommands come from the protocol's op
// table with its summaries.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "commands.hpp"

int main(int argc, char** argv) {
  using namespace cuview::ctl;
  using Op = cuview::proto::Op;
  Target target;
  double timeout_s = 3;
  CLI::App app{"cuview-ctl: inspect and steer a running cuview-compute daemon."};
  app.set_version_flag("--version", "cuview-ctl " CUVIEW_VERSION);
  app.add_option("--name", target.name, "instance name of the daemon")->capture_default_str();
  app.add_option("--timeout", timeout_s, "seconds to wait for each answer")->capture_default_str();
  app.add_option("--remote", target.remote,
                 "the daemon runs on another host: reach it through its cuview-gateway at ssh://[user@]host[:port], "
                 "tcp://host:port[?key=KEY] or unix:PATH (docs/remote.md); tcp+listen://ADDR:PORT?key=KEY waits "
                 "there for a gateway that dials out (cuview-gateway --dial). A run of parts over several hosts: "
                 "give --remote once per host");
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, std::function<int()>>> table;

  // The one-request subcommands, from the protocol's op table.
  ControlArgs ca;
  std::map<Op, CLI::App*> sub;
  for (const auto& spec : cuview::proto::kOps) {
    if (spec.command.empty()) continue;
    sub[spec.op] = app.add_subcommand(std::string(spec.command), std::string(spec.summary));
    table.emplace_back(sub[spec.op], [&, op = spec.op] { return control(target, op, ca); });
  }
  sub[Op::stats]->add_flag("--json", target.json, "print JSON");
  sub[Op::describe]->add_flag("--json", target.json, "print JSON (the protocol's describe reply)");
  sub[Op::step]->add_option("N", ca.steps)->required();
  sub[Op::set]->add_option("KEY=VALUE", ca.assignments);
  sub[Op::set]->add_option("--preset", ca.preset, "apply a named preset first");
  auto* draw = sub[Op::draw];
  draw->add_option("INPUT", ca.draw_input)->required();
  draw->add_option("X", ca.draw_x, "grid column of the disc's centre")->required();
  draw->add_option("Y", ca.draw_y, "grid row of the disc's centre (0 at the top)")->required();
  draw->add_option("Z", ca.draw_z, "a volume's layer of the centre: the disc becomes a ball");
  draw->add_option("--radius", ca.draw_radius, "in cells")->capture_default_str();
  draw->add_flag("--erase", ca.erase, "clear the disc instead of filling it");
  auto* ckpt = sub[Op::checkpoint];
  ckpt->add_option("PATH", ca.checkpoint_path, "the file (default: step-N.h5 in the daemon's checkpoint directory)");
  ckpt->add_flag("--no-wait", ca.no_wait, "return once the daemon has the request");

  auto* list = app.add_subcommand("list", "list the daemons running for this user");
  list->add_flag("--json", target.json, "print JSON");
  table.emplace_back(list, [&] { return list_runs(target); });

  auto* sims =
      app.add_subcommand("sims", "list the simulations cuview-compute --sim can run, with their fields and parameters");
  sims->add_flag("--json", target.json, "print JSON");
  table.emplace_back(sims, [&] { return list_simulations(target.json); });

  std::string key_file;
  auto* keygen = app.add_subcommand("keygen",
                                    "make this user's CURVE key for tcp:// gateways (kept if it exists) and print the "
                                    "line to add to the gateway host's ~/.config/cuview/authorized_keys");
  keygen->add_option("--out", key_file, "the secret key's file (default ~/.config/cuview/client.key)");
  table.emplace_back(keygen, [&] { return make_key(key_file); });

  AttachArgs aa;
  auto* att = app.add_subcommand("attach", "import the frame ring and receive frames");
  att->add_option("--frames", aa.frames, "frames to receive")->capture_default_str();
  att->add_flag("--verify", aa.verify, "check every frame is intact (sequence, step and checksum)");
  att->add_option("--hold-ms", aa.hold_ms, "hold each frame this long (a slow viewer)");
  att->add_flag("--reattach", aa.reattach, "when the daemon restarts, attach to the new one and go on");
  att->add_option("--read", aa.read,
                  "read only these fields (comma-separated; the daemon copies only what its readers read); "
                  "default: every field")
      ->delimiter(',');
  att->add_option("--save", aa.save, "write the last frame's slot (raw bytes, layout as in describe) to this file");
  att->add_option("--frame-timeout", aa.timeout_s, "seconds to wait for each frame")->capture_default_str();
  att->add_option("--field", aa.field, "with --remote: the field to view (default: the first)");
  att->add_option("--view", aa.view_size, "with --remote: the view's size WxH")->capture_default_str();
  att->add_option("--plane", aa.plane,
                  "with --remote, a volume: the plane to view, x, y or z, and its index (z=100; default: the "
                  "middle z-plane)");
  att->add_option("--encoding", aa.encoding, "with --remote: auto (fitted to the link), u8, u16 or f32")
      ->check(CLI::IsMember({"auto", "u8", "u16", "f32"}))
      ->capture_default_str();
  table.emplace_back(att, [&] {
    if (std::sscanf(aa.view_size.c_str(), "%dx%d", &aa.view_w, &aa.view_h) != 2 || aa.view_w < 1 || aa.view_h < 1) {
      std::fprintf(stderr, "cuview-ctl: --view '%s' is not WxH (e.g. 1280x720)\n", aa.view_size.c_str());
      return 2;
    }
    return attach(target, aa);
  });

  CLI11_PARSE(app, argc, argv);
  target.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  try {
    for (const auto& [command, run] : table)
      if (*command) return run();
    return 2;  // CLI11 requires a subcommand: not reached
  } catch (const cuview::Error& e) {
    std::fprintf(stderr, "cuview-ctl: %s [%s]\n", e.what(), std::string(cuview::to_string(e.code())).c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-ctl: unexpected error: %s\n", e.what());
    return 1;
  }
}
