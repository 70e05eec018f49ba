// Trains Raker on a few synthetic samples through the installed public API only.
// Exit code 0 iff every prediction is finite.
#include <omkl/omkl.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

int main() {
  try {
    const std::size_t d = 3, n = 64;
    omkl::LearnerContext context;
    context.n_features = d;
    context.task = omkl::Task::Regression;
    context.seed = 1;
    context.horizon = n;
    omkl::Learner learner = omkl::make_learner(omkl::parse_algorithm_spec("raker:D=8"), context);

    bool finite = true;
    for (std::size_t t = 0; t < n; ++t) {
      std::vector<double> x(d);
      for (std::size_t k = 0; k < d; ++k) x[k] = std::sin(0.37 * static_cast<double>(t * d + k)) * 0.5 + 0.5;
      const double y = 0.5 + 0.25 * std::sin(x[0] + 2.0 * x[1] - x[2]);
      finite = finite && std::isfinite(learner.partial_fit(x, y));
    }
    const std::vector<double> probe(d, 0.5);
    const double p = learner.predict(probe);
    finite = finite && std::isfinite(p);
    std::printf("omkl %s consumer: %s after %lld samples, prediction %.6f\n", OMKL_VERSION_STRING,
                learner.spec().c_str(), static_cast<long long>(learner.n_seen()), p);
    return finite && learner.n_seen() == static_cast<std::int64_t>(n) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "omkl consumer: %s\n", e.what());
    return 1;
  }
}
