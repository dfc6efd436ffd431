// `cuview-ctl list`, `sims` and `keygen`: what runs (here, or on the hosts of --remote), what
// --sim can run, and this user's CURVE key.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "builtin_simulations.hpp"
#include "commands.hpp"
#include "cuview/protocol_json.hpp"
#include "cuview/remote/curve_keys.hpp"
#include "cuview/runtime_dir.hpp"

namespace cuview::ctl {
using namespace std::chrono_literals;

/// `sims`: the built-in simulations, from the list made when cuview was built (compute/tools/
/// sims_manifest.cpp: each made on the host at a small grid just to read what it declares), so that
/// cuview-ctl runs none of them and links none.
int list_simulations(bool json) {
  const auto out = nlohmann::json::parse(kBuiltinSimulationsJson);
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

int make_key(const std::string& key_file) {
  const std::filesystem::path file = key_file.empty() ? remote::default_client_key() : std::filesystem::path(key_file);
  const bool existed = std::filesystem::exists(file);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const char* user = std::getenv("USER");
  const auto key = remote::load_or_create_keypair(file, std::string(user ? user : "user") + "@" + host);
  std::printf("%s %s (public key in %s.pub)\n", existed ? "kept the existing key" : "made a new key", file.c_str(),
              file.c_str());
  std::printf("add this line to ~/.config/cuview/authorized_keys on the gateway's host:\n%s %s@%s\n",
              key.public_key.c_str(), user ? user : "user", host);
  return 0;
}

int list_runs(const Target& t) {
  const auto& gateways = t.remote;
  const bool json = t.json;
  AttachOptions opts;
  opts.client = "cuview-ctl";
  opts.timeout = t.timeout;
  nlohmann::json out = nlohmann::json::array();
  std::vector<RunningInstance> instances;
  // Where each instance is reached: here, or through the gateway that lists it.
  std::map<std::string, std::string> through;
  if (gateways.empty()) {
    instances = cuview::list_instances();
  } else {
    for (const auto& url : gateways) {
      auto host = RemoteHost::connect(url, "cuview-ctl list", std::max(opts.timeout, 5000ms));
      for (const auto& p : host.publishers()) {
        // Parts are listed as NAME/part-K: folded into one line per run.
        const auto a = parse_publisher_address(p.name);
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
    o.import = Import::control_only;
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
      auto s = o.remote.empty() ? Client::attach(o).stats() : RemoteClient::attach(o).stats();
      const Extent grid{s.run_dims()};  // every axis: 40x30x16 for a volume
      if (json) {
        out.push_back(proto::to_json(s));
        if (!here.empty()) out.back()["parts_here"] = here;
      } else {
        std::printf("%-16s %s %s on %s, %s, step %llu\n", shown.c_str(), s.sim.c_str(), grid.text().c_str(),
                    s.backend.c_str(),
                    s.paused ? "paused" : "running", static_cast<unsigned long long>(s.step));
      }
    } catch (const Error& e) {
      if (json)
        out.push_back(nlohmann::json{{"name", n}, {"error", e.what()}});
      else
        std::printf("%-16s (not answering: %s)\n", shown.c_str(), e.what());
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace cuview::ctl
