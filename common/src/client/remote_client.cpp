// RemoteClient: a connection to a publisher through its host's cuview-gateway (docs/remote.md):
// views fitted to the link, exact regions, frames fetched into host memory. RemoteHost lists what
// a gateway serves.
#include <algorithm>
#include <cstring>
#include <thread>

#include "client/imports.hpp"
#include "client/session.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/schema.hpp"

namespace cuview {
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
transport::RemoteChannel& channel_of(detail::Session& s) { return *s.remote; }
}  // namespace

RemoteClient::RemoteClient(std::unique_ptr<detail::Session> session) : Attachment(std::move(session)) {}
RemoteClient::RemoteClient(RemoteClient&&) noexcept = default;
RemoteClient& RemoteClient::operator=(RemoteClient&&) noexcept = default;
RemoteClient::~RemoteClient() = default;

RemoteClient RemoteClient::attach(const AttachOptions& options) {
  validate_instance_name(options.name);
  if (options.remote.empty())
    throw Error(Errc::bad_value, "RemoteClient::attach('" + options.name + "') needs the URL of the gateway to go "
                                     "through (AttachOptions::remote); for a publisher on this host use Client::attach");
  auto s = std::make_unique<detail::Session>(options);
  auto channel = transport::open_remote_channel(options.remote, s->address(), options.timeout);
  s->remote = channel.get();
  s->channel = std::move(channel);
  s->introduce(options.timeout);
  return RemoteClient(std::move(s));
}

void RemoteClient::watch(const ViewWatch& w) { watch_with(w, 2); }

void RemoteClient::view_credit(std::uint64_t seq, std::optional<std::uint64_t> from_step) {
  auto& s = *session_;
  std::lock_guard lock(s.mu);
  channel_of(s).credit(seq, from_step);
}

void RemoteClient::watch_with(const ViewWatch& w, std::uint32_t credits) {
  auto& s = *session_;
  const auto& r = w.region;
  remote::ViewArgs a{s.address(), w.field, static_cast<std::uint32_t>(std::max(r.view_w, 0)),
                     static_cast<std::uint32_t>(std::max(r.view_h, 0)), r.center_x, r.center_y, r.pixels_per_cell,
                     w.encoding, credits};
  if (w.slice) a.axis = to_string(w.slice->axis), a.index = w.slice->index;
  if (w.through) a.through = std::vector<std::uint32_t>(w.through->begin(), w.through->end());
  if (w.brick) a.brick = *w.brick, a.view_w = a.view_h = 1, a.center_x = a.center_y = 0, a.pixels_per_cell = 1;
  std::lock_guard lock(s.mu);
  if (s.gone()) s.throw_gone();
  (void)channel_of(s).gateway_call<proto::NoArgs>(remote::Op::view, a, s.opts.timeout);
}

bool RemoteClient::take_view(RemoteView& out, std::chrono::milliseconds timeout, bool credit) {
  auto& s = *session_;
  auto& ch = channel_of(s);
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    std::unique_lock lock(s.mu);
    if (s.detached) throw Error(Errc::not_attached, "next_view after detach from " + s.who());
    if (s.gone()) s.throw_gone();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    // Short slices under the lock, so that control calls of other threads get their turn.
    auto arrived = ch.take_view(std::clamp<std::chrono::milliseconds>(left, 0ms, 20ms));
    if (arrived) {
      auto& h = arrived->header;
      const std::uint64_t count = remote::payload_samples(h, "a view of " + s.who() + " through " + s.opts.remote);
      const auto encoding = remote::encoding_named(h.encoding);
      if (count > 0)
        ch.decoder.decode(encoding, h.lo, h.hi, count, h.raw_bytes,
                          std::string_view(static_cast<const char*>(arrived->payload.data()), arrived->payload.size()),
                          out.view.values);
      else
        out.view.values.clear();
      if (credit) ch.credit(h.seq);
      auto& region = out.view.region;
      region = ViewRegion{};
      // The picture's grid: the whole grid, or the plane (or three) of the whole volume it shows.
      const auto& part = s.desc.part;
      if (h.brick) {  // a volume's brick: its cells as a view of width × (height · depth)
        if (h.brick->size() != 4 || std::uint64_t{(*h.brick)[2]} * (*h.brick)[1] * (*h.brick)[0] !=
                                        std::uint64_t{h.view_w} * h.view_h)
          throw Error(Errc::bad_message, "a brick from " + s.opts.remote + " whose size does not match its values");
        region.field_w = static_cast<int>(h.view_w), region.field_h = static_cast<int>(h.view_h);
      } else {
        const auto picture = picture_named(part ? part->global_dims : s.desc.for_field(h.field).dims, h.axis, h.index, h.through,
                                           "a view of " + s.who() + " through " + s.opts.remote);
        region.field_w = picture.w, region.field_h = picture.h;
      }
      region.view_w = static_cast<int>(h.view_w), region.view_h = static_cast<int>(h.view_h);
      region.center_x = h.center_x, region.center_y = h.center_y, region.pixels_per_cell = h.pixels_per_cell;
      out.view.components = 1;
      out.view.vectors.clear();
      out.header = std::move(h);
      return true;
    }
    if (left <= 0ms) return false;
  }
}

