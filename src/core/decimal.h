/// @file decimal.h
/// @brief std::strtod for every number the library reads from text (data cells, parameters,
/// kernel specs, command-line options): decimal numbers only; and the shortest text of a double.
#pragma once

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>
#include <vector>

namespace omkl::detail {

/// std::strtod, except that C's hexadecimal floats ("0x1A", "-0X1p3"), which no data file,
/// parameter or kernel is written with, are not read: `*end` is then `text` (nothing read), as
/// for any other text that is not a number, so the caller's "all of it read" check refuses it.
inline double strtod_decimal(const char* text, char** end) {
  const char* p = text;
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;  // as strtod skips it
  if (*p == '+' || *p == '-') ++p;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    *end = const_cast<char*>(text);
    return 0.0;
  }
  return std::strtod(text, end);
}

/// The shortest text that reads back as the same double.
inline std::string shortest_decimal(double v) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

/// Splits "a+b+…" (a '+'-joined list of kernels or numbers) at every '+' that is not a number's
/// exponent sign: the '+' of "1e+0" follows a digit or '.' and an 'e' or 'E', and a digit
/// follows it. Empty items are kept (the caller names them in its error).
inline std::vector<std::string> split_plus_list(const std::string& text) {
  const auto digit = [&](std::size_t i) {
    return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
  };
  std::vector<std::string> items(1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool exponent_sign = i >= 2 && (text[i - 1] == 'e' || text[i - 1] == 'E') &&
                               (digit(i - 2) || text[i - 2] == '.') && digit(i + 1);
    if (text[i] == '+' && !exponent_sign)
      items.emplace_back();
    else
      items.back() += text[i];
  }
  return items;
}

}  // namespace omkl::detail
