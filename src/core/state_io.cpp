#include "core/state_io.h"

#include <algorithm>
#include <fcntl.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unistd.h>

#include "omkl/error.h"

namespace omkl::detail {

namespace {
constexpr char kMagic[8] = {'O', 'M', 'K', 'L', 'C', 'K', 'P', 'T'};

void append_raw(std::string& out, const void* data, std::size_t n) {
  out.append(static_cast<const char*>(data), n);
}

std::size_t count_minus_infinity(const double* v, std::size_t n) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) count += v[i] == -std::numeric_limits<double>::infinity();
  return count;
}
}  // namespace

void StateWriter::put_u64(std::uint64_t v) {
  // Little-endian byte order regardless of the host, so files move between machines.
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  append_raw(bytes_, b, 8);
}

void StateWriter::put_f64(double v) {
  non_finite_ += unsound(v);
  std::uint64_t bits;
  std::memcpy(&bits, &v, 8);
  put_u64(bits);
}

void StateWriter::put_string(const std::string& s) {
  put_u64(s.size());
  bytes_ += s;
}

void StateWriter::put_f64s(const double* v, std::size_t n) {
  put_u64(n);
  for (std::size_t i = 0; i < n; ++i) put_f64(v[i]);
}

void StateWriter::put_f64s(const std::vector<double>& v) { put_f64s(v.data(), v.size()); }

void StateWriter::put_finite_f64s(const double* v, std::size_t n) {
  put_f64s(v, n);
  non_finite_ += count_minus_infinity(v, n);
}

void StateWriter::put_weights(const std::vector<double>& v, std::size_t per_vector, bool log_domain) {
  put_f64s(v);
  if (per_vector == 0) return;
  for (std::size_t first = 0; first < v.size(); first += per_vector) {
    const std::size_t n = std::min(per_vector, v.size() - first);
    // A vector holding NaN or +∞ is counted by put_f64s() already.
    if (std::none_of(v.begin() + first, v.begin() + first + n, unsound) &&
        !weight_vector_problem(v.data() + first, n, log_domain).empty())
      ++non_finite_;
  }
}

void StateWriter::put_u64s(const std::vector<std::uint64_t>& v) {
  put_u64(v.size());
  for (auto x : v) put_u64(x);
}

StateReader::StateReader(std::string bytes, std::string source, StateOrigin origin)
    : bytes_(std::move(bytes)), source_(std::move(source)), origin_(origin) {}

void StateReader::fail(const std::string& what) const {
  if (origin_ == StateOrigin::Message) throw Error(source_ + ": malformed message between processes: " + what);
  throw InputError(source_ + ": " + what);
}

void StateReader::need(std::size_t n) {
  if (bytes_.size() - offset_ < n)
    fail("truncated state (needed " + std::to_string(n) + " more bytes at offset " + std::to_string(offset_) + ")");
}

std::uint64_t StateReader::get_u64() {
  need(8);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[offset_ + i])) << (8 * i);
  offset_ += 8;
  return v;
}

double StateReader::get_f64() {
  const std::uint64_t bits = get_u64();
  double v;
  std::memcpy(&v, &bits, 8);
  non_finite_ += unsound(v);
  return v;
}

std::string StateReader::get_string() {
  const std::uint64_t n = get_u64();
  need(n);
  std::string s = bytes_.substr(offset_, n);
  offset_ += n;
  return s;
}

void StateReader::require_values(std::uint64_t n, std::size_t size) {
  // n · size can wrap around for a damaged count, so compare by division.
  if (n > (bytes_.size() - offset_) / size)
    fail("truncated state (" + std::to_string(n) + " values of " + std::to_string(size) + " bytes stored at offset " +
         std::to_string(offset_) + ", " + std::to_string(bytes_.size() - offset_) + " bytes left)");
}

std::vector<double> StateReader::get_f64s() {
  const std::uint64_t n = get_u64();
  require_values(n, 8);
  std::vector<double> v(n);
  for (auto& x : v) x = get_f64();
  return v;
}