bool RemoteClient::next_view(RemoteView& out, std::chrono::milliseconds timeout) {
  if (!take_view(out, timeout)) return false;
  // A part's samples: placed in the whole view, NaN (no value) where the other parts are.
  if (out.header.rect) {
    RemoteView part = std::move(out);
    const RemoteView* parts[] = {&part};
    assemble_view(parts, out);
  }
  return true;
}

proto::RenderResult RemoteClient::render(const proto::RenderArgs& view) {
  auto& s = *session_;
  auto& ch = channel_of(s);
  std::lock_guard lock(s.mu);
  if (s.gone()) s.throw_gone();
  const std::string gateway = "the gateway at " + s.opts.remote;
  const auto timeout = std::max<std::chrono::milliseconds>(s.opts.timeout, 10s);
  if (!ch.gateway_greeted) {  // its version: a gateway of 2 or older has no `picture`
    (void)ch.gateway_call<remote::HelloResult>(remote::Op::hello, remote::HelloArgs{s.opts.client}, timeout);
    ch.gateway_greeted = true;
  }
  if (ch.gateway_version() < remote::version_of(remote::Op::picture))
    throw Error(Errc::unsupported, gateway + " speaks remote protocol " + std::to_string(ch.gateway_version()) +
                                       ", which carries no pictures cast by the run (3 does): update cuview-gateway "
                                       "there; the volume's brick is drawn meanwhile");
  auto wanted = view;
  wanted.of_step = 0;
  const bool held = ch.picture_view && ch.picture_view->same_view(view) && !ch.picture.pending &&
                    (view.of_step == 0 || ch.picture.step == view.of_step);
  // Values in u16: the picture's range in 65 535 levels, far finer than its 256 colours.
  remote::PictureArgs args{s.address(), view, "auto", "u16", held ? ch.picture.seq : 0};
  const auto r = ch.gateway_call<remote::PictureResult>(remote::Op::picture, args, timeout, remote::kMaxPayloadBytes);
  proto::RenderResult out;
  out.pending = r.pending, out.seq = r.seq, out.step = r.step, out.sim_time = r.sim_time, out.stamp_ns = r.stamp_ns;
  out.width = r.width, out.height = r.height, out.every = r.every, out.cast_ms = r.cast_ms;
  if (r.pending) return out;
  if (r.same) {
    if (!held || r.seq != ch.picture.seq)
      throw Error(Errc::bad_message, gateway + " answered 'picture' with `same` for picture " + std::to_string(r.seq) +
                                         ", which this client does not hold; the gateway is at fault: please report it");
    return ch.picture;
  }
  if (r.width != view.width || r.height != view.height)
    throw Error(Errc::bad_message, gateway + " answered 'picture' with one of " + std::to_string(r.width) + "x" +
                                       std::to_string(r.height) + " pixels for a view of " + std::to_string(view.width) +
                                       "x" + std::to_string(view.height));
  const std::uint64_t pixels = std::uint64_t{r.width} * r.height;
  ch.picture_decoder.decode(remote::picture_codec_named(r.codec), {r.argb.data(), r.argb.size()}, r.width, r.height,
                            out.argb);
  std::vector<float> values;
  ch.decoder.decode(remote::encoding_named(r.values_encoding), r.values_lo, r.values_hi, pixels, r.values_raw_bytes,
                    {r.values.data(), r.values.size()}, values);
  out.values.resize(pixels * 4);
  std::memcpy(out.values.data(), values.data(), pixels * 4);
  ch.picture_view = wanted;
  ch.picture = out;
  return out;
}

RemoteRegion RemoteClient::fetch(const std::string& field, const Block& box) { return fetch_of(field, box, {}); }

