// The host<->GPU link one way at a time and both ways at once, from pinned host memory (as
// StarPU's buffers are): whether a streamed grid's upload and write-back can each have the
// rate StarPU samples for one way (partition::kStreamedBusShare prices them so), or share it.
// bench_bus_duplex [MiB per buffer, default 1024] [rounds, default 5]: prints each way's GB/s
// alone and both at once (the median round), and their sum over one way's.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "bench_bus_duplex: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

struct Buffers {
  void* host_up = nullptr;    // pinned, copied to device_up
  void* host_down = nullptr;  // pinned, copied from device_down
  void* device_up = nullptr;
  void* device_down = nullptr;
  cudaStream_t up = nullptr, down = nullptr;
};

// Seconds of one round: the upload, the write-back, or both on their own streams at once.
double round_seconds(const Buffers& b, std::size_t bytes, bool up, bool down) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaEventRecord(start, nullptr), "cudaEventRecord");
  // Both streams wait for the start, so the two copies begin together.
  check(cudaStreamWaitEvent(b.up, start, 0), "cudaStreamWaitEvent");
  check(cudaStreamWaitEvent(b.down, start, 0), "cudaStreamWaitEvent");
  if (up)
    check(cudaMemcpyAsync(b.device_up, b.host_up, bytes, cudaMemcpyHostToDevice, b.up), "upload");
  if (down)
    check(cudaMemcpyAsync(b.host_down, b.device_down, bytes, cudaMemcpyDeviceToHost, b.down),
          "write-back");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaEventRecord(stop, nullptr), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (mib == 0 || rounds < 1) {
    std::fprintf(stderr, "usage: bench_bus_duplex [MiB per buffer > 0] [rounds >= 1]\n");
    return 2;
  }
  const std::size_t bytes = mib << 20;
  Buffers b;
  check(cudaHostAlloc(&b.host_up, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  check(cudaHostAlloc(&b.host_down, bytes, cudaHostAllocDefault), "cudaHostAlloc");
  check(cudaMalloc(&b.device_up, bytes), "cudaMalloc");
  check(cudaMalloc(&b.device_down, bytes), "cudaMalloc");
  check(cudaStreamCreateWithFlags(&b.up, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaStreamCreateWithFlags(&b.down, cudaStreamNonBlocking), "cudaStreamCreate");
  // Not zeros: every byte written once (pages touched, no special case anywhere on the path).
  for (std::size_t i = 0; i < bytes; i += 4096) static_cast<char*>(b.host_up)[i] = char(i >> 12);
  check(cudaMemset(b.device_down, 0x5a, bytes), "cudaMemset");
  const double gb = static_cast<double>(bytes) / 1e9;
  const struct {
    const char* name;
    bool up, down;
  } modes[] = {{"upload", true, false}, {"write-back", false, true}, {"both", true, true}};
  double rate[3];
  for (int m = 0; m < 3; ++m) {
    round_seconds(b, bytes, modes[m].up, modes[m].down);  // warm-up
    std::vector<double> s;
    for (int r = 0; r < rounds; ++r)
      s.push_back(round_seconds(b, bytes, modes[m].up, modes[m].down));
    std::sort(s.begin(), s.end());
    const double median = s[s.size() / 2];
    rate[m] = gb * (modes[m].up && modes[m].down ? 2 : 1) / median;
    std::printf("bus %-10s %8.3f ms  %7.2f GB/s (median of %d, %.0f MiB each way)\n", modes[m].name,
                median * 1e3, rate[m], rounds, static_cast<double>(mib));
  }
  std::printf("bus both ways together: %.2fx one way's rate (upload %.2f, write-back %.2f GB/s)\n",
              rate[2] / std::max(rate[0], rate[1]), rate[0], rate[1]);
  return 0;
}
