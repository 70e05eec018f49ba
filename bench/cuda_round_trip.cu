/// @file cuda_round_trip.cu
/// @brief How long one host → device → host round trip takes, the floor under every per-step
/// launch of the graph-aided family on the CUDA backend (the host needs step t's predictions
/// before it can choose step t + 1's pairs). Four ways of making the trip, each timed over
/// many iterations after a warm-up, median and 90th percentile in microseconds:
///   launch      an empty kernel, then cudaStreamSynchronize
///   copies      256 B host → device, the kernel, 256 B back, synchronise (pinned buffers)
///   mapped      the kernel reads 256 B from and writes 256 B to mapped host memory, synchronise
///               (what CudaRfBackend::step_selected does since 2026-11-23)
///   mailbox     a resident kernel polls a sequence number in mapped host memory, answers each
///               request and publishes its own sequence number; the host spins on that (no
///               launch and no synchronisation per trip)
/// Usage: omkl_cuda_round_trip [iterations]   (needs a GPU; exits 2 without one)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda/device_buffer.h"

namespace {

using omkl::cuda::DeviceBuffer;
using omkl::cuda::PinnedBuffer;

constexpr int kWords = 32;  // 256 bytes of doubles each way

__global__ void empty_kernel() {}

__global__ void echo_kernel(const double* in, double* out) {
  const int i = threadIdx.x;
  if (i < kWords) out[i] = in[i] + 1.0;
}

// Answers requests until the host posts a negative sequence number, or gives up after a bounded
// number of idle polls so that a lost request cannot hang the GPU.
__global__ void mailbox_kernel(volatile long long* request_seq, const volatile double* in,
                               volatile double* out, volatile long long* answer_seq) {
  long long seen = 0;
  long long idle = 0;
  while (idle < (1LL << 28)) {
    const long long seq = *request_seq;
    if (seq == seen) {
      ++idle;
      continue;
    }
    if (seq < 0) return;
    idle = 0;
    seen = seq;
    const int i = threadIdx.x;
    if (i < kWords) out[i] = in[i] + 1.0;
    __threadfence_system();  // the answer reaches the host before the sequence number does
    __syncwarp();
    if (i == 0) *answer_seq = seq;
  }
}

struct Stats {
  double median_us, p90_us;
};

Stats time_trips(int iterations, const std::function<void()>& trip) {
  for (int i = 0; i < iterations / 10 + 10; ++i) trip();  // warm-up
  std::vector<double> us(static_cast<std::size_t>(iterations));
  for (auto& t : us) {
    const auto start = std::chrono::steady_clock::now();
    trip();
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() * 9 / 10]};
}

void check_answer(const double* out, const double* in, const char* what) {
  for (int i = 0; i < kWords; ++i)
    if (out[i] != in[i] + 1.0) {
      std::fprintf(stderr, "%s: wrong answer at %d\n", what, i);
      std::exit(1);
    }
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 5000;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "omkl_cuda_round_trip: no CUDA device\n");
    return 2;
  }
  try {
    const omkl::cuda::CudaContext context;  // owns the stream
    const cudaStream_t stream = context.stream();
    PinnedBuffer<double> host_in, host_out, mapped_in(true), mapped_out(true);
    for (auto* b : {&host_in, &host_out, &mapped_in, &mapped_out}) b->resize(kWords);
    DeviceBuffer<double> dev_in(kWords, stream), dev_out(kWords, stream);
    double value = 0.0;
    auto fill = [&](double* p) {
      value += 1.0;
      for (int i = 0; i < kWords; ++i) p[i] = value + i;
    };

    const Stats launch = time_trips(iterations, [&] {
      empty_kernel<<<1, 32, 0, stream>>>();
      OMKL_CUDA_CHECK(cudaGetLastError());
      OMKL_CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    const Stats copies = time_trips(iterations, [&] {
      fill(host_in.data());
      dev_in.copy_from_host(host_in.data(), kWords);
      echo_kernel<<<1, 32, 0, stream>>>(dev_in.data(), dev_out.data());
      OMKL_CUDA_CHECK(cudaGetLastError());
      dev_out.copy_to_host(host_out.data(), kWords);
      OMKL_CUDA_CHECK(cudaStreamSynchronize(stream));
      check_answer(host_out.data(), host_in.data(), "copies");
    });
    const Stats mapped = time_trips(iterations, [&] {
      fill(mapped_in.data());
      echo_kernel<<<1, 32, 0, stream>>>(mapped_in.device_data(), mapped_out.device_data());
      OMKL_CUDA_CHECK(cudaGetLastError());
      OMKL_CUDA_CHECK(cudaStreamSynchronize(stream));
      check_answer(mapped_out.data(), mapped_in.data(), "mapped");
    });

    PinnedBuffer<long long> sequence(true);  // [0] request, [1] answer
    sequence.resize(2);
    volatile long long* seq = sequence.data();
    seq[0] = 0;
    seq[1] = 0;
    mailbox_kernel<<<1, 32, 0, stream>>>(sequence.device_data(), mapped_in.device_data(),
                                         mapped_out.device_data(), sequence.device_data() + 1);
    OMKL_CUDA_CHECK(cudaGetLastError());
    long long next = 0;
    const Stats mailbox = time_trips(iterations, [&] {
      fill(mapped_in.data());
      ++next;
      std::atomic_thread_fence(std::memory_order_seq_cst);  // payload before the request
      seq[0] = next;
      const auto start = std::chrono::steady_clock::now();
      while (seq[1] != next) {
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) {
          std::fprintf(stderr, "mailbox: no answer within 5 s\n");
          std::exit(1);
        }
      }
      std::atomic_thread_fence(std::memory_order_seq_cst);
      check_answer(mapped_out.data(), mapped_in.data(), "mailbox");
    });
    seq[0] = -1;
    OMKL_CUDA_CHECK(cudaStreamSynchronize(stream));

    std::printf("round trip (us)   median      p90   (%d iterations)\n", iterations);
    const std::pair<const char*, Stats> rows[] = {
        {"launch", launch}, {"copies", copies}, {"mapped", mapped}, {"mailbox", mailbox}};
    for (const auto& [name, s] : rows) std::printf("%-12s %10.2f %8.2f\n", name, s.median_us, s.p90_us);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "omkl_cuda_round_trip: %s\n", e.what());
    return 1;
  }
  return 0;
}
