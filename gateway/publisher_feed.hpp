// One local publisher as the gateway serves it: a thread of its own, so that a frozen or slow
// publisher delays only its own remote clients. It attaches like a local viewer does (control
// always while anyone asks; the ring only while someone watches: host waits and copy-engine rows,
// no kernels, no stream waits), forwards the publisher's ops, samples each watcher's view of the
// newest frame, encodes it and hands it to the network thread while the watcher has credit.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "cuview/assembly.hpp"
#include "cuview/brick_sampler.hpp"
#include "cuview/client.hpp"
#include "cuview/remote/picture_codec.hpp"
#include "cuview/remote/value_codec.hpp"
#include "cuview/remote_protocol.hpp"
#include "cuview/runtime_dir.hpp"
#include "link_meter.hpp"

namespace cuview::gateway {

/// A remote client: one byte naming the gateway socket it came through, then its ZeroMQ
/// routing id on that socket.
using PeerId = std::string;

/// The network thread's side of the outbox: feeds send [peer, kind, from, body(, payload)] to it.
inline constexpr const char* kOutbox = "inproc://cuview-gateway-outbox";

struct FeedSettings {
  double target_fps = 60;  ///< the frame rate "auto" encodings aim for
};

class PublisherFeed {
 public:
  /// `address`: "NAME", or "NAME/part-K" for part K of a run of parts (runtime_dir.hpp).
  PublisherFeed(std::string address, zmq::context_t& context, FeedSettings settings);
  ~PublisherFeed();  // stops and joins the thread; detaches
  PublisherFeed(const PublisherFeed&) = delete;
  PublisherFeed& operator=(const PublisherFeed&) = delete;

  /// A request of the local protocol, from `peer`, for this publisher.
  void publisher_request(const PeerId& peer, std::string body);
  /// One of the gateway's ops naming this publisher (view, credit, stop, fetch).
  void gateway_request(const PeerId& peer, std::string body);
  /// `peer` is gone: everything it asked for ends.
  void forget(const PeerId& peer);
  /// What the publisher list shows of it (empty fields until attached).
  [[nodiscard]] remote::PublisherEntry entry() const;
  /// Seconds since a remote client last asked this feed anything or watched it.
  [[nodiscard]] double idle_s() const;

 private:
  struct Task {
    PeerId peer;
    enum class Kind { publisher_request, gateway_request, forget } kind;
    std::string body;
    /// When the network thread received it: a credit's arrival time, for the link measurement,
    /// however long the feed was busy sampling meanwhile.
    std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
  };
  struct Watcher {
    remote::ViewArgs args;
    std::optional<remote::Encoding> pinned;
    std::size_t field = 0;
    PictureLayout layout;  ///< what the views show: the grid, a volume's plane or three planes
    std::uint32_t credits = 0;
    std::uint64_t last_sent = 0;
    bool dirty = true;  ///< a new view: send the current frame again
    /// The next view shows the first frame offered at or after this step (remote::CreditArgs).
    std::optional<std::uint64_t> from_step;
    LinkMeter meter;
    SampledView sampled;
    std::vector<float> cropped;  ///< a part's samples of its block
    remote::EncodedValues encoded;
    HostBrick brick;  ///< a volume seen whole (ViewArgs::brick)
    double u8_bytes_per_value = 1;  ///< what a u8 brick's value took after zstd, last time (1: not yet seen)
    int stride = 1;  ///< a brick's: the stride fitted to the link last time (set when watched)
  };

  void run();
  void handle(Task& task);
  void handle_publisher_request(const PeerId& peer, const std::string& body);
  void handle_gateway_request(const PeerId& peer, const std::string& body, std::chrono::steady_clock::time_point at);
  void serve_watchers();
  /// Whether `frame` can give `w` its view: it holds the field, and only a brick is taken from a
  /// frame of every k-th cell.
  [[nodiscard]] static bool serves(const Frame& frame, const Watcher& w);
  /// Has frames_ read what the watchers and fetches need: only the watched fields are copied.
  void update_reads();
  /// Samples `frame` for `w` and sends the view to `peer`.
  void send_view(const PeerId& peer, Watcher& w, const Frame& frame);
  /// The publisher's newest picture of the view `request` (`picture`) names, compressed, to `peer`.
  void send_picture(const PeerId& peer, const remote::GatewayRequest& request);
  /// The volume itself for a `brick` watcher: every k-th cell, k fitted to the link.
  void send_brick(const PeerId& peer, Watcher& w, const Frame& frame);
  /// The field `field`; throws Error(bad_value) naming the fields there are, Error(unsupported)
  /// for one of a dtype this gateway does not know.
  std::vector<proto::FieldDesc>::const_iterator grid_field(const proto::DescribeResult& d,
                                                           const std::string& field) const;
  /// Throws the last attach_control failure as a request's error: a name that runs as parts as
  /// bad_value (attach as a group), anything else as `otherwise`.
  [[noreturn]] void throw_attach_error(Errc otherwise) const;
  [[nodiscard]] bool attach_control();
  [[nodiscard]] bool ensure_frames();
  void release_frames();
  void publisher_gone(const std::string& reason);
  void count_viewers();
  void send(const PeerId& peer, std::string_view kind, std::string_view body, std::string_view payload = {},
            bool with_payload = false);
  void reply_error(const PeerId& peer, bool gateway, std::uint64_t id, const Error& e);

  const std::string name_;  ///< the address, as clients name it
  const PublisherAddress address_;
  const FeedSettings settings_;
  zmq::socket_t outbox_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  bool stop_ = false;
  std::atomic<std::int64_t> last_active_ns_;
  remote::PublisherEntry entry_;  // under mu_
  std::size_t hello_clients_ = 0;  // under mu_: clients that said hello (the feed is kept for them)

  // feed-thread state
  std::optional<Client> control_, frames_;
  std::optional<Frame> current_;
  /// What frames_ reads (Client::read_fields): the fields watched, or every one (empty) once a
  /// client fetched (fetched frames are whole). Reset with frames_.
  std::optional<std::vector<std::string>> reading_;
  bool fetching_ = false;
  /// Frames of every k-th cell frames_ also takes (Client::read_every): the bricks' stride when
  /// every watcher watches a brick of one stride; 1 otherwise. Reset with frames_.
  std::uint32_t every_ = 1;
  std::string attach_error_;  ///< why the last attach_control failed
  bool attach_refused_ = false;  ///< it failed because the name runs as parts (attach_error_ says so)
  std::chrono::steady_clock::time_point next_attach_try_{};
  bool gateway_reply_ = false;  ///< the task being handled is one of the gateway's ops
  std::set<PeerId> hello_peers_;
  std::map<PeerId, Watcher> watchers_;
  /// When frames_ last served a watcher or a fetch: its lease is given back kLeaseGrace later.
  std::chrono::steady_clock::time_point frames_used_{};
  ViewSampler sampler_;
  BrickSampler bricks_;
  remote::ValueEncoder encoder_;
  remote::PictureEncoder pictures_;
  std::string packed_;                     ///< a picture's colours, compressed
  remote::EncodedValues encoded_values_;  ///< a picture's values, compressed
  std::thread thread_;
};

}  // namespace cuview::gateway
