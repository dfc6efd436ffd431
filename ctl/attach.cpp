// `cuview-ctl attach`: frames of the run (of a run of parts: groups of one step from every part),
// verified on request; through gateways, views stating their encoding and error bound.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "commands.hpp"
#include "cuview/view_sampler.hpp"

namespace cuview::ctl {
using namespace std::chrono_literals;

namespace {
/// Why a client waited in vain: "no frame from 'NAME' within 10 s: is it paused …".
std::string no_frame_text(const char* what, const std::string& name, double seconds) {
  char within[32];
  std::snprintf(within, sizeof within, "%g", seconds);
  return std::string("no ") + what + " from '" + name + "' within " + within +
         " s: is it paused (`cuview-ctl --name " + name + " resume`), or are its frames held back " +
         "(`cuview-ctl --name " + name + " status` names what limits them)?";
}

bool retryable(const Error& e) {
  return e.code() == Errc::daemon_gone || e.code() == Errc::no_daemon || e.code() == Errc::timeout;
}

/// Writes a frame's whole slot (fields at their `describe` offsets, then the trailer) to `path`.
void save_slot(const Frame& frame, const proto::DescribeResult& d, const std::string& path) {
  std::vector<std::byte> slot(d.slot_bytes);
  frame.copy_to_host(slot);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(slot.data()), static_cast<std::streamsize>(slot.size()));
  if (!out)
    throw Error(Errc::system, "could not write frame " + std::to_string(frame.info().seq) + " to " + path + ": " +
                                  std::strerror(errno));
  std::printf("saved frame %llu (step %llu, %zu bytes: fields at their describe offsets, then the trailer) to %s\n",
              static_cast<unsigned long long>(frame.info().seq), static_cast<unsigned long long>(frame.info().step),
              slot.size(), path.c_str());
}

/// The views of a run opened through gateways (RemoteGroup: only a remote run has views).
RemoteGroup& views_of(Run& run) {
  auto* views = dynamic_cast<RemoteGroup*>(&run);
  if (views == nullptr)
    throw Error(Errc::internal, "run '" + run.name() + "' opened through gateways has no views; please report this bug");
  return *views;
}

/// `attach --remote`: views instead of frames, each stating its encoding and error bound. With
/// `reattach`, a daemon or gateway that goes away is waited for and attached to again.
int attach_views(const OpenOptions& opts, const AttachArgs& a) {
  const auto& gateways = opts.remote;
  const auto frame_timeout = std::chrono::milliseconds(static_cast<long>(a.timeout_s * 1000));
  RemoteView view;
  std::map<std::string, std::uint64_t> encodings;
  std::uint64_t received = 0, first_seq = 0, last_seq = 0, sessions = 0;
  double worst_bound = 0;
  auto deadline = std::chrono::steady_clock::time_point::max();
  while (received < a.frames) {
    try {
      // A run of parts over several hosts is one group: a gateway per host, views assembled.
      const auto run = open(opts);
      auto& client = views_of(*run);
      deadline = std::chrono::steady_clock::time_point::max();
      ++sessions;
      const auto& d = client.leader().description();
      if (d.fields.empty()) throw Error(Errc::bad_value, "daemon '" + opts.name + "' has no fields");
      ViewWatch w;
      w.field = a.field.empty() ? d.fields.front().name : a.field;
      // The grid the field lies on: the whole run's (a run of parts decomposes its first grid).
      const Extent whole = d.part ? client.extent() : Extent{d.for_field(w.field).dims};
      w.encoding = a.encoding;
      // A volume is viewed a plane at a time: --plane, or the middle z-plane.
      const auto& dims = whole.dims;
      std::uint32_t cols = whole.width(), rows = whole.height();
      if (dims.size() == 3) {
        Slice slice;
        const auto eq = a.plane.find('=');
        slice.axis = slice_axis_named(a.plane.empty() ? "z" : a.plane.substr(0, eq));
        const auto along = dims[slice.axis == SliceAxis::z ? 0 : slice.axis == SliceAxis::y ? 1 : 2];
        slice.index = along / 2;
        if (eq != std::string::npos) {
          const std::string index = a.plane.substr(eq + 1);
          char* end = nullptr;
          const unsigned long v = std::strtoul(index.c_str(), &end, 10);
          if (index.empty() || *end != '\0' || v >= along)
            throw Error(Errc::bad_value, "--plane " + a.plane + ": the index must be a whole number below " +
                                             std::to_string(along) + ", the cells along " + to_string(slice.axis));
          slice.index = static_cast<std::uint32_t>(v);
        }
        const auto pd = plane_dims(dims, slice.axis);
        rows = pd[0], cols = pd[1];
        w.slice = slice;
      } else if (!a.plane.empty()) {
        throw Error(Errc::bad_value, "--plane " + a.plane + ": daemon '" + opts.name +
                                         "' publishes a grid of " + std::to_string(dims.size()) +
                                         " axes, not a volume; leave --plane out");
      }
      w.region = ViewRegion::fit(static_cast<int>(cols), static_cast<int>(rows), a.view_w, a.view_h, 1, cols / 2.0,
                                 rows / 2.0);
      client.watch(w);
      std::string through;
      for (const auto& g : gateways) through += (through.empty() ? "" : ", ") + g;
      const std::string plane =
          w.slice ? std::string(" (plane ") + to_string(w.slice->axis) + "=" + std::to_string(w.slice->index) + ")" : "";
      std::printf("attached to '%s' session %s through %s: %s %s on %s (%s); views of %s%s, %dx%d, encoding %s\n",
                  opts.name.c_str(), client.leader().hello().session.c_str(), through.c_str(), d.sim.c_str(),
                  whole.text().c_str(), d.backend.c_str(), d.device.c_str(), w.field.c_str(), plane.c_str(), a.view_w,
                  a.view_h, a.encoding.c_str());
      for (std::size_t k = 0; client.decomposed() && k < client.size(); ++k) {
        const auto& p = client.part_desc(k);
        const Block b = client.block(k);
        std::printf("  part %u (rank %d on %s, %s) through %s: block %s at %s\n", p.index, p.rank, p.host.c_str(),
                    client.part(k).description().device.c_str(),
                    gateways.size() == 1 ? gateways.front().c_str() : "its host's gateway",
                    Extent{b.dims}.text().c_str(), position_text(b.offset).c_str());
      }
      std::fflush(stdout);
      while (received < a.frames) {
        if (!client.next_view(view, frame_timeout))
          throw Error(Errc::timeout, no_frame_text("view", opts.name, a.timeout_s));
        if (received == 0) first_seq = view.header.seq;
        last_seq = view.header.seq;
        ++received;
        ++encodings[view.header.encoding];
        worst_bound = std::max(worst_bound, view.header.error_bound);
        if (a.hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.hold_ms));
      }
    } catch (const Error& e) {
      if (!a.reattach || !retryable(e)) throw;
      if (deadline == std::chrono::steady_clock::time_point::max()) {
        std::printf("gone (%s); waiting to re-attach\n", e.what());
        std::fflush(stdout);
        deadline = std::chrono::steady_clock::now() + frame_timeout;
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(Errc::no_daemon, "daemon '" + opts.name + "' through " + gateways.front() +
                                         " did not come back within " + std::to_string(a.timeout_s) + " s (" +
                                         e.what() + ")");
      std::this_thread::sleep_for(100ms);
    }
  }
  std::string enc;
  for (const auto& [e, n] : encodings) enc += (enc.empty() ? "" : ", ") + e + " " + std::to_string(n);
  std::printf(
      "received %llu views (seq %llu..%llu; encodings: %s; largest error bound %.6g, last range [%g, %g]) "
      "from %llu session(s)\n",
      static_cast<unsigned long long>(received), static_cast<unsigned long long>(first_seq),
      static_cast<unsigned long long>(last_seq), enc.c_str(), worst_bound, view.header.lo, view.header.hi,
      static_cast<unsigned long long>(sessions));
  return 0;
}

/// Receives frames (of a run of parts: groups of one step from every part); returns the process
/// exit code. With `reattach`, a daemon (or part) that goes away is waited for (up to the frame
/// timeout) and its successor attached.
int attach_frames(const OpenOptions& base, const AttachArgs& a) {
  auto opts = base;
  std::uint64_t received = 0, verified = 0, sessions = 0, first_seq = 0, last_seq = 0, gaps = 0;
  std::string held;  // the fields the last frame held
  const auto frame_timeout = std::chrono::milliseconds(static_cast<long>(a.timeout_s * 1000));
  std::string last_session;
  auto deadline = std::chrono::steady_clock::time_point::max();  // set while waiting for a successor
  bool first_attempt = true, decomposed = false;
  while (received < a.frames) {
    std::unique_ptr<Run> group;
    try {
      group = open(opts);
      if (group->leader().hello().session == last_session)  // the old daemon, still shutting down
        throw Error(Errc::daemon_gone, "daemon '" + opts.name + "' is shutting down");
    } catch (const Error& e) {
      // A name with no daemon at all fails at once; a daemon that went away is waited for.
      const bool give_up = !a.reattach || !retryable(e) || (first_attempt && e.code() == Errc::no_daemon);
      first_attempt = false;
      if (give_up) throw;
      if (deadline == std::chrono::steady_clock::time_point::max())
        deadline = std::chrono::steady_clock::now() + frame_timeout;
      if (std::chrono::steady_clock::now() > deadline)
        throw Error(Errc::no_daemon, "daemon '" + opts.name + "' did not come back within " +
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
    if (!a.read.empty()) group->read_fields(a.read);
    try {
      std::uint64_t prev = 0;
      while (received < a.frames) {
        auto frames = group->next(frame_timeout);
        if (!frames)
          throw Error(Errc::timeout, no_frame_text("frame", opts.name, a.timeout_s));
        // Sequence numbers (and so gaps) are part 0's: every part counts its own.
        const auto& info = frames->part(0).info();
        if (received == 0) {
          first_seq = info.seq;
          // Where the time to the first frame went (attach_phases), as a daemon's start log says it.
          std::printf("first frame after %s\n", group->part(0).attach_phases().c_str());
          std::fflush(stdout);  // for whoever waits on it, e.g. through a pipe or file
        }
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
        held.clear();
        const auto& fields = group->leader().description().fields;
        for (std::size_t i = 0; i < fields.size(); ++i)
          if (frames->part(0).holds(i)) held += (held.empty() ? "" : ", ") + fields[i].name;
        if (a.hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(a.hold_ms));
        if (received == a.frames && !a.save.empty()) {
          if (!decomposed)
            save_slot(frames->part(0), group->leader().description(), a.save);
          else  // one file per part, each the part's own slot layout
            for (std::size_t k = 0; k < frames->size(); ++k)
              save_slot(frames->part(k), group->part(k).description(), a.save + ".part-" + std::to_string(k));
        }
      }
    } catch (const Error& e) {
      if (e.code() != Errc::daemon_gone || !a.reattach) throw;
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
  if (!a.read.empty()) std::printf("the last frame held the fields: %s\n", held.empty() ? "none" : held.c_str());
  return 0;
}
}  // namespace

int attach(const Target& t, const AttachArgs& a) {
  // Through gateways, attach shows views (fitted to the link, each with its error bound); on this
  // host, the frames themselves.
  const auto opts = t.open("cuview-ctl attach", Import::frames);
  return opts.remote.empty() ? attach_frames(opts, a) : attach_views(opts, a);
}

}  // namespace cuview::ctl
