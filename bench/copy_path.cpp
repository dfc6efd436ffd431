// Section 4's alternative to cuview, built as well as it can be: the simulation copies a frame
// device → pinned host on a second stream (so stepping continues), hands the pinned buffer to
// ZeroMQ without another copy, and never waits for the consumer (a full queue drops the frame).
// The consumer receives the message and copies it host → device.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <zmq.hpp>

#include "bench.hpp"
#include "bench_simulation.hpp"
#include "cuview/posix.hpp"
#include "publisher/frame_writer.hpp"
#ifdef CUVIEW_HAVE_CUDA
#include "cuview/cuda/check.hpp"
#include "cuview/cuda/device_buffer.hpp"
#include "cuview/cuda/event.hpp"
#include "cuview/cuda/stream.hpp"
#endif

namespace cuview::bench {
namespace {
using Clock = std::chrono::steady_clock;

#ifdef CUVIEW_HAVE_CUDA
void release_buffer(void* /*data*/, void* hint) { static_cast<std::atomic<bool>*>(hint)->store(false); }
#endif

struct Header {
  std::int64_t stamp_ns;  ///< CLOCK_REALTIME when the frame's copy was queued (as the daemon's stamp)
  std::uint64_t seq;      ///< 0 = end of the run
};
}  // namespace

#ifdef CUVIEW_HAVE_CUDA
int run_copy_producer(const ProducerArgs& a) {
  try {
    const auto n = static_cast<std::uint32_t>(a.size);
    auto b = make_grayscott(Executor::Kind::cuda, n);
    FrameWriter writer(*b.executor, *b.sim, n, n);  // frames exactly as the daemon writes them
    const auto bytes = writer.layout().slot_bytes;
    cuda::DeviceBuffer slot(bytes);
    cuda::check(cudaMemset(slot.get(), 0, bytes), "cudaMemset of the slot");
    void* pinned = nullptr;
    cuda::check(cudaHostAlloc(&pinned, bytes, cudaHostAllocDefault), "cudaHostAlloc of the staging buffer");
    cuda::Stream copy_stream = cuda::Stream::create();
    cuda::Event published(cuda::EventKind::blocking_sync), copied(cuda::EventKind::blocking_sync);

    zmq::context_t ctx(1);
    zmq::socket_t push(ctx, zmq::socket_type::push);
    push.set(zmq::sockopt::sndhwm, 1);
    push.set(zmq::sockopt::linger, 2000);
    push.connect(a.endpoint);

    std::atomic<bool> buffer_in_zmq{false};  // cleared by ZeroMQ's I/O thread once sent
    std::uint64_t seq = 0, sent = 0, dropped = 0;
    std::int64_t stamp = 0;

    const auto phase = [&](bool copying) {
      const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / a.hz));
      std::uint64_t steps = 0;
      bool in_flight = false;
      const auto t0 = Clock::now();
      const auto end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(a.seconds));
      auto next = t0;
      while (Clock::now() < end) {
        b.sim->step(a.steps_per_frame);
        b.executor->end_batch();
        steps += a.steps_per_frame;
        if (Clock::now() >= next) {
          next += period;
          if (!copying) {
            writer.write(slot.get(), ++seq, steps);  // the same frame the daemon makes, 60 times a second
          } else if (!in_flight && !buffer_in_zmq.load()) {
            writer.write(slot.get(), ++seq, steps);
            auto s = b.executor->stream().get();
            cuda::check(cudaEventRecord(published.get(), s), "cudaEventRecord after publish");
            stamp = realtime_ns();
            cuda::check(cudaStreamWaitEvent(copy_stream.get(), published.get(), 0), "cudaStreamWaitEvent");
            cuda::check(cudaMemcpyAsync(pinned, slot.get(), bytes, cudaMemcpyDeviceToHost, copy_stream.get()),
                        "copying a frame device to host");
            cuda::check(cudaEventRecord(copied.get(), copy_stream.get()), "cudaEventRecord after the copy");
            in_flight = true;
          } else {
            ++dropped;  // the previous frame is still on its way: skip, never wait
          }
        }
        if (in_flight && cudaEventQuery(copied.get()) == cudaSuccess) {
          in_flight = false;
          const Header h{stamp, seq};
          buffer_in_zmq.store(true);
          zmq::message_t body(pinned, bytes, release_buffer, &buffer_in_zmq);
          if (!push.send(zmq::buffer(&h, sizeof h), zmq::send_flags::sndmore | zmq::send_flags::dontwait) ||
              !push.send(body, zmq::send_flags::dontwait)) {
            ++dropped;  // the consumer's queue is full
          } else {
            ++sent;
          }
        }
      }
      b.executor->finish();
      if (in_flight) cuda::check(cudaEventSynchronize(copied.get()), "the last copy");
      return static_cast<double>(steps) / std::chrono::duration<double>(Clock::now() - t0).count();
    };
    const double alone = phase(false);
    const double copying = phase(true);
    const Header end{0, 0};
    (void)push.send(zmq::buffer(&end, sizeof end), zmq::send_flags::sndmore);
    (void)push.send(zmq::message_t(), zmq::send_flags::none);
    push.close();  // lingers until queued frames are out
    ctx.close();
    cudaFreeHost(pinned);
    std::printf("producer alone_steps_per_s=%.1f copying_steps_per_s=%.1f frames_sent=%llu frames_dropped=%llu\n",
                alone, copying, static_cast<unsigned long long>(sent), static_cast<unsigned long long>(dropped));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-bench copy-producer: %s\n", e.what());
    return 1;
  }
}

std::vector<double> consume_copied_frames(const std::string& endpoint, double seconds, std::size_t* bytes) {
  zmq::context_t ctx(1);
  zmq::socket_t pull(ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvhwm, 1);
  pull.set(zmq::sockopt::linger, 0);
  pull.bind(endpoint);
  cuda::DeviceBuffer dev;
  std::vector<double> latency;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    zmq::pollitem_t item{pull.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    if (!(item.revents & ZMQ_POLLIN)) continue;
    zmq::message_t head, body;
    (void)pull.recv(head);
    (void)pull.recv(body);
    Header h{};
    if (head.size() != sizeof h) continue;
    std::memcpy(&h, head.data(), sizeof h);
    if (h.seq == 0) break;
    if (dev.size() < body.size()) dev = cuda::DeviceBuffer(body.size());
    cuda::check(cudaMemcpy(dev.get(), body.data(), body.size(), cudaMemcpyHostToDevice),
                "copying a received frame host to device");
    latency.push_back(static_cast<double>(realtime_ns() - h.stamp_ns) * 1e-6);
    *bytes = body.size();
  }
  return latency;
}
#else
int run_copy_producer(const ProducerArgs&) {
  std::fprintf(stderr, "cuview-bench copy-producer: this build has no CUDA backend\n");
  return 1;
}
std::vector<double> consume_copied_frames(const std::string&, double, std::size_t*) { return {}; }
#endif

}  // namespace cuview::bench
