#include "omkl/kernel_spec.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/decimal.h"
#include "core/params.h"
#include "omkl/error.h"

namespace omkl {

KernelSpec KernelSpec::gaussian(double sigma) { return {KernelFamily::Gaussian, sigma, 2, 0.0}; }
KernelSpec KernelSpec::gaussian_sigma2(double sigma2) { return gaussian(std::sqrt(sigma2)); }
KernelSpec KernelSpec::laplacian(double sigma) { return {KernelFamily::Laplacian, sigma, 2, 0.0}; }
KernelSpec KernelSpec::cauchy(double sigma) { return {KernelFamily::Cauchy, sigma, 2, 0.0}; }
KernelSpec KernelSpec::isotropic_laplacian(double sigma) { return {KernelFamily::IsotropicLaplacian, sigma, 2, 0.0}; }
KernelSpec KernelSpec::linear() { return {KernelFamily::Linear, 1.0, 1, 0.0}; }
KernelSpec KernelSpec::polynomial(int degree, double offset) {
  return {KernelFamily::Polynomial, 1.0, degree, offset};
}

bool KernelSpec::shift_invariant() const {
  return family == KernelFamily::Gaussian || family == KernelFamily::Laplacian ||
         family == KernelFamily::Cauchy || family == KernelFamily::IsotropicLaplacian;
}

double KernelSpec::evaluate(const double* a, const double* b, std::size_t n) const {
  switch (family) {
    case KernelFamily::Gaussian: {
      double s = 0.0;
      for (std::size_t i = 0; i < n; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
      return std::exp(-s / (2.0 * sigma * sigma));
    }
    case KernelFamily::Laplacian: {
      double s = 0.0;
      for (std::size_t i = 0; i < n; ++i) s += std::fabs(a[i] - b[i]);
      return std::exp(-s / sigma);
    }
    case KernelFamily::IsotropicLaplacian: {
      double s = 0.0;
      for (std::size_t i = 0; i < n; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
      return std::exp(-std::sqrt(s) / sigma);
    }
    case KernelFamily::Cauchy: {
      double p = 1.0;
      for (std::size_t i = 0; i < n; ++i) {
        const double r = (a[i] - b[i]) / sigma;
        p /= 1.0 + r * r;
      }
      return p;
    }
    case KernelFamily::Linear:
    case KernelFamily::Polynomial: {
      double s = 0.0;
      for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
      if (family == KernelFamily::Linear) return s;
      s += offset;
      double p = 1.0;
      for (int k = 0; k < degree; ++k) p *= s;
      return p;
    }
  }
  return 0.0;
}

std::string KernelSpec::name() const {
  std::ostringstream out;
  out.precision(12);
  switch (family) {
    case KernelFamily::Gaussian: out << "gauss:" << sigma; break;
    case KernelFamily::Laplacian: out << "lap:" << sigma; break;
    case KernelFamily::Cauchy: out << "cauchy:" << sigma; break;
    case KernelFamily::IsotropicLaplacian: out << "lap_l2:" << sigma; break;
    case KernelFamily::Linear: out << "linear"; break;
    case KernelFamily::Polynomial:
      out << "poly:" << degree;
      if (offset != 0.0) out << ":" << offset;
      break;
  }
  return out.str();
}

namespace {

double parse_positive(const std::string& text, const std::string& kernel) {
  char* end = nullptr;
  errno = 0;
  const double v = detail::strtod_decimal(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v <= 0.0)
    throw ConfigError("kernel '" + kernel + "': expected a positive number, got '" + text + "'");
  return v;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == sep) {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

}  // namespace

KernelSpec parse_kernel(const std::string& text) {
  const auto parts = split(text, ':');
  const std::string& family = parts[0];
  if ((family == "gauss" || family == "gauss2" || family == "lap" || family == "lap_l2" || family == "cauchy") &&
      parts.size() == 2) {
    const double value = parse_positive(parts[1], text);
    const KernelSpec kernel = family == "gauss"    ? KernelSpec::gaussian(value)
                              : family == "gauss2" ? KernelSpec::gaussian_sigma2(value)
                              : family == "lap"    ? KernelSpec::laplacian(value)
                              : family == "lap_l2" ? KernelSpec::isotropic_laplacian(value)
                                                   : KernelSpec::cauchy(value);
    // Frequencies of scale 1/σ and distances over σ² must stay finite numbers.
    if (!(kernel.sigma >= detail::kSmallestBandwidth && kernel.sigma <= detail::kLargestBandwidth))
      throw ConfigError("kernel '" + text + "': the bandwidth σ must be in [" +
                        detail::shortest_decimal(detail::kSmallestBandwidth) + ", " +
                        detail::shortest_decimal(detail::kLargestBandwidth) + "]" +
                        (family == "gauss2" ? " (σ² in [1e-200, 1e+200])" : ""));
    return kernel;
  }
  if (family == "linear" && parts.size() == 1) return KernelSpec::linear();
  if (family == "poly" && (parts.size() == 2 || parts.size() == 3)) {
    const double degree = parse_positive(parts[1], text);
    if (degree != std::floor(degree) || degree > static_cast<double>(detail::kMaxPolynomialDegree))
      throw ConfigError("kernel '" + text + "': degree must be an integer in 1.." +
                        std::to_string(detail::kMaxPolynomialDegree));
    double offset = 0.0;
    if (parts.size() == 3) {
      char* end = nullptr;
      offset = detail::strtod_decimal(parts[2].c_str(), &end);
      if (parts[2].empty() || *end != '\0' || !std::isfinite(offset))
        throw ConfigError("kernel '" + text + "': bad offset '" + parts[2] + "'");
      // As the poly algorithm's offset (exact_kernel.cpp): a negative one is no kernel, and
      // offset^degree is the kernel's value at x ⟂ x'.
      if (offset < 0 || std::pow(offset, degree) > detail::kLargestParameter)
        throw ConfigError("kernel '" + text + "': the offset must be ≥ 0 with offset^degree ≤ " +
                          detail::shortest_decimal(detail::kLargestParameter) + ", got '" + parts[2] + "'");
    }
    return KernelSpec::polynomial(static_cast<int>(degree), offset);
  }
  throw ConfigError("unknown kernel '" + text +
                    "' (expected gauss:SIGMA, gauss2:SIGMA2, lap:SIGMA, lap_l2:SIGMA, cauchy:SIGMA, linear, "
                    "poly:DEGREE[:OFFSET], or a dictionary preset)");
}

std::vector<std::string> dictionary_preset_names() {
  return {"jmlr19-rf", "jmlr19-exact", "jmlr23-76", "conf-41", "fed-51", "fed-51-textbook", "oks-6"};
}

Dictionary parse_dictionary(const std::string& text) {
  Dictionary dict;
  if (text == "jmlr19-rf" || text == "jmlr19-exact") {
    // spec/raker.md §1.2: the tables were produced with σ ∈ {0.1, 1, 10} (not σ²).
    for (double sigma : {0.1, 1.0, 10.0}) dict.push_back(KernelSpec::gaussian(sigma));
    if (text == "jmlr19-exact") {
      dict.push_back(KernelSpec::linear());
      dict.push_back(KernelSpec::polynomial(2));
    }
    return dict;
  }
  if (text == "jmlr23-76") {
    // spec/graph-aided.md §1.3: γ is the Gaussian variance σ² and the Laplacian scale; the
    // index order matters for the reference graph, so keep it.
    for (int k = 0; k <= 50; ++k) dict.push_back(KernelSpec::gaussian_sigma2(std::pow(10.0, 0.08 * k - 2.0)));
    for (int l = 0; l <= 24; ++l) dict.push_back(KernelSpec::laplacian(std::pow(10.0, l / 6.0 - 2.0)));
    return dict;
  }
  if (text == "conf-41") {
    for (int k = 0; k <= 40; ++k) dict.push_back(KernelSpec::gaussian_sigma2(std::pow(10.0, (k - 20) / 10.0)));
    return dict;
  }
  if (text == "oks-6") {
    // spec/bandit.md §8.3: Gaussians exp(−‖δ‖²/(2σ²)), σ = 2^−2 … 2^3, in increasing σ.
    for (double sigma : {0.25, 0.5, 1.0, 2.0, 4.0, 8.0}) dict.push_back(KernelSpec::gaussian(sigma));
    return dict;
  }
  if (text == "fed-51" || text == "fed-51-textbook") {
    // spec/federated.md §4.4: σ_i = 10^((2i − 52)/25), i = 1..51. The authors draw
    // ρ ~ N(0, σ_i⁻¹ I) (σ_i is the variance, as in jmlr23-76's Gaussians); the textbook
    // reading ρ ~ N(0, σ_i⁻² I) makes σ_i the bandwidth.
    const bool textbook = text == "fed-51-textbook";
    for (int k = 0; k <= 50; ++k) {
      const double sigma = std::pow(10.0, 0.08 * k - 2.0);
      dict.push_back(textbook ? KernelSpec::gaussian(sigma) : KernelSpec::gaussian_sigma2(sigma));
    }
    return dict;
  }
  for (const auto& item : detail::split_plus_list(text)) {
    if (item.empty()) throw ConfigError("empty kernel in dictionary '" + text + "'");
    dict.push_back(parse_kernel(item));
  }
  return dict;
}

}  // namespace omkl
