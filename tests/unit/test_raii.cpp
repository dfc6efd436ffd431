// Every OS resource has one owner; a moved-from owner releases nothing.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <vector>

#include "cuview/error.hpp"
#include "cuview/fd_passing.hpp"
#include "cuview/posix.hpp"
#include "cuview/runtime_dir.hpp"
#include "cuview/unique_handle.hpp"
#include "process.hpp"

using namespace cuview;
using cuview::test::shm_exists;
namespace fs = std::filesystem;

static bool fd_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST_CASE("a moved-from UniqueFd closes nothing; the owner closes once", "[raii]") {
  int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  {
    UniqueFd owner;
    {
      UniqueFd first(raw);
      owner = std::move(first);
      CHECK_FALSE(first);
    }
    CHECK(fd_open(raw));
  }
  CHECK_FALSE(fd_open(raw));
}

TEST_CASE("a moved-from SharedMemory neither unmaps nor unlinks; the creator unlinks", "[raii]") {
  std::string name;
  {
    SharedMemory owner;
    {
      auto created = SharedMemory::create(4096);
      name = created.name();
      static_cast<char*>(created.data())[0] = 'x';
      owner = std::move(created);
      CHECK_FALSE(created);
    }
    CHECK(shm_exists(name));
    CHECK(static_cast<char*>(owner.data())[0] == 'x');
    auto opened = SharedMemory::open(name, 4096, Access::read_only);
    CHECK(static_cast<const char*>(opened.data())[0] == 'x');
    auto moved = std::move(opened);
  }
  CHECK_FALSE(shm_exists(name));
}

TEST_CASE("shared-memory segments are private to their user and unguessable", "[raii][access]") {
  auto a = SharedMemory::create(64);
  auto b = SharedMemory::create(64);
  CHECK(a.name() != b.name());
  CHECK(a.name().size() > 32);
  struct stat st {};
  const int fd = ::shm_open(a.name().c_str(), O_RDONLY, 0);
  REQUIRE(fd >= 0);
  ::fstat(fd, &st);
  ::close(fd);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_THROWS_AS(SharedMemory::open("/cuview-no-such-segment", 64, Access::read_only), Error);
  CHECK_THROWS_WITH(SharedMemory::open(a.name(), 1 << 20, Access::read_only), Catch::Contains("holds 64 bytes"));
}

TEST_CASE("an instance lock refuses a second holder and is free once released", "[raii][lock]") {
  test::RuntimeDir rt;
  InstancePaths paths("locktest");
  ensure_private_dir(paths.dir.parent_path());
  ensure_private_dir(paths.dir);
  CHECK_FALSE(InstanceLock::is_held(paths));
  {
    auto lock = std::make_unique<InstanceLock>(paths);
    CHECK(InstanceLock::is_held(paths));
    try {
      InstanceLock second(paths);
      FAIL("a second lock was granted");
    } catch (const Error& e) {
      CHECK(e.code() == Errc::already_running);
      CHECK_THAT(e.what(), Catch::Contains("already running"));
    }
    auto moved = std::move(lock);  // moving the owner keeps the lock
    CHECK(InstanceLock::is_held(paths));
  }
  CHECK_FALSE(InstanceLock::is_held(paths));
  InstanceLock again(paths);
  CHECK(list_running_instances() == std::vector<std::string>{"locktest"});
}

TEST_CASE("a runtime directory that others can enter is refused", "[raii][access]") {
  test::RuntimeDir rt;
  const auto dir = rt.path() / "cuview";
  ensure_private_dir(dir);
  ::chmod(dir.c_str(), 0755);
  CHECK_THROWS_WITH(ensure_private_dir(dir), Catch::Contains("0755") && Catch::Contains("chmod 700"));
  ::chmod(dir.c_str(), 0700);
  CHECK_NOTHROW(ensure_private_dir(dir));
}

