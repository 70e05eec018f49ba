/// @file state_io.h
/// @brief Binary serialisation of learner state and the checkpoint file format.
///
/// Format: magic "OMKLCKPT", format version (u32), payload size (u64), payload, FNV-1a-64
/// checksum of the payload. Files are written to a temporary name and renamed, so a reader
/// never sees half a checkpoint.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace omkl::detail {

class StateWriter {
 public:
  void put_u64(std::uint64_t v);
  void put_i64(std::int64_t v) { put_u64(static_cast<std::uint64_t>(v)); }
  void put_f64(double v);
  void put_string(const std::string& s);
  void put_f64s(const std::vector<double>& v);
  void put_f64s(const double* v, std::size_t n);
  void put_u64s(const std::vector<std::uint64_t>& v);
  /// Numbers that are finite in any model that has not diverged (θ, random features): as
  /// put_f64s(), and a −∞ among them counts in non_finite() too.
  void put_finite_f64s(const double* v, std::size_t n);
  /// Weight vectors of `per_vector` entries each, as put_f64s(): a vector that no run leaves
  /// (weight_vector_problem(): every log-weight −∞, or linear weights without a positive finite
  /// sum) counts in non_finite() too, as load refuses it.
  void put_weights(const std::vector<double>& v, std::size_t per_vector, bool log_domain);
  /// A tag that load_state checks, to catch a state read by the wrong algorithm.
  void put_tag(const std::string& tag) { put_string(tag); }
  const std::string& bytes() const { return bytes_; }
  /// Numbers written that no sound model holds: NaN or +∞ anywhere, −∞ among
  /// put_finite_f64s()'s (elsewhere −∞ is a log-weight that underflowed, which is sound), and
  /// each weight vector of put_weights() that no run leaves.
  /// Learner::to_bytes() refuses a state with any (the model diverged), StateReader counts the
  /// same, and a checkpoint with any is refused on load.
  std::size_t non_finite() const { return non_finite_; }

 private:
  std::string bytes_;
  std::size_t non_finite_ = 0;
};

/// NaN or +∞: a number no sound model holds anywhere in its state (StateWriter::non_finite()'s
/// rule; −∞ is sound where it is a log-weight that underflowed). A family's own checks at load
/// leave these to Learner::load and judge every other number, −∞ included.
bool unsound(double v);
/// Why a stored weight vector is one no run leaves ("" when it is not): log-weights
/// (`log_domain`) that are all −∞ (every weight zero: none to normalise by), or linear weights
/// below 0 or without a positive finite sum. An empty vector is sound; NaN and +∞ are not
/// judged here (unsound()).
std::string weight_vector_problem(const double* v, std::size_t n, bool log_domain);

/// Where the bytes a StateReader reads came from, which decides what a damaged one is: a
/// checkpoint or saved state is the user's input (InputError, exit code 1); a message between the
/// processes of one run is the run's own failure (Error, exit code 3), whatever its damage.
enum class StateOrigin { Stored, Message };

class StateReader {
 public:
  explicit StateReader(std::string bytes, std::string source = "state", StateOrigin origin = StateOrigin::Stored);
  std::uint64_t get_u64();
  std::int64_t get_i64() { return static_cast<std::int64_t>(get_u64()); }
  double get_f64();
  std::string get_string();
  std::vector<double> get_f64s();
  /// Reads exactly n doubles into `out`; throws (InputError for stored state) when the stored
  /// length differs.
  void get_f64s(double* out, std::size_t n);
  std::vector<std::uint64_t> get_u64s();
  /// get_f64s(out, n) for what StateWriter::put_finite_f64s() wrote.
  void get_finite_f64s(double* out, std::size_t n);
  /// Numbers read that no sound model holds, by StateWriter::non_finite()'s rule.
  std::size_t non_finite() const { return non_finite_; }
  void expect_tag(const std::string& tag);
  /// Reads a tag that must be one of `tags` (a section's format versions, newest first) and
  /// returns it.
  std::string expect_one_of_tags(const std::vector<std::string>& tags);
  /// Throws (InputError for stored state) unless n values of `size` bytes each remain: lets a
  /// reader check that a stored count is backed by data before it allocates for it.
  void require_values(std::uint64_t n, std::size_t size);
  bool at_end() const { return offset_ == bytes_.size(); }

 private:
  void need(std::size_t n);
  /// Throws `source: what`, as InputError or, for a message, as Error saying so.
  [[noreturn]] void fail(const std::string& what) const;
  std::string bytes_;
  std::string source_;
  StateOrigin origin_;
  std::size_t offset_ = 0;
  std::size_t non_finite_ = 0;
};

constexpr std::uint32_t kCheckpointVersion = 1;

std::uint64_t fnv1a64(const std::string& bytes);
/// Writes magic + version + payload + checksum to `path` atomically. Throws InputError on I/O failure.
void write_checkpoint_file(const std::string& path, const std::string& payload);
/// Reads and verifies a checkpoint; returns the payload. Throws InputError naming the file.
std::string read_checkpoint_file(const std::string& path);
/// The checkpoint bytes of a payload (magic, version, size, payload, checksum), as written to a file.
std::string seal_checkpoint(const std::string& payload);
/// Verifies checkpoint bytes and returns the payload; errors name `path` (a file or "<buffer>").
std::string open_checkpoint(const std::string& bytes, const std::string& path);
/// Writes `contents` to `path` atomically (temporary file in the same folder, then rename). A
/// symbolic link is written through (the file it names replaced, the link kept); a pipe or
/// character device is written as it is; a folder or other special file is an InputError.
/// Failures name the path and the system's reason: InputError where the path names no writable
/// place (a missing folder, no permission), Error (the machine's) otherwise (a full disk).
void write_file_atomic(const std::string& path, const std::string& contents);
/// Where write_file_atomic() puts `path`'s bytes: the file to replace (through a symbolic link,
/// the file it names: the link kept), or, `direct`, a pipe or character device written as it is
/// (/dev/stdout, /dev/fd/N, a FIFO). InputError for a folder or another special file.
struct OutputDestination {
  std::string path;
  bool direct = false;  ///< written in place, not through a temporary file renamed over it
};
OutputDestination output_destination(const std::string& path);
/// The temporary name `path`'s new contents are written under before the rename (beside it, so
/// that the rename stays on one file system; the process id, so that two runs do not collide).
std::string temporary_name(const std::string& path);
/// Opens `file` for writing (binary, truncated); failures name `path` (what the user gave) as
/// write_file_atomic()'s do: InputError where it names no writable place, Error otherwise.
std::FILE* open_for_writing(const std::string& file, const std::string& path);
/// Before any work, that `path` can be written: a file (`directory` false) in a folder that
/// exists, or a folder that exists or can be made in the nearest existing folder above it; not
/// the other kind; writable. ConfigError "OPTION PATH: why" (`option` names the setting, e.g.
/// "--out" or "out_dir"). Nothing for an empty path or "-".
void check_output_path(const std::string& option, const std::string& path, bool directory);
/// Creates the folder `path` and those above it that are missing. Failures name the path and
/// the system's reason, as write_file_atomic()'s: InputError where it names no writable place (a
/// file in the way, no permission), Error otherwise.
void create_folders(const std::string& path);
/// Writes several files as one: every temporary file is written (and synced) before the first
/// is renamed into place, so a full disk or a failed write leaves none of them. Only a rename
/// that fails after others succeeded (the folder's permissions changed meanwhile) leaves the
/// earlier ones in place; the renames go in the order given, so the last one (a study's
/// summary.json) marks a complete set.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& path_and_contents);

}  // namespace omkl::detail
