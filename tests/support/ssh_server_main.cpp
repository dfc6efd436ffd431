// cuview-test-sshd: the tests' real sshd (ssh_server.hpp) for shell scripts. Prints the value for
// CUVIEW_SSH_COMMAND on its first line, then serves until its standard input closes.
#include <cstdio>
#include <iostream>
#include <string>

#include "ssh_server.hpp"

int main() {
  try {
    cuview::test::SshServer sshd;
    std::printf("%s\n", sshd.ssh_command().c_str());
    std::fflush(stdout);
    std::string line;
    while (std::getline(std::cin, line)) {
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuview-test-sshd: %s\n", e.what());
    return 1;
  }
}
