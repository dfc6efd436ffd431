#include "cuview/remote/curve_keys.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cuview/error.hpp"
#include "cuview/posix.hpp"

namespace cuview::remote {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kZ85KeyChars = 40;
constexpr std::size_t kKeyBytes = 32;
constexpr std::string_view kSecretTag = "curve-secret";

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }


std::array<std::uint8_t, kKeyBytes> decode_key(std::string_view z85, const std::string& what) {
  std::array<std::uint8_t, kKeyBytes> bytes{};
  if (!is_valid_key(z85))
    throw Error(Errc::bad_value, what + " is not a CURVE key (40 Z85 characters): '" + std::string(z85) + "'");
  const std::string text(z85);  // zmq_z85_decode wants a terminated string
  zmq_z85_decode(bytes.data(), text.c_str());
  return bytes;
}




/// Creates `dir` and its missing parents with mode 0700 (existing ones are left as they are).
void make_private_dirs(const fs::path& dir) {
  if (dir.empty() || fs::exists(dir)) return;
  make_private_dirs(dir.parent_path());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) throw_errno("cannot create directory " + quoted(dir), errno);
}

void write_all(int fd, std::string_view bytes, const fs::path& file) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot write " + quoted(file), errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

/// Writes `bytes` to a new file beside `file` created with `mode` (O_EXCL), flushed to disk.
fs::path write_temporary(const fs::path& file, std::string_view bytes, mode_t mode) {
  const fs::path tmp = file.string() + ".tmp-" + random_hex(8);
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd) throw_errno("cannot create " + quoted(tmp), errno);
  try {
    if (::fchmod(fd.get(), mode) != 0) throw_errno("cannot chmod " + quoted(tmp), errno);  // past the umask
    write_all(fd.get(), bytes, tmp);
    if (::fsync(fd.get()) != 0) throw_errno("cannot flush " + quoted(tmp), errno);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  return tmp;
}

std::string secret_line(const CurveKeyPair& keys, const std::string& comment) {
  std::string line = std::string(kSecretTag) + " " + keys.secret_key + " " + keys.public_key;
  if (!comment.empty()) line += " " + comment;
  return line + "\n";
}

std::string public_line(const CurveKeyPair& keys, const std::string& comment) {
  return keys.public_key + (comment.empty() ? "" : " " + comment) + "\n";
}

/// Reads a secret key file through one descriptor, so the mode checked is the file's read.
std::string read_private_file(const fs::path& file) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw_errno("cannot open the key file " + quoted(file), errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno("cannot stat " + quoted(file), errno);
  if (st.st_uid != ::geteuid())
    throw Error(Errc::access, "the key file " + quoted(file) + " is owned by uid " + std::to_string(st.st_uid) +
                                  ", not by this user (uid " + std::to_string(::geteuid()) + "); refusing to use it");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error(Errc::access, std::string("permissions ") + mode + " for " + quoted(file) +
                                  " are too open: a secret key must be readable by its owner only; run chmod 600 " +
                                  quoted(file));
  }
  std::string text;
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot read " + quoted(file), errno);
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > 64 * 1024) throw Error(Errc::bad_value, quoted(file) + " is too large to be a key file");
  }
  return text;
}

void check_host_port(std::string_view host_port) {
  const auto colon = host_port.rfind(':');
  const bool ok = !host_port.empty() && colon != std::string_view::npos && colon > 0 && colon + 1 < host_port.size() &&
                  host_port.find_first_of(" \t\r\n") == std::string_view::npos;
  if (!ok) throw Error(Errc::bad_value, "'" + std::string(host_port) + "' is not host:port");
}

}  // namespace

// ---- key files and sockets: shared with the gateway's half (gateway/authorized_keys.cpp) ----

