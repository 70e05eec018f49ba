// rethrow_with_context() (core/error_context.h): the kind of the error survives with the
// context in front of its message, so that the command line's exit code and advice still follow
// the kind; memory exhaustion passes untouched.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

#include "core/error_context.h"
#include "omkl/error.h"

using omkl::detail::rethrow_with_context;

namespace {

template <class Thrown>
void rethrow_in_context(const Thrown& error) {
  try {
    throw error;
  } catch (...) {
    rethrow_with_context("study: algorithm 'ioks', replicate 7: ");
  }
}

template <class Expected, class Thrown>
void expect_kind_and_message(const Thrown& error, const std::string& message) {
  try {
    rethrow_in_context(error);
    ADD_FAILURE() << "nothing was thrown";
  } catch (const Expected& e) {
    EXPECT_EQ(std::string(e.what()), message);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another kind of error: " << e.what();
  }
}

}  // namespace

TEST(ErrorContextTest, TheKindSurvivesWithTheContextInFront) {
  const std::string where = "study: algorithm 'ioks', replicate 7: ";
  expect_kind_and_message<omkl::ConfigError>(omkl::ConfigError("bad D"), where + "bad D");
  expect_kind_and_message<omkl::InputError>(omkl::InputError("data.csv:3:2: not a number"),
                                            where + "data.csv:3:2: not a number");
  expect_kind_and_message<omkl::CudaError>(omkl::CudaError("cudaMalloc failed"), where + "cudaMalloc failed");
  expect_kind_and_message<omkl::Error>(omkl::Error("the bisection did not converge"),
                                       where + "the bisection did not converge");
  // A standard exception becomes an omkl::Error (a run failure), not an input or configuration error.
  try {
    rethrow_in_context(std::runtime_error("boom"));
    ADD_FAILURE() << "nothing was thrown";
  } catch (const omkl::InputError&) {
    ADD_FAILURE() << "became an InputError";
  } catch (const omkl::ConfigError&) {
    ADD_FAILURE() << "became a ConfigError";
  } catch (const omkl::Error& e) {
    EXPECT_EQ(std::string(e.what()), where + "boom");
  }
  // Memory exhaustion keeps its kind (the command line gives its own advice for it).
  EXPECT_THROW(rethrow_in_context(std::bad_alloc()), std::bad_alloc);
}
