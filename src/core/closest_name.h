/// @file closest_name.h
/// @brief "Did you mean …?": the known name nearest a mistyped one, for the errors that refuse an
/// unknown algorithm, parameter, command or option.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace omkl::detail {

/// Levenshtein distance between a and b (insertions, deletions and substitutions, each 1).
std::size_t edit_distance(const std::string& a, const std::string& b);

/// The first of `known` at the smallest edit distance from `name`, if that distance is at most
/// `max_edits` (a typo, not another word); empty otherwise.
std::string closest_name(const std::string& name, const std::vector<std::string>& known, std::size_t max_edits = 2);

/// " (did you mean 'X'?)" for closest_name()'s X, or "" when nothing is that close.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& known, std::size_t max_edits = 2);

}  // namespace omkl::detail
