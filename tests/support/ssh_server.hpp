// A real OpenSSH server for tests of the ssh-forwarded remote transport: /usr/sbin/sshd (else sshd on PATH) on
// 127.0.0.1 in a private directory with throw-away host and user keys, and an ssh client
// configuration that logs in to it without a prompt. No Catch2 in here: failures throw
// std::runtime_error with sshd's own words.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "process.hpp"

namespace cuview::test {

struct SshServerOptions {
  /// Variables copied from this process into every ssh session (sshd's SetEnv), where set: a
  /// session gets sshd's fresh environment otherwise, and the gateway it starts must find the
  /// test's runtime directory and binaries.
  std::vector<std::string> pass_env{"PATH",           "LD_LIBRARY_PATH", "XDG_RUNTIME_DIR",
                                    "XDG_STATE_HOME", "XDG_CONFIG_HOME", "CUVIEW_BIN_DIR"};
  /// Further variables for every session.
  std::map<std::string, std::string> set_env;
};

/// Starts sshd (-D -e) on a free port of 127.0.0.1 and returns once it accepts connections.
/// Logs in as the user running the test (root included). The host alias is "localhost" (and
/// "cuview-test-host"); its key is trusted in a private known_hosts, nothing in ~/.ssh is used.
/// Throws std::runtime_error if sshd is not installed ("install openssh-server
/// (scripts/install-deps.sh)") or does not listen within 5 s (with its stderr). Not thread-safe.
class SshServer {
 public:
  explicit SshServer(SshServerOptions options = {});
  SshServer(const SshServer&) = delete;
  SshServer& operator=(const SshServer&) = delete;
  ~SshServer();  // stop(), then removes the directory

  /// "ssh -F '<dir>/ssh_config'": the value for CUVIEW_SSH_COMMAND (run through sh -c, with the
  /// host and the remote command appended).
  [[nodiscard]] std::string ssh_command() const;
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] bool running() const;

  /// Kills sshd and every session it started (forwardings die with them: the clients see the
  /// connection drop), and waits for them to be gone. Idempotent.
  void stop();

 private:
  void write_keys_and_client_config();
  /// One attempt at `port`: true once listening, false if the port was taken meanwhile.
  bool try_start(int port, const SshServerOptions& options);

  std::filesystem::path dir_;
  int port_ = 0;
  std::unique_ptr<ChildProcess> sshd_;
};

}  // namespace cuview::test