namespace key_file {

std::string at(const fs::path& file, std::size_t line) { return file.string() + ":" + std::to_string(line); }

std::pair<std::string_view, std::string_view> split_word(std::string_view line) {
  constexpr std::string_view blanks = " \t\r";
  const auto begin = line.find_first_not_of(blanks);
  if (begin == std::string_view::npos) return {};
  line.remove_prefix(begin);
  const auto end = line.find_first_of(blanks);
  if (end == std::string_view::npos) return {line, {}};
  std::string_view rest = line.substr(end);
  const auto rest_begin = rest.find_first_not_of(blanks);
  if (rest_begin == std::string_view::npos) return {line.substr(0, end), {}};
  rest.remove_prefix(rest_begin);
  rest.remove_suffix(rest.size() - (rest.find_last_not_of(blanks) + 1));
  return {line.substr(0, end), rest};
}

bool is_skipped(std::string_view first_word) {
  return first_word.empty() || (first_word.front() == '#' && !is_valid_key(first_word));
}

std::optional<std::vector<std::string>> read_lines(const fs::path& file) {
  std::ifstream in(file);
  if (!in) {
    const int err = errno;
    if (err == ENOENT) return std::nullopt;
    throw_errno("cannot read " + quoted(file), err);
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

void set_key(zmq::socket_t& socket, int option, std::string_view z85, const std::string& what) {
  const auto bytes = decode_key(z85, what);
  if (zmq_setsockopt(socket.handle(), option, bytes.data(), bytes.size()) != 0)
    throw Error(Errc::unsupported, "setting the CURVE " + what + " on a socket: " + zmq_strerror(zmq_errno()) +
                                       " (libzmq built without CURVE?)");
}

}  // namespace key_file

using key_file::at;
using key_file::is_skipped;
using key_file::read_lines;
using key_file::set_key;
using key_file::split_word;


bool is_valid_key(std::string_view z85) noexcept {
  if (z85.size() != kZ85KeyChars) return false;
  std::array<char, kZ85KeyChars + 1> text{};
  z85.copy(text.data(), kZ85KeyChars);
  std::array<std::uint8_t, kKeyBytes> bytes{};
  return zmq_z85_decode(bytes.data(), text.data()) != nullptr;
}

std::string public_key_of(std::string_view secret_z85) {
  const std::string secret(secret_z85);
  if (!is_valid_key(secret)) throw Error(Errc::bad_value, "not a CURVE secret key (40 Z85 characters)");
  std::array<char, kZ85KeyChars + 1> pub{};
  if (zmq_curve_public(pub.data(), secret.c_str()) != 0)
    throw Error(Errc::unsupported, std::string("zmq_curve_public: ") + zmq_strerror(zmq_errno()) +
                                       " (libzmq built without CURVE?)");
  return pub.data();
}

CurveKeyPair generate_keypair() {
  if (zmq_has("curve") == 0)
    throw Error(Errc::unsupported,
                "this libzmq was built without CURVE (zmq_has(\"curve\") is false): tcp:// to a gateway needs "
                "libzmq with libsodium; use an ssh-forwarded socket instead");
  std::array<char, kZ85KeyChars + 1> pub{}, secret{};
  if (zmq_curve_keypair(pub.data(), secret.data()) != 0)
    throw Error(Errc::unsupported, std::string("zmq_curve_keypair: ") + zmq_strerror(zmq_errno()));
  return {pub.data(), secret.data()};
}

fs::path config_dir() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && xdg[0] == '/') return fs::path(xdg) / "cuview";
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] == '\0') {
    const passwd* pw = ::getpwuid(::geteuid());
    home = pw != nullptr ? pw->pw_dir : nullptr;
  }
  if (home == nullptr || home[0] == '\0')
    throw Error(Errc::bad_value, "no configuration directory: set XDG_CONFIG_HOME or HOME");
  return fs::path(home) / ".config" / "cuview";
}

fs::path default_client_key() { return config_dir() / "client.key"; }
fs::path default_gateway_key() { return config_dir() / "gateway.key"; }
fs::path default_authorized_keys() { return config_dir() / "authorized_keys"; }
fs::path default_known_gateways() { return config_dir() / "known_gateways"; }

void write_keypair(const fs::path& secret_file, const CurveKeyPair& keys, const std::string& comment) {
  (void)decode_key(keys.secret_key, "the secret key");
  if (public_key_of(keys.secret_key) != keys.public_key)
    throw Error(Errc::bad_value, "the public key does not belong to the secret key; not writing " + quoted(secret_file));
  if (comment.find('\n') != std::string::npos) throw Error(Errc::bad_value, "a key's comment must be one line");
  make_private_dirs(secret_file.parent_path());
  // Written whole under a temporary name, then linked: link() fails if the name exists, so an
  // existing key is never replaced and no reader ever sees half a key.
  const fs::path tmp = write_temporary(secret_file, secret_line(keys, comment), 0600);
  const int linked = ::link(tmp.c_str(), secret_file.c_str());
  const int err = errno;
  ::unlink(tmp.c_str());
  if (linked != 0 && err == EEXIST)
    throw Error(Errc::bad_value, "the key file " + quoted(secret_file) + " already exists; refusing to overwrite it");
  if (linked != 0) throw_errno("cannot create " + quoted(secret_file), err);

  const fs::path pub = secret_file.string() + ".pub";
  const fs::path pub_tmp = write_temporary(pub, public_line(keys, comment), 0644);
  if (::rename(pub_tmp.c_str(), pub.c_str()) != 0) {
    const int rename_err = errno;
    ::unlink(pub_tmp.c_str());
    throw_errno("cannot create " + quoted(pub), rename_err);
  }
}

