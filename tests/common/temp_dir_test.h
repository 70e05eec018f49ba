/// @file temp_dir_test.h
/// @brief A test fixture with a fresh, private temporary directory per test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "omkl/error.h"

namespace omkl::test {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("omkl_" + std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()) + "_" +
            info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  /// Writes `content` to dir/name and returns the path.
  std::string write(const std::string& name, const std::string& content) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  std::filesystem::path dir_;
};

/// Runs `load` and expects an InputError whose message starts with `prefix` and contains `part`.
inline void expect_input_error(const std::function<void()>& load, const std::string& prefix,
                               const std::string& part) {
  try {
    load();
    ADD_FAILURE() << "no InputError; expected one starting with " << prefix;
  } catch (const omkl::InputError& error) {
    const std::string what = error.what();
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    EXPECT_NE(what.find(part), std::string::npos) << what;
  }
}

}  // namespace omkl::test