RemoteRegion RemoteClient::fetch_of(const std::string& field, const Block& box, FrameChoice which,
                                    std::vector<std::byte>* raw_values) {
  const std::size_t rank = box.dims.size();
  if (rank < 1 || rank > kMaxAxes || box.offset.size() != rank)
    throw Error(Errc::bad_value, "fetch of " + field + ": a box of " + std::to_string(rank) + " dims and " +
                                     std::to_string(box.offset.size()) + " offsets; give both with as many axes as " +
                                     "the field's grid (1 to " + std::to_string(kMaxAxes) + "), slowest first");
  // On the wire: the rectangle of the two fastest axes, and a volume's layers (docs/remote.md "fetch").
  const std::uint32_t x = axis_from_fastest(box.offset, 0, 0), y = axis_from_fastest(box.offset, 1, 0),
                      w = axis_from_fastest(box.dims, 0), h = axis_from_fastest(box.dims, 1);
  std::optional<std::uint32_t> z, depth;
  if (rank == 3) z = box.offset[0], depth = box.dims[0];
  const auto& seq = which.seq;
  auto& s = *session_;
  // A fetch carries the field's own values (its dtype); one the description does not hold is
  // named by the gateway's refusal.
  const auto& fields = s.desc.fields;
  const auto described = std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return f.name == field; });
  const DType dtype =
      described != fields.end() ? parse_dtype(described->dtype).value_or(DType::float32) : DType::float32;
  auto& ch = channel_of(s);
  std::lock_guard lock(s.mu);
  if (s.gone()) s.throw_gone();
  const auto timeout = std::max<std::chrono::milliseconds>(s.opts.timeout, 30s);
  // The newest frame's fetch carries no choice at all: what every gateway reads.
  auto r = seq || which.from_step || depth
               ? ch.gateway_call<remote::FetchResult>(
                     remote::Op::fetch,
                     remote::FetchArgs{s.address(), field, x, y, w, h, seq, which.from_step, z, depth}, timeout,
                     remote::kMaxPayloadBytes)
               : ch.gateway_call<remote::FetchResult>(remote::Op::fetch,
                                                      remote::FetchNewestArgs{s.address(), field, x, y, w, h}, timeout,
                                                      remote::kMaxPayloadBytes);
  const std::uint32_t got = r.d.value_or(1);
  const std::uint64_t count = std::uint64_t{r.w} * r.h * got * r.components;
  if (r.w != w || r.h != h || r.x != x || r.y != y || count * size_of(dtype) > remote::kMaxFetchBytes || (seq && r.seq != *seq) ||
      (depth && (r.z != z || got != *depth)))
    throw Error(Errc::bad_message, "the gateway answered fetch of " + field + " with a different rectangle or frame");
  const std::size_t size = size_of(dtype);
  if (r.raw_bytes != count * size)
    throw Error(Errc::bad_message, "the gateway's fetch of " + field + " says " + std::to_string(r.raw_bytes) +
                                       " bytes for " + std::to_string(count) + " " + to_string(dtype) + " values");
  RemoteRegion out{r.seq, r.step, r.sim_time, r.x, r.y, r.w, r.h, r.components, {}, r.z.value_or(0), got};
  std::vector<std::byte> raw;
  ch.decoder.decompress(std::string_view(r.data.data(), r.data.size()), r.raw_bytes, remote::kMaxFetchBytes, raw);
  if (raw_values != nullptr) {
    *raw_values = std::move(raw);
    return out;
  }
  out.values.resize(count);
  for (std::size_t i = 0; i < count; ++i) out.values[i] = static_cast<float>(load_value(raw.data() + i * size, dtype));
  return out;
}

RemoteRegion RemoteClient::probe(FrameChoice which) {
  const auto& d = session_->desc;
  if (d.fields.empty())
    throw Error(Errc::unsupported, session_->who() + " through " + session_->opts.remote +
                                       " publishes no grid field; remote frames carry grid fields");
  // A float32 field where there is one: what every gateway fetches.
  const auto f = std::find_if(d.fields.begin(), d.fields.end(), [](const auto& x) { return x.dtype == "float32"; });
  return fetch_of((f != d.fields.end() ? *f : d.fields.front()).name, Block::grid(0, 0, 1, 1), which);
}

std::optional<RemoteRegion> RemoteClient::probe_newer(std::optional<std::uint64_t> after, bool by_step,
                                                      Clock::time_point deadline) {
  for (;;) {
    auto newest = probe({});
    if (!after || (by_step ? newest.step : newest.seq) > *after) return newest;
    const auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::min<Clock::duration>(deadline - now, 50ms));
    if (auto& s = *session_; s.gone()) s.throw_gone();
  }
}

