/// @file decimal.h
/// @brief std::strtod for every number the library reads from text (data cells, parameters,
/// kernel specs, command-line options): decimal numbers only.
#pragma once

#include <cctype>
#include <cstdlib>

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

}  // namespace omkl::detail
