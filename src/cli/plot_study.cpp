// `omkl study --plot`: the learning curves drawn by the Python package (python3 -m omkl plot),
// when it and matplotlib are importable; otherwise a note on how to get them. The study's files
// are written either way: a missing plotter is not a failed study.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

extern char** environ;

namespace omkl::cli {
namespace {

// Runs `argv` (searched on PATH) with PYTHONPATH extended by `python_path`; the exit status, or
// -1 when it could not start. `quiet` sends its output to /dev/null.
int run_child(const std::vector<std::string>& argv, const std::string& python_path, bool quiet) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("PYTHONPATH=", 0) != 0) env_strings.emplace_back(*e);
  if (!python_path.empty()) {
    const char* existing = std::getenv("PYTHONPATH");
    env_strings.push_back("PYTHONPATH=" + python_path + (existing && *existing ? ":" + std::string(existing) : ""));
  } else if (const char* existing = std::getenv("PYTHONPATH")) {
    env_strings.push_back(std::string("PYTHONPATH=") + existing);
  }
  std::vector<char*> env, args;
  for (auto& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int started = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::filesystem::path tool_folder() {
  std::error_code error;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : exe.parent_path();
}

// The build tree keeps the Python package beside the tool (BUILD/omkl, BUILD/python/omkl).
std::string package_beside_the_tool() {
  std::error_code error;
  const auto candidate = tool_folder() / "python";
  return std::filesystem::exists(candidate / "omkl" / "__init__.py", error) ? candidate.string() : std::string();
}

// A wheel installs the tool beside its environment's interpreter (VENV/bin/omkl, VENV/bin/python3):
// that one has the package, whatever python3 is first on PATH.
std::string default_python() {
  std::error_code error;
  const auto beside = tool_folder() / "python3";
  return std::filesystem::exists(beside, error) ? beside.string() : std::string("python3");
}

}  // namespace

void plot_study_outputs(const std::string& out_dir) {
  std::fflush(stdout);  // the study's report before the plotter's lines
  const char* chosen = std::getenv("OMKL_PYTHON");
  const std::string python = chosen && *chosen ? chosen : default_python();
  const std::string python_path = package_beside_the_tool();
  if (run_child({python, "-c", "import omkl._plot, matplotlib"}, python_path, /*quiet=*/true) != 0) {
    std::cerr << "omkl study --plot: no plots: " << python << " cannot import omkl's Python package and matplotlib. "
              << "Install them (pip install . in the repository, which brings the package; pip install matplotlib), "
              << "or point OMKL_PYTHON at an interpreter that has them, then draw the curves with: " << python
              << " -m omkl plot " << out_dir << "\n";
    return;
  }
  if (run_child({python, "-m", "omkl", "plot", out_dir}, python_path, /*quiet=*/false) != 0)
    std::cerr << "omkl study --plot: " << python << " -m omkl plot " << out_dir << " failed (above); the study's "
              << "files are written\n";
}

}  // namespace omkl::cli
