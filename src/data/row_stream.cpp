#include "omkl/row_stream.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/csv_rows.h"
#include "data/libsvm_rows.h"
#include "data/parse_number.h"
#include "omkl/error.h"

namespace omkl {

namespace {
// Lines are read into a buffer of this size, grown (up to the cap) only for a longer line.
constexpr std::size_t kInitialBuffer = std::size_t{1} << 16;
constexpr std::size_t kLongestLine = std::size_t{1} << 26;
// How often a followed file is polled for growth.
constexpr auto kFollowPoll = std::chrono::milliseconds(20);
}  // namespace

struct RowStream::State {
  int fd = -1;
  bool owns_fd = false;
  bool regular_file = false;
  std::string name;
  RowStreamOptions options;
  detail::CsvHeader header;
  std::vector<char> buffer = std::vector<char>(kInitialBuffer);
  std::size_t begin = 0, end = 0;  // unread bytes: buffer[begin, end)
  bool at_eof = false;
  std::size_t line_number = 0;
  std::vector<std::size_t> indices;  // one LIBSVM line's pairs, reused
  std::vector<double> values;

  ~State() {
    if (owns_fd && fd >= 0) ::close(fd);
  }

  bool stopped() const { return options.stop && options.stop->load(); }

  // The next line without its "\n" / "\r\n" into [line_begin, line_end) (valid until the next
  // call); false at the end of the input or when stopped.
  bool read_line(const char*& line_begin, const char*& line_end) {
    for (;;) {
      const void* newline = std::memchr(buffer.data() + begin, '\n', end - begin);
      if (newline || (at_eof && end > begin)) {
        const char* first = buffer.data() + begin;
        const char* last = newline ? static_cast<const char*>(newline) : buffer.data() + end;
        begin = newline ? static_cast<std::size_t>(last - buffer.data()) + 1 : end;
        if (last > first && last[-1] == '\r') --last;
        line_begin = first;
        line_end = last;
        ++line_number;
        return true;
      }
      if (at_eof || stopped()) return false;
      // Make room: move the partial line to the front, or grow for a long line.
      if (begin > 0) {
        std::memmove(buffer.data(), buffer.data() + begin, end - begin);
        end -= begin;
        begin = 0;
      }
      if (end == buffer.size()) {
        if (buffer.size() >= kLongestLine)
          throw InputError(detail::location(name, line_number + 1, 1) + "line longer than " +
                           std::to_string(kLongestLine) + " bytes");
        buffer.resize(buffer.size() * 2);
      }
      const ssize_t got = ::read(fd, buffer.data() + end, buffer.size() - end);
      if (got > 0) {
        end += static_cast<std::size_t>(got);
      } else if (got == 0) {
        if (options.follow && regular_file) {
          std::this_thread::sleep_for(kFollowPoll);  // a file that grows: wait for more
        } else {
          at_eof = true;
        }
      } else if (errno != EINTR) {  // EINTR: a signal; the loop checks `stop`
        throw InputError(name + ": read error (" + std::strerror(errno) + ")");
      }
    }
  }
};

RowStream::RowStream(const std::string& path, RowStreamOptions options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  if (path == "-") {
    s.fd = STDIN_FILENO;
    s.name = "<stdin>";
  } else {
    s.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (s.fd < 0) throw InputError(path + ": cannot open file (" + std::strerror(errno) + ")");
    s.owns_fd = true;
    s.name = path;
  }
  struct stat info {};
  s.regular_file = ::fstat(s.fd, &info) == 0 && S_ISREG(info.st_mode);
  if (s.options.format == RowStreamOptions::Format::Libsvm) {
    if (s.options.n_features == 0)
      throw ConfigError(s.name + ": a live LIBSVM stream needs its number of features (--features D)");
    return;  // no header
  }
  const char* first = nullptr;
  const char* last = nullptr;
  while (s.read_line(first, last) && detail::is_blank_line(first, last)) {
  }
  if (!first || detail::is_blank_line(first, last))
    throw InputError(s.name + (s.stopped() ? ": stopped before its header row arrived" : ": empty stream (no header row)"));
  first = detail::skip_byte_order_mark(first, last);
  s.header = detail::parse_csv_header(s.name, first, last, s.options.csv);
}

RowStream::~RowStream() = default;

std::size_t RowStream::n_features() const {
  return state_->options.format == RowStreamOptions::Format::Libsvm ? state_->options.n_features
                                                                     : state_->header.n_features();
}
std::vector<std::string> RowStream::feature_names() const {
  if (state_->options.format == RowStreamOptions::Format::Libsvm) return {};
  return state_->header.feature_names();
}
const std::string& RowStream::name() const { return state_->name; }

bool RowStream::next(StreamRow& row) {
  State& s = *state_;
  const bool libsvm = s.options.format == RowStreamOptions::Format::Libsvm;
  for (;;) {
    const char* first = nullptr;
    const char* last = nullptr;
    do {
      if (s.stopped() || !s.read_line(first, last)) return false;
    } while (detail::is_blank_line(first, last));  // blank lines (a person typing) are skipped
    row.line = s.line_number;
    if (!libsvm) {
      row.x.resize(s.header.n_features());
      const detail::CsvRowValues values =
          detail::parse_csv_row(s.name, s.line_number, s.header, first, last, row.x.data(), /*target_optional=*/true);
      row.y = values.has_target ? values.y : 0.0;
      row.has_target = values.has_target;
      return true;
    }
    s.indices.clear();
    s.values.clear();
    if (s.line_number == 1) first = detail::skip_byte_order_mark(first, last);  // as before a CSV header
    const detail::LibsvmLine line =
        detail::parse_libsvm_line(s.name, s.line_number, first, last, s.options.n_features, s.indices, s.values,
                                  /*label_optional=*/true, s.options.width_source);
    if (!line.has_row) continue;  // a comment line
    row.x.assign(s.options.n_features, 0.0);  // absent entries are zero
    for (std::size_t k = 0; k < s.indices.size(); ++k) row.x[s.indices[k] - 1] = s.values[k];
    row.y = line.has_label ? line.label : 0.0;
    row.has_target = line.has_label;
    return true;
  }
}

}  // namespace omkl
