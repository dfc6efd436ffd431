// cuview-faults: the reliability campaign. Drives real daemons, viewers and hostile peers,
// and prints, for each scenario, how many trials ran, how many failed and the worst figure seen.
//   cuview-faults [--config short|long] [--backend host|cuda] [--only NAME]... [--out FILE]
// Exit status: 0 when no trial failed. docs/reliability.md holds the results.
// Each scenario is a file of its own beside this one (campaign.hpp lists them); this file parses
// the command line, runs the scenarios asked for and prints the table.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "campaign.hpp"

using namespace cuview::faults;
using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

/// One line of a Markdown table cell.
std::string cell(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '|', '/');
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuview-faults: the reliability campaign (docs/reliability.md)"};
  std::string config = "short", backend = "host", out, probe_sock, probe_seg;
  std::vector<std::string> only, extra;
  app.add_option("--config", config, "short (CI) or long (GPU host)")->check(CLI::IsMember({"short", "long"}));
  app.add_option("--backend", backend, "daemon backend")->check(CLI::IsMember({"host", "cuda"}));
  app.add_option("--only", only,
                 "run only these scenarios: viewers, embedded, lbm, nbody, frozen, daemon, hostile, access, versions, remote");
  app.add_option("--out", out, "append the table to this Markdown file");
  app.add_option("--extra-row", extra, "a row measured elsewhere: 'scenario|trials|failures|worst'");
  app.add_option("--probe-socket", probe_sock)->group("");
  app.add_option("--probe-shm", probe_seg)->group("");
  CLI11_PARSE(app, argc, argv);
  if (!probe_sock.empty()) return probe_socket(probe_sock);
  if (!probe_seg.empty()) return probe_shm(probe_seg);

  Config c;
  c.backend = backend == "cuda" ? Backend::cuda : Backend::host;
  if (config == "long") {
    c.ctl_kills = 200, c.gui_kills = 200, c.daemon_kills = 20, c.embedded_kills = 200;
    c.freeze = 10s, c.slow = 10s, c.hostile = 60s, c.baseline = 5s;
    c.size = c.backend == Backend::cuda ? "2048x2048" : "256x256";
  }
  setenv("QT_QPA_PLATFORM", "offscreen", 1);
  const std::string self = fs::canonical("/proc/self/exe").string();
  auto wanted = [&](const std::string& n) { return only.empty() || std::count(only.begin(), only.end(), n) > 0; };
  std::vector<std::pair<std::string, std::function<std::vector<Row>()>>> scenarios{
      {"viewers", [&] { return viewer_death(c, "cuview-compute", c.ctl_kills, c.gui_kills); }},
      {"embedded", [&] { return viewer_death(c, "embed-wave", c.embedded_kills, c.gui_kills / 2); }},
      {"lbm", [&] { return viewer_death(c, "cuview-compute", c.embedded_kills, c.gui_kills / 2, "lbm"); }},
      {"nbody", [&] { return viewer_death(c, "cuview-compute", c.embedded_kills, c.gui_kills / 2, "nbody"); }},
      {"frozen", [&] { return frozen_and_slow(c); }},
      {"daemon", [&] { return daemon_death(c); }},
      {"hostile", [&] { return hostile(c); }},
      {"access", [&] { return access(c, self); }},
      {"versions", [&] { return versions(c); }},
      {"remote", [&] { return remote_viewers(c); }},
  };
  std::vector<Row> rows;
  for (auto& [name, run] : scenarios) {
    if (!wanted(name)) continue;
    const auto t = Clock::now();
    std::fprintf(stderr, "cuview-faults: %s ...\n", name.c_str());
    try {
      for (auto& r : run()) rows.push_back(std::move(r));
    } catch (const std::exception& e) {
      Row r{name + ": the scenario itself broke"};
      r.trials = 1;
      r.fail(e.what());
      rows.push_back(r);
    }
    std::fprintf(stderr, "cuview-faults: %s done in %.0f s\n", name.c_str(), ms_since(t) / 1000);
  }
  for (const auto& e : extra) {
    std::vector<std::string> f;
    std::stringstream ss(e);
    for (std::string part; std::getline(ss, part, '|');) f.push_back(part);
    if (f.size() != 4) continue;
    Row r(f[0]);
    r.trials = std::stoi(f[1]);
    r.failures = std::stoi(f[2]);
    r.worst = f[3];
    rows.push_back(r);
  }

  std::ostringstream table;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const auto now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  table << "\n### " << backend << " backend, " << config << " configuration — " << date << "\n\n";
  table << "| scenario | trials | failures | worst seen |\n| --- | --- | --- | --- |\n";
  int failures = 0;
  for (const auto& r : rows) {
    table << "| " << cell(r.scenario) << " | " << r.trials << " | " << r.failures << " | " << cell(r.worst);
    for (const auto& p : r.problems) table << "<br>FAILED: " << cell(p);
    table << " |\n";
    failures += r.failures;
  }
  std::cout << table.str() << std::flush;
  if (!out.empty()) std::ofstream(out, std::ios::app) << table.str();
  return failures == 0 ? 0 : 1;
}
