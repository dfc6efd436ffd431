// What cuview-ctl prints: status, descriptions, checkpoints, the parts of a run.
#include <cstdio>
#include <ctime>

#include "commands.hpp"

namespace cuview::ctl {

namespace {
std::string clock_time(double unix_time) {
  const auto t = static_cast<std::time_t>(unix_time);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}
}  // namespace

void print_checkpoint(const proto::CheckpointStatus& c) {
  std::printf("checkpoint of step %llu written to %s (%.1f MiB; the simulation waited %.1f ms, writing took %.0f ms)\n",
              static_cast<unsigned long long>(c.step), c.path.c_str(), static_cast<double>(c.bytes) / (1 << 20),
              c.stall_ms, c.write_ms);
}

void print_status(const proto::Stats& s) {
  std::printf("%s: %s %s on %s (%s), shared by %s, %s\n", s.name.c_str(), s.sim.c_str(),
              Extent{s.dims}.text().c_str(), s.backend.c_str(), s.device.c_str(), s.sharing.c_str(), s.paused ? "paused" : "running");
  std::printf("  step %llu (t = %.1f), %.0f steps/s\n", static_cast<unsigned long long>(s.step), s.sim_time,
              s.steps_per_second);
  if (s.readers == 0)  // the publisher copies nothing then (docs/architecture.md, "No reader, no copy")
    std::printf("  frames %llu published, none while nobody reads; %u slots\n",
                static_cast<unsigned long long>(s.frames_published), s.slots);
  else
    std::printf("  frames %llu published (%.1f/s), %llu skipped; %u slots, %u held\n",
                static_cast<unsigned long long>(s.frames_published), s.frames_per_second,
                static_cast<unsigned long long>(s.frames_skipped), s.slots, s.held_slots);
  std::printf("  %s\n", proto::cost_text(s).c_str());
  if (s.pictures > 0)  // cast for viewers (`render`), inside the cost
    std::printf("  pictures %llu cast from every cell, the newest in %.1f ms\n",
                static_cast<unsigned long long>(s.pictures), s.picture_ms);
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

void print_part_status(const std::vector<proto::Stats>& parts) {
  const auto& s0 = parts.front();
  const auto& p0 = *s0.part;
  std::printf("%s: %s %s in %zu parts on %s (group %s), %s\n", s0.name.c_str(), s0.sim.c_str(),
              Extent{p0.global_dims}.text().c_str(), parts.size(), s0.backend.c_str(), p0.group.c_str(), s0.paused ? "paused" : "running");
  std::uint64_t lo = UINT64_MAX, hi = 0, published = 0, skipped = 0;
  double slowest = 0, fewest_fps = 0;
  std::uint32_t held = 0, readers = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const auto& s = parts[k];
    const auto& p = *s.part;
    const std::string rank = p.rank >= 0 ? std::to_string(p.rank) : "-";
    // The block's cells along each axis, slowest first: a volume's slab names its layers too.
    const auto start = p.offset, dims = s.dims;
    std::string block;
    for (std::size_t a = 0; a < dims.size() && a < start.size(); ++a) {
      const char* axis = dims.size() - a == 3 ? "layers" : dims.size() - a == 2 ? "rows" : "cols";
      block += std::string(block.empty() ? "" : " ") + axis + " " + std::to_string(start[a]) + "-" +
               std::to_string(start[a] + dims[a] - 1);
    }
    std::printf(
        "  part %u  rank %s  on %s  %s  %s  step %llu  %.0f steps/s  %.1f frames/s  "
        "%u reading  %u/%u held  cost %s of %s%s\n",
        p.index, rank.c_str(), p.host.c_str(), s.device.c_str(), block.c_str(), static_cast<unsigned long long>(s.step),
        s.steps_per_second, s.frames_per_second, s.readers, s.held_slots, s.slots, proto::percent_text(s.cost).c_str(),
        s.max_cost < 1 ? proto::percent_text(s.max_cost).c_str() : "no budget", s.limited_by == "budget" ? " (the budget sets the rate)" : "");
    lo = std::min(lo, s.step), hi = std::max(hi, s.step);
    slowest = k == 0 ? s.steps_per_second : std::min(slowest, s.steps_per_second);
    fewest_fps = k == 0 ? s.frames_per_second : std::min(fewest_fps, s.frames_per_second);
    published += s.frames_published, skipped += s.frames_skipped;
    held += s.held_slots, readers = std::max(readers, s.readers);
  }
  std::printf(
      "  %zu parts: steps %llu-%llu, slowest part %.0f steps/s and %.1f frames/s; frames %llu published, "
      "%llu skipped; %u reading, %u slots held in all\n",
      parts.size(), static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi), slowest, fewest_fps,
      static_cast<unsigned long long>(published), static_cast<unsigned long long>(skipped), readers, held);
  std::printf("  params:");
  for (const auto& [k, v] : s0.params) std::printf(" %s=%g", k.c_str(), v);
  std::printf("\n");
}

