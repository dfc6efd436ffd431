// One move-only owner for every handle cuview holds (file descriptors, CUDA allocations, events,
// streams, pools, mappings): the move logic is written once, here, instead of once per class.
//
// A `Traits` type says what the handle is and how it is released:
//   struct FdTraits {
//     using handle_type = int;
//     static constexpr int null() noexcept { return -1; }
//     static void close(int fd) noexcept { ::close(fd); }
//   };
//   using UniqueFd = UniqueHandle<FdTraits>;
// `handle_type` may be a small struct (a pointer and its size); it needs `==`. A moved-from owner
// holds null() and releases nothing; close() is never called on null().
#pragma once

#include <utility>

namespace cuview {

template <class Traits>
class UniqueHandle {
 public:
  using handle_type = typename Traits::handle_type;

  constexpr UniqueHandle() noexcept = default;
  /// Takes ownership of `handle` (null(): owns nothing).
  constexpr explicit UniqueHandle(handle_type handle) noexcept : handle_(std::move(handle)) {}
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(other.release()) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  [[nodiscard]] constexpr const handle_type& get() const noexcept { return handle_; }
  [[nodiscard]] constexpr explicit operator bool() const noexcept { return !(handle_ == Traits::null()); }
  /// Gives up ownership: the caller releases the returned handle.
  [[nodiscard]] handle_type release() noexcept { return std::exchange(handle_, Traits::null()); }
  /// Releases what is owned now (if anything) and owns `handle` instead.
  void reset(handle_type handle = Traits::null()) noexcept {
    handle_type old = std::exchange(handle_, std::move(handle));
    if (!(old == Traits::null())) Traits::close(old);
  }

 private:
  handle_type handle_ = Traits::null();
};

}  // namespace cuview