TEST_CASE("instance names that could escape the runtime directory are refused", "[raii][bad-input]") {
  for (const char* bad : {"", "..", "../x", "a/b", ".hidden", "name with space", "x\n"}) {
    CHECK_THROWS_AS(validate_instance_name(bad), Error);
  }
  CHECK_NOTHROW(validate_instance_name("sim-01.run_2"));
}

TEST_CASE("a process handle notices its process exiting and ignores a moved-from copy", "[raii]") {
  test::ChildProcess child({"/bin/sleep", "30"});
  ProcessHandle h(child.pid());
  CHECK_FALSE(h.exited());
  ProcessHandle moved = std::move(h);
  CHECK_FALSE(moved.exited());
  child.signal(SIGKILL);
  REQUIRE(child.wait_for(std::chrono::seconds(10)));
  CHECK(moved.exited());
  CHECK_THROWS_WITH(ProcessHandle(-5), Catch::Contains("not a valid process id"));
}

TEST_CASE("descriptors travel with a message over a SOCK_SEQPACKET socket and arrive close-on-exec",
          "[unit][fd-passing]") {
  int pair[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0);
  cuview::UniqueFd a(pair[0]), b(pair[1]);
  cuview::UniqueFd mem(::memfd_create("cuview-test", MFD_CLOEXEC));
  REQUIRE(mem);
  REQUIRE(::write(mem.get(), "frame", 5) == 5);
  const int sent[] = {mem.get(), mem.get()};
  cuview::send_with_fds(a.get(), "two", sent, "test");
  std::vector<cuview::UniqueFd> got;
  CHECK(cuview::receive_with_fds(b.get(), got, std::chrono::milliseconds(1000), "test") == "two");
  REQUIRE(got.size() == 2);
  for (const auto& fd : got) {
    CHECK(fd.get() != mem.get());
    CHECK((::fcntl(fd.get(), F_GETFD) & FD_CLOEXEC) != 0);
    char buf[8] = {};
    CHECK(::pread(fd.get(), buf, 5, 0) == 5);
    CHECK(std::string(buf) == "frame");
  }
  // Nothing sent: a timeout naming what was awaited; the peer gone: daemon_gone.
  try {
    (void)cuview::receive_with_fds(b.get(), got, std::chrono::milliseconds(50), "the reply");
    FAIL("no timeout");
  } catch (const cuview::Error& e) {
    CHECK(e.code() == cuview::Errc::timeout);
    CHECK_THAT(e.what(), Catch::Contains("the reply"));
  }
  a = cuview::UniqueFd();
  try {
    (void)cuview::receive_with_fds(b.get(), got, std::chrono::milliseconds(1000), "the reply");
    FAIL("no error after the peer closed");
  } catch (const cuview::Error& e) {
    CHECK(e.code() == cuview::Errc::daemon_gone);
  }
}

namespace {
// Handles 1, 2, 3…; every release is recorded, so a double release or a leak shows.
std::vector<int> released;
struct CountingTraits {
  using handle_type = int;
  static constexpr int null() noexcept { return 0; }
  static void close(int h) noexcept { released.push_back(h); }
};
using Counted = UniqueHandle<CountingTraits>;
}  // namespace

TEST_CASE("UniqueHandle: a moved-from owner releases nothing, each handle is released exactly once", "[raii]") {
  released.clear();
  {
    Counted a(1);
    Counted b(std::move(a));
    CHECK_FALSE(a);
    CHECK(b.get() == 1);
    Counted c(2);
    c = std::move(b);  // 2 released now, 1 moves on
    CHECK(released == std::vector<int>{2});
    c = std::move(c);  // self-move keeps the handle
    CHECK(c.get() == 1);
    Counted d(3);
    const int taken = d.release();  // the caller owns 3 now
    CHECK(taken == 3);
    CHECK_FALSE(d);
  }
  CHECK(released == std::vector<int>{2, 1});
}