void print_description(const proto::DescribeResult& d) {
  std::printf("%s %s on %s (%s), session %s, %u slots of %llu bytes\n", d.sim.c_str(),
              Extent{d.dims}.text().c_str(), d.backend.c_str(), d.device.c_str(), d.session.c_str(), d.slots,
              static_cast<unsigned long long>(d.slot_bytes));
  auto shape = [](const proto::FieldDesc& f) {
    std::string s;
    for (auto n : f.shape) s += (s.empty() ? "" : ", ") + std::to_string(n);
    return "[" + s + "]";
  };
  // Each grid's coordinates, fastest axis first as a size is written: "x from 2 by 0.125".
  for (const auto& g : d.grids) {
    std::string axes;
    for (std::size_t k = g.dims.size(); k-- > 0;) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s from %g by %g", k < g.axes.size() ? g.axes[k].c_str() : "?",
                    k < g.origin.size() ? g.origin[k] : 0.0, k < g.spacing.size() ? g.spacing[k] : 1.0);
      axes += (axes.empty() ? "" : ", ") + std::string(buf);
    }
    std::printf("  grid %s %s: %s%s\n", g.name.c_str(), Extent{g.dims}.text().c_str(), axes.c_str(),
                g.units.empty() ? "" : (" (" + g.units + ")").c_str());
  }
  for (const auto& in : d.inputs)
    std::printf("  input %s (%s): %s\n", in.name.c_str(), in.kind.c_str(), in.help.c_str());
  for (const auto& f : d.fields)  // on its grid, when the run has several
    std::printf("  field %-3s %s %s%s at offset %llu: %s\n", f.name.c_str(), f.dtype.c_str(), shape(f).c_str(),
                d.grids.size() > 1 ? (" on " + d.grid_of(f).name).c_str() : "",
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

namespace {
/// How a part's frames reach this process: its sharing mechanism, or fetched through a gateway.
std::string shared_by(const Attachment& part) {
  if (const auto* local = dynamic_cast<const Client*>(&part)) return local->sharing();
  return "fetching through " + part.via();
}
}  // namespace

void print_attached(const Run& g, const std::string& name) {
  const auto& lead = g.leader();
  const auto& d = lead.description();
  if (!g.decomposed()) {
    std::printf("attached to '%s' session %s: %s %s on %s (%s), %u slots shared by %s\n", name.c_str(),
                lead.hello().session.c_str(), d.sim.c_str(), Extent{d.dims}.text().c_str(), d.backend.c_str(),
                d.device.c_str(), d.slots, shared_by(lead).c_str());
    return;
  }
  std::printf("attached to '%s' group %s: %s %s in %zu parts on %s, shared by %s\n", name.c_str(),
              g.group_id().c_str(), d.sim.c_str(), g.extent().text().c_str(), g.size(), d.backend.c_str(),
              shared_by(lead).c_str());
  for (std::size_t k = 0; k < g.size(); ++k) {
    const auto& c = g.part(k);
    const auto& p = g.part_desc(k);
    const Block b = g.block(k);
    std::printf("  part %u (rank %d on %s, pid %d, %s): block %s at %s, session %s, %u slots\n", p.index, p.rank,
                p.host.c_str(), c.hello().daemon_pid, c.description().device.c_str(), Extent{b.dims}.text().c_str(),
                position_text(b.offset).c_str(), c.hello().session.c_str(), c.description().slots);
  }
}

}  // namespace cuview::ctl
