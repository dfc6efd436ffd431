// Access: another Unix user (created by the campaign; needs root) is refused before it learns any
// handle, the files are closed to it, and the daemon refuses a runtime directory of the wrong owner
// or mode. The probes are what this program runs as that user.
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <thread>
#include <utility>
#include <zmq.hpp>

#include "campaign.hpp"
#include "cuview/protocol.hpp"
#include "cuview/remote_protocol.hpp"
#include "cuview/runtime_dir.hpp"

using namespace cuview::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace cuview::faults {
namespace {

constexpr const char* kOtherUser = "cuview-other";

std::optional<std::pair<uid_t, gid_t>> other_user() {
  if (::getuid() != 0) return std::nullopt;
  if (::getpwnam(kOtherUser) == nullptr) {
    ChildProcess add({"/usr/sbin/useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", kOtherUser});
    if (add.wait_for(30s) != 0) return std::nullopt;
  }
  const passwd* pw = ::getpwnam(kOtherUser);
  if (pw == nullptr) return std::nullopt;
  return std::pair{pw->pw_uid, pw->pw_gid};
}

std::vector<std::string> as_other(std::vector<std::string> argv) {
  std::vector<std::string> out{"/usr/bin/setpriv", std::string("--reuid=") + kOtherUser,
                               std::string("--regid=") + kOtherUser, "--clear-groups", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace

std::vector<Row> access(const Config& c, const std::string& self) {
  Row row{"another Unix user: refused before it learns any handle"};
  Row files{"runtime directory, sockets and segments closed to other users"};
  Row refuse{"a runtime directory with wrong owner or mode: the daemon refuses to start"};
  const auto other = other_user();
  if (!other) {
    row.worst = files.worst = refuse.worst = "not run: needs root to create a second user";
    return {row, files, refuse};
  }
  RuntimeDir rt;
  // The other user must reach the binaries and the runtime root itself (not what is inside).
  ::chmod(rt.path().c_str(), 0755);
  for (fs::path p = fs::path(bin("cuview-ctl")).parent_path(); p != p.root_path(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) ::chmod(p.c_str(), st.st_mode | 0055);
  }
  auto daemon = daemon_for(c, "f");
  const InstancePaths paths("f");
  {  // a foreign cuview-ctl
    ++row.trials;
    ChildProcess p(as_other({bin("cuview-ctl"), "--name", "f", "status"}));
    const auto code = p.wait_for(30s);
    if (!code || *code == 0) row.fail("a foreign cuview-ctl was answered");
    if (p.err().find("not to you") == std::string::npos && p.err().find("another user") == std::string::npos)
      row.fail("unclear refusal: " + p.err());
  }
  {  // even with the directories opened up by mistake, the sockets refuse other uids
    ::chmod(paths.dir.parent_path().c_str(), 0755);
    ::chmod(paths.dir.c_str(), 0755);
    ++row.trials;
    ChildProcess p(as_other({self, "--probe-socket", paths.control_endpoint()}));
    const auto code = p.wait_for(30s);
    if (code != 0) row.fail("a foreign raw socket got an answer: " + p.out() + p.err());
    ::chmod(paths.dir.c_str(), 0700);
    ::chmod(paths.dir.parent_path().c_str(), 0700);
  }
  {  // the user's gateway (docs/remote.md): a foreign client, and a foreign raw socket with its
     // directory opened up by mistake, hear nothing — not even the names of the publishers
    auto gateway = start_gateway();
    const fs::path socket = runtime_root() / ".gateway" / "gateway.sock";
    ++row.trials;
    ChildProcess p(as_other({bin("cuview-ctl"), "--remote", "unix:" + socket.string(), "list"}));
    const auto code = p.wait_for(30s);
    if (!code || *code == 0 || p.out().find("f ") != std::string::npos)
      row.fail("a foreign cuview-ctl --remote was answered by the gateway: " + p.out());
    ::chmod(socket.parent_path().c_str(), 0755);
    ::chmod(runtime_root().c_str(), 0755);
    ++row.trials;
    ChildProcess probe(as_other({self, "--probe-socket", "ipc://" + socket.string()}));
    if (probe.wait_for(30s) != 0) row.fail("a foreign raw socket got an answer from the gateway: " + probe.out());
    ::chmod(socket.parent_path().c_str(), 0700);
    ::chmod(runtime_root().c_str(), 0700);
  }
  {  // a hello that names a process of another user
    ++row.trials;
    ChildProcess sleeper(as_other({"/bin/sleep", "60"}));
    std::this_thread::sleep_for(200ms);  // setpriv execs sleep under the same pid
    zmq::context_t ctx;
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::rcvtimeo, 5000);
    s.connect(paths.control_endpoint());
    const auto req = proto::encode_request("hello", 1, "", proto::HelloArgs{"impostor", sleeper.pid()});
    s.send(zmq::buffer(req));
    zmq::message_t m;
    if (!s.recv(m)) {
      row.fail("no answer to a hello naming a foreign pid");
    } else {
      const auto r = proto::decode_reply(m.to_string_view());
      if (r.ok || r.error.code != "access") row.fail("a hello naming a foreign pid was not refused as access");
    }
  }
  {  // modes
    auto check_mode = [&](const fs::path& p, const char* what) {
      ++files.trials;
      struct stat st {};
      if (::stat(p.c_str(), &st) != 0) return files.fail(std::string("cannot stat ") + what);
      if ((st.st_mode & 077) != 0) files.fail(std::string(what) + " is open to others");
    };
    check_mode(paths.dir.parent_path(), "the runtime directory");
    check_mode(paths.dir, "the instance directory");
    check_mode(paths.control, "the control socket");
    check_mode(paths.frames, "the frames socket");
    check_mode(paths.lock, "the lock file");
    for (const auto& seg : segments_of("f")) {
      check_mode(fs::path("/dev/shm") / seg.substr(1), "a shared-memory segment");
      ++files.trials;
      ChildProcess p(as_other({self, "--probe-shm", seg}));
      if (p.wait_for(30s) != 0) files.fail("another user could open " + seg + ": " + p.out());
    }
    files.worst = "0700 directories, 0600 sockets, lock and segments; another user's shm_open gets EACCES";
  }
  daemon.signal(SIGTERM);
  (void)daemon.wait_for(30s);
  {  // wrong owner, wrong mode
    ++refuse.trials;
    ::chown(paths.dir.c_str(), other->first, other->second);
    ChildProcess d({bin("cuview-compute"), "--name", "f", "--backend", "host"});
    if (d.wait_for(30s) != 1 || d.err().find("belongs to uid") == std::string::npos)
      refuse.fail("started in a directory of another user: " + d.err());
    ::chown(paths.dir.c_str(), ::getuid(), ::getgid());
    ++refuse.trials;
    ::chmod(paths.dir.c_str(), 0750);
    ChildProcess m({bin("cuview-compute"), "--name", "f", "--backend", "host"});
    if (m.wait_for(30s) != 1 || m.err().find("chmod 700") == std::string::npos)
      refuse.fail("started in a group-readable directory: " + m.err());
    refuse.worst = "refused with the owner or mode named and the fix";
  }
  row.worst = "refused with \"" + std::string("belongs to uid 0, not to you") + "\"; raw sockets get no answer";
  return {row, files, refuse};
}

int probe_socket(const std::string& endpoint) {
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, 2000);
  s.connect(endpoint);
  s.send(zmq::buffer(proto::encode_request("hello", 1, "", proto::HelloArgs{"foreign", ::getpid()})));
  // And in the gateway's form: [to, body], a `list` of the publishers there.
  s.send(zmq::buffer(std::string()), zmq::send_flags::sndmore);
  s.send(zmq::buffer(remote::encode_gateway_request(remote::Op::list, 2, proto::NoArgs{})));
  zmq::message_t m;
  if (s.recv(m)) {
    std::printf("answered: %s\n", m.to_string().c_str());
    return 1;
  }
  return 0;  // silence: the daemon's socket dropped us
}

int probe_shm(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
  if (fd >= 0) {
    std::printf("opened %s\n", name.c_str());
    return 1;
  }
  return errno == EACCES ? 0 : 2;
}

}  // namespace cuview::faults