CurveKeyPair read_keypair(const fs::path& secret_file) {
  const std::string text = read_private_file(secret_file);
  std::optional<CurveKeyPair> found;
  std::istringstream in(text);
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const auto [tag, rest] = split_word(line);
    if (tag.empty() || tag.front() == '#') continue;
    const std::string where = at(secret_file, number);
    if (tag != kSecretTag)
      throw Error(Errc::bad_value, where + ": expected '" + std::string(kSecretTag) + " <secret> <public> [comment]'");
    if (found) throw Error(Errc::bad_value, where + ": a second key; a key file holds one");
    const auto [secret, after_secret] = split_word(rest);
    const auto [pub, comment] = split_word(after_secret);
    (void)decode_key(secret, where + ": the secret key");
    (void)decode_key(pub, where + ": the public key");
    if (public_key_of(secret) != pub)
      throw Error(Errc::bad_value, where + ": the public key " + std::string(pub) +
                                       " does not belong to the secret key (was the line edited?)");
    found = CurveKeyPair{std::string(pub), std::string(secret)};
  }
  if (!found) throw Error(Errc::bad_value, quoted(secret_file) + " holds no '" + std::string(kSecretTag) + "' line");
  return *found;
}

CurveKeyPair load_or_create_keypair(const fs::path& secret_file, const std::string& comment) {
  if (::access(secret_file.c_str(), F_OK) == 0) return read_keypair(secret_file);
  try {
    const CurveKeyPair keys = generate_keypair();
    write_keypair(secret_file, keys, comment);
    return keys;
  } catch (const Error& e) {
    // Another process made it between our check and our link(): its key is the key.
    if (e.code() == Errc::bad_value && ::access(secret_file.c_str(), F_OK) == 0) return read_keypair(secret_file);
    throw;
  }
}

// ---- known_gateways ----

KnownGateways KnownGateways::read(const fs::path& file) {
  KnownGateways known;
  known.path_ = file;
  const auto lines = read_lines(file);
  if (!lines) return known;
  known.lines_ = lines->size();
  for (std::size_t i = 0; i < lines->size(); ++i) {
    const auto [host_port, rest] = split_word((*lines)[i]);
    if (host_port.empty() || host_port.front() == '#') continue;
    const auto [key, extra] = split_word(rest);
    if (!is_valid_key(key) || !extra.empty())
      throw Error(Errc::bad_value, at(file, i + 1) + ": expected '<host>:<port> <public key: 40 Z85 characters>'");
    known.entries_.push_back({std::string(host_port), std::string(key), i + 1});
  }
  return known;
}

const KnownGateways::Entry* KnownGateways::find(std::string_view host_port) const {
  for (const auto& e : entries_)
    if (e.host_port == host_port) return &e;
  return nullptr;
}

std::optional<std::string> KnownGateways::key_for(std::string_view host_port) const {
  if (const Entry* e = find(host_port)) return e->key;
  return std::nullopt;
}

std::optional<std::size_t> KnownGateways::line_for(std::string_view host_port) const {
  if (const Entry* e = find(host_port)) return e->line;
  return std::nullopt;
}

void KnownGateways::pin(std::string_view host_port, std::string_view public_z85) {
  check_host_port(host_port);
  (void)decode_key(public_z85, "the key of " + std::string(host_port));
  make_private_dirs(path_.parent_path());
  UniqueFd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
  if (!fd) throw_errno("cannot open " + quoted(path_) + " to pin the key of " + std::string(host_port), errno);
  write_all(fd.get(), std::string(host_port) + " " + std::string(public_z85) + "\n", path_);
  entries_.push_back({std::string(host_port), std::string(public_z85), ++lines_});
}

void KnownGateways::check_or_pin(std::string_view host_port, std::string_view offered_z85) {
  const Entry* pinned = find(host_port);
  if (pinned == nullptr) return pin(host_port, offered_z85);
  if (pinned->key == offered_z85) return;
  throw Error(Errc::access,
              "@@@ REMOTE GATEWAY IDENTIFICATION HAS CHANGED @@@\n"
              "The gateway at " + std::string(host_port) + " offers the key " + std::string(offered_z85) +
                  ", but line " + std::to_string(pinned->line) + " of " + quoted(path_) + " pins " + pinned->key +
                  ".\nSomeone could be intercepting the connection, or the gateway's key was made again (its "
                  "gateway.key removed). If you trust the new key, remove line " + std::to_string(pinned->line) +
                  " of " + quoted(path_) + " and connect again.");
}

std::string KnownGateways::require_key(std::string_view host_port, const std::optional<std::string>& offered) {
  if (offered) {
    check_or_pin(host_port, *offered);
    return *offered;
  }
  if (auto key = key_for(host_port)) return *key;
  throw Error(Errc::access, "the key of the gateway at " + std::string(host_port) + " is not known yet (not in " +
                                quoted(path_) + "): run `cuview-gateway --print-key` on that host and connect once " +
                                "with tcp://" + std::string(host_port) + "?key=<key>");
}

// ---- sockets ----


void apply_client_curve(zmq::socket_t& socket, const CurveKeyPair& mine, const std::string& server_public) {
  set_key(socket, ZMQ_CURVE_SERVERKEY, server_public, "server's public key");
  set_key(socket, ZMQ_CURVE_PUBLICKEY, mine.public_key, "client's public key");
  set_key(socket, ZMQ_CURVE_SECRETKEY, mine.secret_key, "client's secret key");
}

}  // namespace cuview::remote
