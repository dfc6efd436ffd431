// cuview-ctl's subcommands, one file per kind: what each prints (print.cpp), attach (attach.cpp),
// the listings and keys (listing.cpp), the one-request commands of the protocol's op table
// (control.cpp). main.cpp is the table that parses the command line and runs one of them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cuview/client.hpp"

namespace cuview::ctl {

/// What every subcommand gets from the options before it: the name, the gateways, the timeout.
struct Target {
  std::string name = "default";
  std::vector<std::string> remote;  ///< --remote, once per host; empty: this host
  std::chrono::milliseconds timeout{3000};
  bool json = false;
  /// cuview::open's options for `client`, importing frames or not.
  [[nodiscard]] OpenOptions open(const std::string& client, Import import) const {
    return OpenOptions{name, remote, client, import, timeout};
  }
};

/// `attach`'s options.
struct AttachArgs {
  std::uint64_t frames = 10;
  bool verify = false;
  int hold_ms = 0;
  bool reattach = false;
  double timeout_s = 10;
  std::string save;  ///< write the last frame's slot here
  std::vector<std::string> read;  ///< read only these fields (Run::read_fields); empty: all
  // --remote: views
  std::string field, encoding = "auto", view_size = "640x360";
  std::string plane;  ///< a volume's plane, AXIS or AXIS=INDEX; empty: the middle z-plane
  int view_w = 640, view_h = 360;
};

/// The one-request subcommands' arguments.
struct ControlArgs {
  std::uint64_t steps = 1;
  std::vector<std::string> assignments;
  std::string preset;
  std::string draw_input;
  double draw_x = 0, draw_y = 0, draw_radius = 3;
  std::optional<double> draw_z;  ///< a volume's: the ball's centre along z
  bool erase = false;
  std::string checkpoint_path;
  bool no_wait = false;
};

// Each returns the process's exit code and throws cuview::Error for main() to print.
int attach(const Target& t, const AttachArgs& a);
int control(const Target& t, proto::Op op, const ControlArgs& a);
int list_runs(const Target& t);
int list_simulations(bool json);
int make_key(const std::string& key_file);

// print.cpp
void print_checkpoint(const proto::CheckpointStatus& c);
void print_status(const proto::Stats& s);
/// `status` of a run of parts: one line per part, then what they have in common.
void print_part_status(const std::vector<proto::Stats>& parts);
void print_description(const proto::DescribeResult& d);
/// The first lines `attach` prints: for a whole publisher as ever, for a run of parts one more
/// line per part (where its block lies, where it runs).
void print_attached(const Run& g, const std::string& name);

}  // namespace cuview::ctl