void StateReader::get_f64s(double* out, std::size_t n) {
  const std::uint64_t stored = get_u64();
  if (stored != n)
    fail("state holds " + std::to_string(stored) + " values where " + std::to_string(n) +
         " were expected (different model shape)");
  require_values(n, 8);
  for (std::size_t i = 0; i < n; ++i) out[i] = get_f64();
}

void StateReader::get_finite_f64s(double* out, std::size_t n) {
  get_f64s(out, n);
  non_finite_ += count_minus_infinity(out, n);
}

std::vector<std::uint64_t> StateReader::get_u64s() {
  const std::uint64_t n = get_u64();
  require_values(n, 8);
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = get_u64();
  return v;
}

void StateReader::expect_tag(const std::string& tag) {
  const std::string found = get_string();
  if (found != tag) fail("state section '" + found + "' where '" + tag + "' was expected");
}

std::string StateReader::expect_one_of_tags(const std::vector<std::string>& tags) {
  const std::string found = get_string();
  std::string listed;
  for (const std::string& tag : tags) {
    if (found == tag) return found;
    listed += (listed.empty() ? "'" : " or '") + tag + "'";
  }
  fail("state section '" + found + "' where " + listed + " was expected");
}

bool unsound(double v) { return std::isnan(v) || v == std::numeric_limits<double>::infinity(); }

std::string weight_vector_problem(const double* v, std::size_t n, bool log_domain) {
  if (n == 0) return {};
  if (log_domain) {
    for (std::size_t i = 0; i < n; ++i)
      if (v[i] != -std::numeric_limits<double>::infinity()) return {};
    return "are all zero (every log-weight is −∞)";
  }
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(v[i] >= 0.0)) return "hold a weight of " + std::to_string(v[i]) + " (weights are ≥ 0)";
    total += v[i];
  }
  if (!(total > 0.0 && total < std::numeric_limits<double>::infinity())) return "have no positive finite sum";
  return {};
}

