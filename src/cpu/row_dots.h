/// @file row_dots.h
/// @brief out[i] = rows[i]·x for a row-major block of rows: the inner products of one sample
/// with stored samples, in the row-major layout. The library now takes them with kernel_rows()
/// over the blocked layout (kernel_rows.h), whose results equal these bit for bit on the same
/// machine; this form stays as the reference that defines those bits (the tests compare them).
///
/// AVX2 + FMA kernel: four rows at a time against the same 4-vector of x, one accumulator per
/// row, the last d mod 4 columns through a masked load; each row's sum is formed the same way
/// whichever rows share its group, so a row's result depends only on the row and x. Without
/// AVX2 + FMA (or with OMKL_CPU_SIMD=portable), a plain loop in column order.
#pragma once

#include <cstddef>

namespace omkl::detail::cpu {

/// out[i] = Σ_k rows[i·d + k]·x[k] for i < n_rows.
void row_dots(const double* rows, std::size_t n_rows, std::size_t d, const double* x, double* out);

}  // namespace omkl::detail::cpu
