/// @file make_checkpoint_seeds.cpp
/// @brief Writes the checkpoint fuzz target's seed corpus: tiny learners of several families,
/// trained on a few samples and saved. For each, OUT/NAME.payload holds the payload only (the
/// target wraps it in a valid header and checksum) and one learner is also kept whole
/// (OUT/raker.ckpt, with the "OMKLCKPT" header), to reach the framing checks.
/// Usage: omkl_fuzz_seedgen OUTPUT_DIR
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "omkl/algorithm.h"
#include "omkl/error.h"
#include "omkl/learner.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: omkl_fuzz_seedgen OUTPUT_DIR\n";
    return 2;
  }
  const std::string out = argv[1];
  struct Seed {
    const char* file;
    const char* spec;
    omkl::Task task;
    std::size_t clients;
  };
  const std::vector<Seed> seeds = {
      {"raker", "raker:D=4,dict=gauss:0.5+lap:2", omkl::Task::Regression, 0},
      {"adaraker", "adaraker:D=3,dict=gauss:1+gauss:2", omkl::Task::Regression, 0},
      {"kogd", "kogd", omkl::Task::Regression, 0},
      {"omkl-b", "omkl-b", omkl::Task::Regression, 0},
      {"m-forgetron", "m-forgetron", omkl::Task::Classification, 0},
      {"omkl-gf", "omkl-gf:D=4,M=2,J=2,dict=gauss:0.5+gauss:1+gauss:2", omkl::Task::Regression, 0},
      {"omkl-sfg-r", "omkl-sfg-r:D=4,M=2,beta_rank=2,dict=gauss:0.5+gauss:1+gauss:2", omkl::Task::Regression, 0},
      {"rf-oks", "rf-oks:D=4,dict=gauss:0.5+gauss:2", omkl::Task::Regression, 0},
      {"lkmbooks", "lkmbooks:B=4,dict=gauss:0.5+gauss:2", omkl::Task::Regression, 0},
      {"pof-mkl", "pof-mkl:clients=2,D=4,M=2,dict=gauss2:0.5+gauss2:2", omkl::Task::Regression, 2},
      {"perfedavg", "perfedavg:clients=2,hidden_layers=1,width=3", omkl::Task::Regression, 2},
  };
  int failures = 0;
  for (const Seed& s : seeds) {
    try {
      omkl::LearnerContext context;
      context.n_features = 2;
      context.task = s.task;
      context.seed = 7;
      context.horizon = 16;
      context.n_clients = s.clients;
      omkl::Learner learner = omkl::make_learner(omkl::parse_algorithm_spec(s.spec), context);
      const std::size_t rows = s.clients ? 2 * s.clients : 4;
      for (std::size_t t = 0; t < rows; ++t) {
        const std::vector<double> x = {0.1 * static_cast<double>(t), 1.0 - 0.2 * static_cast<double>(t)};
        const double y = s.task == omkl::Task::Classification ? (t % 2 ? 1.0 : -1.0) : 0.3 * static_cast<double>(t);
        learner.partial_fit(x, y);
      }
      const std::string whole = out + "/" + s.file + ".ckpt";
      learner.save(whole);
      std::ifstream in(whole, std::ios::binary);
      std::ostringstream buffer;
      buffer << in.rdbuf();
      const std::string all = buffer.str();
      // Magic (8) + version (8) + size (8), payload, checksum (8): keep the payload.
      std::ofstream(out + "/" + s.file + ".payload", std::ios::binary) << all.substr(24, all.size() - 32);
      if (std::string(s.file) != "raker") std::remove(whole.c_str());
      std::cout << s.file << ": " << all.size() << " bytes\n";
    } catch (const omkl::Error& e) {
      std::cerr << s.file << ": " << e.what() << "\n";
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