std::uint64_t fnv1a64(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string temporary_name(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

namespace {

// With the system's reason. A path that names no writable place (a missing folder, no
// permission, a read-only file system, a folder) is the caller's input (InputError); any other
// failure, at opening (no space for the new file, too many open files) or while writing (a full
// disk, an I/O error), is the machine's (Error: `omkl` exits with 3).
std::string write_failure_text(const std::string& path, const char* what, int code) {
  return path + ": " + what + ": " + std::strerror(code);
}
Error write_failure(const std::string& path, const char* what, int code) {
  return Error(write_failure_text(path, what, code));
}
// Whether the system's reason `code` says the path names no writable place (InputError).
bool names_no_writable_place(int code) {
  return code == ENOENT || code == ENOTDIR || code == EACCES || code == EPERM || code == EROFS || code == EISDIR ||
         code == ENAMETOOLONG || code == ELOOP || code == EEXIST;
}

// Opens `file` and writes `contents` whole, flushed (`sync`: to disk); failures name `path`:
// InputError where it names no writable place, Error otherwise (a full disk).
void write_whole(const std::string& file, const std::string& path, const std::string& contents, bool sync) {
  std::FILE* f = open_for_writing(file, path);
  int code = 0;
  if (std::fwrite(contents.data(), 1, contents.size(), f) != contents.size() || std::fflush(f) != 0 ||
      (sync && ::fsync(::fileno(f)) != 0))
    code = errno;
  if (std::fclose(f) != 0 && code == 0) code = errno;
  if (code != 0) throw write_failure(path, "write failed", code);
}

// Writes `contents` beside `path` under a temporary name, flushed to disk; returns that name.
std::string write_temporary(const std::string& path, const std::string& contents) {
  const std::string tmp = temporary_name(path);
  try {
    write_whole(tmp, path, contents, true);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  return tmp;
}

}  // namespace

std::FILE* open_for_writing(const std::string& file, const std::string& path) {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  if (f) return f;
  const int code = errno;
  if (names_no_writable_place(code)) throw InputError(write_failure_text(path, "cannot open for writing", code));
  throw write_failure(path, "cannot open for writing", code);
}

namespace {

// Whether a file can be made in `folder`: 0, or the system's reason. access() grants root every
// folder, also where nothing can be made (/proc, /sys, a read-only file system); an empty file
// made there and removed at once says for certain.
int creation_error(const std::filesystem::path& folder) {
  const std::string probe = (folder / (".omkl-probe." + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return errno == EEXIST ? 0 : errno;  // EEXIST: one left by a killed run, so files can be made
  ::close(fd);
  ::unlink(probe.c_str());
  return 0;
}

}  // namespace

void check_output_path(const std::string& option, const std::string& path, bool directory) {
  if (path.empty() || path == "-") return;
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path target(path);
  const auto cannot_create_in = [&](const fs::path& folder) {
    if (const int code = creation_error(folder))
      // ENOENT for a folder that exists: a file system that makes no files (/proc, /sys).
      throw ConfigError(option + " " + path + ": cannot create files in " + folder.string() +
                        (code == ENOENT ? std::string(" (the file system there makes none)")
                                        : " (" + std::string(std::strerror(code)) + ")"));
  };
  if (fs::exists(target, error)) {
    if (directory != fs::is_directory(target, error))
      throw ConfigError(option + " " + path + ": " + (directory ? "is a file, not a folder" : "is a folder, not a file"));
    if (::access(path.c_str(), W_OK) != 0) throw ConfigError(option + " " + path + ": not writable");
    // A folder gets new files; a file is replaced by one made beside it (the file a symbolic link
    // names); a pipe or device is written in place.
    if (directory) cannot_create_in(target);
    else if (fs::is_regular_file(target, error)) cannot_create_in(fs::canonical(target, error).parent_path());
    return;
  }
  // What will be created: the nearest existing folder above it must be a writable folder.
  fs::path parent = fs::absolute(target, error).parent_path();
  while (!parent.empty() && !fs::exists(parent, error) && parent != parent.root_path()) parent = parent.parent_path();
  if (!fs::is_directory(parent, error))
    throw ConfigError(option + " " + path + ": " + parent.string() + " is not a folder");
  if (!directory && parent != fs::absolute(target, error).parent_path())
    throw ConfigError(option + " " + path + ": the folder " + fs::absolute(target, error).parent_path().string() +
                      " does not exist");
  if (::access(parent.c_str(), W_OK) != 0)
    throw ConfigError(option + " " + path + ": cannot create files in " + parent.string() + " (no write permission)");
  cannot_create_in(parent);
}

void create_folders(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (!error) return;
  const std::string text = path + ": cannot create the folder: " + error.message();
  if (names_no_writable_place(error.value())) throw InputError(text);
  throw Error(text);
}

void write_file_atomic(const std::string& path, const std::string& contents) {
  write_files_atomic({{path, contents}});
}

namespace {

// Where `path`'s bytes go. A symbolic link is followed, so that the file it names is replaced and
// the link kept. A character device or a pipe (/dev/stdout, a FIFO) is written as it is: renaming
// a file over it would replace the device (as root, /dev/null itself). Any other kind of file (a
// folder, a block device, a socket) is refused.
using Destination = OutputDestination;

Destination destination_of(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  // A pipe or character device by any name, /proc's links to open files among them: the link
  // behind /dev/stdout or /dev/fd/N reads "pipe:[N]", which names no file to follow to.
  const fs::file_status named = fs::status(path, error);
  if (fs::is_character_file(named) || fs::is_fifo(named)) return {path, true};
  fs::path target(path);
  for (int links = 0; fs::is_symlink(target, error); ++links) {
    if (links == 40) throw InputError(path + ": too many levels of symbolic links");
    const fs::path next = fs::read_symlink(target, error);
    if (error) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  const fs::file_status status = fs::status(target, error);
  if (!fs::exists(status) || fs::is_regular_file(status)) return {target.string(), false};
  if (fs::is_character_file(status) || fs::is_fifo(status)) return {target.string(), true};
  throw InputError(path + ": not a regular file (" + (fs::is_directory(status) ? "a folder" : "a device or socket") +
                   "); results are written to files");
}

}  // namespace

OutputDestination output_destination(const std::string& path) { return destination_of(path); }

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& path_and_contents) {
  std::vector<Destination> destinations;
  std::vector<std::filesystem::path> normal;  // each destination absolute, without "." or ".."
  for (const auto& [path, contents] : path_and_contents) {
    destinations.push_back(destination_of(path));
    std::error_code error;
    normal.push_back(std::filesystem::absolute(destinations.back().path, error).lexically_normal());
    // Two names of one file (a link and its target, "q.out" and "./q.out") would share a
    // temporary file and leave it half written.
    for (std::size_t j = 0; j + 1 < normal.size(); ++j)
      if (normal[j] == normal.back())
        throw InputError(path + ": the same file as " + path_and_contents[j].first + ", written twice");
  }
  std::vector<std::string> written(path_and_contents.size());
  const auto remove_written = [&written](std::size_t from) {
    for (std::size_t i = from; i < written.size(); ++i)
      if (!written[i].empty()) std::remove(written[i].c_str());
  };
  try {
    for (std::size_t i = 0; i < path_and_contents.size(); ++i)
      if (!destinations[i].direct) written[i] = write_temporary(destinations[i].path, path_and_contents[i].second);
    // Devices and pipes once every file is ready: a failure there leaves no file replaced.
    for (std::size_t i = 0; i < path_and_contents.size(); ++i)
      if (destinations[i].direct)  // in place, nothing to sync
        write_whole(destinations[i].path, destinations[i].path, path_and_contents[i].second, false);
  } catch (...) {
    remove_written(0);
    throw;
  }
  for (std::size_t i = 0; i < written.size(); ++i) {
    if (written[i].empty()) continue;
    if (std::rename(written[i].c_str(), destinations[i].path.c_str()) != 0) {
      const int code = errno;
      remove_written(i);
      throw write_failure(path_and_contents[i].first, "cannot rename the written file into place", code);
    }
  }
}

void write_checkpoint_file(const std::string& path, const std::string& payload) {
  write_file_atomic(path, seal_checkpoint(payload));
}

std::string seal_checkpoint(const std::string& payload) {
  StateWriter header;
  std::string out(kMagic, 8);
  header.put_u64(kCheckpointVersion);
  header.put_u64(payload.size());
  out += header.bytes();
  out += payload;
  StateWriter trailer;
  trailer.put_u64(fnv1a64(payload));
  out += trailer.bytes();
  return out;
}

std::string read_checkpoint_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open checkpoint");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return open_checkpoint(buffer.str(), path);
}

std::string open_checkpoint(const std::string& all, const std::string& path) {
  if (all.size() < 8 + 16 + 8 || std::memcmp(all.data(), kMagic, 8) != 0)
    throw InputError(path + ": not an omkl checkpoint");
  StateReader header(all.substr(8, 16), path);
  const std::uint64_t version = header.get_u64();
  const std::uint64_t size = header.get_u64();
  if (version != kCheckpointVersion)
    throw InputError(path + ": checkpoint format version " + std::to_string(version) +
                     " is not supported (this build reads version " +
                     std::to_string(kCheckpointVersion) + ")");
  if (all.size() != 8 + 16 + size + 8) throw InputError(path + ": checkpoint is truncated or padded");
  std::string payload = all.substr(24, size);
  StateReader trailer(all.substr(24 + size, 8), path);
  if (trailer.get_u64() != fnv1a64(payload)) throw InputError(path + ": checkpoint checksum mismatch");
  return payload;
}

}  // namespace omkl::detail