std::optional<Frame> RemoteClient::fetch_frame(const RemoteRegion& probe) {
  const auto& d = session_->desc;
  auto frame = detail::make_fetched_frame(d);
  std::uint64_t held = 0;  // the fields fetched (FrameInfo::fields): a gateway from before dtypes
                           // other than float32 refuses to fetch those, and the frame goes without
  std::vector<std::byte> raw;
  try {
    for (std::size_t i = 0; i < d.fields.size(); ++i) {
      const auto& f = d.fields[i];
      const auto dtype = parse_dtype(f.dtype);
      if (!dtype) continue;
      const std::size_t size = size_of(*dtype);
      try {
        // A field comes in boxes of as many of its slowest axis's layers as one fetch carries.
        const Extent on{d.for_field(i).dims};  // the grid the field lies on
        const std::uint32_t layers = on.dims[0];
        const std::uint64_t layer_bytes = on.cells() / layers * f.components * size;
        const auto per_fetch =
            static_cast<std::uint32_t>(std::max<std::uint64_t>(1, remote::kMaxFetchBytes / layer_bytes));
        for (std::uint32_t z = 0; z < layers; z += per_fetch) {
          Block box{Axes(on.rank(), 0), on.dims};
          box.offset[0] = z, box.dims[0] = std::min(per_fetch, layers - z);
          fetch_of(f.name, box, {probe.seq, {}}, &raw);
          const std::size_t at = z * layer_bytes;
          std::memcpy(frame.data + f.offset + at, raw.data(),
                      std::min<std::size_t>(f.bytes - std::min<std::size_t>(f.bytes, at), raw.size()));
        }
        if (i < 64) held |= std::uint64_t{1} << i;
      } catch (const Error& e) {
        if (e.code() != Errc::unsupported || *dtype == DType::float32) throw;
      }
    }
  } catch (const Error& e) {
    if (e.code() == Errc::out_of_range) return std::nullopt;  // the gateway holds another frame now
    throw;
  }
  FrameInfo info{probe.seq, 0, probe.step, probe.sim_time, 0};
  info.fields = held;
  return detail::finish_fetched_frame(std::move(frame), info);
}

std::optional<Frame> RemoteClient::next_frame(std::chrono::milliseconds timeout) {
  auto& s = *session_;
  const auto deadline = Clock::now() + timeout;
  for (int attempt = 0;;) {
    if (s.detached) throw Error(Errc::not_attached, "next_frame after detach from " + s.who());
    // One cell tells which frame is the newest; every field of that frame then comes whole.
    const auto newest = probe_newer(s.last_seq.load(), false, deadline);
    if (!newest) return std::nullopt;
    if (auto frame = fetch_frame(*newest)) {
      s.last_seq.store(newest->seq);
      return frame;
    }
    // Another client of the gateway asked for a newer frame meanwhile: again, a few times.
    if (++attempt >= 8)
      throw Error(Errc::timeout, s.who() + " through " + s.opts.remote + ": the gateway moved on to newer frames 8 "
                                           "times while this client fetched one; too many readers of it?");
  }
}

// ---------------------------------------------------------------- RemoteHost

struct RemoteHost::Impl {
  std::unique_ptr<transport::RemoteChannel> channel;
  remote::HelloResult hello;
  std::chrono::milliseconds timeout;
};

RemoteHost::RemoteHost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RemoteHost::RemoteHost(RemoteHost&&) noexcept = default;
RemoteHost& RemoteHost::operator=(RemoteHost&&) noexcept = default;
RemoteHost::~RemoteHost() = default;

RemoteHost RemoteHost::connect(const std::string& url, const std::string& client, std::chrono::milliseconds timeout) {
  auto impl = std::make_unique<Impl>();
  impl->channel = transport::open_remote_channel(url, "", timeout);
  impl->timeout = timeout;
  impl->hello = impl->channel->gateway_call<remote::HelloResult>(remote::Op::hello, remote::HelloArgs{client}, timeout);
  return RemoteHost(std::move(impl));
}

const remote::HelloResult& RemoteHost::hello() const noexcept { return impl_->hello; }

std::vector<remote::PublisherEntry> RemoteHost::publishers() {
  return impl_->channel->gateway_call<remote::ListResult>(remote::Op::list, proto::NoArgs{}, impl_->timeout).publishers;
}

}  // namespace cuview
