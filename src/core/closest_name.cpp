/// @file closest_name.cpp
#include "core/closest_name.h"

#include <algorithm>

namespace omkl::detail {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string closest_name(const std::string& name, const std::vector<std::string>& known, std::size_t max_edits) {
  std::string closest;
  std::size_t best = max_edits + 1;
  for (const auto& candidate : known) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best) {
      best = d;
      closest = candidate;
    }
  }
  return closest;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& known, std::size_t max_edits) {
  const std::string closest = closest_name(name, known, max_edits);
  return closest.empty() ? std::string() : " (did you mean '" + closest + "'?)";
}

}  // namespace omkl::detail
