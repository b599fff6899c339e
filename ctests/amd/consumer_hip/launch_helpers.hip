// Launches upstream's helper kernels of the *_on_stream calls itself, as programs may
// (rocshmem_HOST.hpp declares them): PE 0 broadcasts a fresh random seed, each PE puts data made
// from it into the next PE, then two reductions through the template kernel (one launched with
// <<<>>>, one with hipLaunchKernelGGL); every PE checks what it received. See CMakeLists.txt.
#include <hip/hip_runtime.h>
#include <rocshmem/rocshmem.hpp>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

using namespace rocshmem;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  return x ^ (x >> 33);
}

// A failed HIP call ends the program with its name and error.
#define CHECK(call)                                                                      \
  do {                                                                                   \
    hipError_t e_ = (call);                                                              \
    if (e_ != hipSuccess) {                                                              \
      std::fprintf(stderr, "%s: %s\n", #call, hipGetErrorString(e_));                    \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

template <typename T>
static T *sym(size_t n) {
  return static_cast<T *>(rocshmem_malloc(n * sizeof(T)));
}

int main() {
  rocshmem_init();
  const int me = rocshmem_my_pe(), n = rocshmem_n_pes(), count = 300;
  uint64_t *seed_src = sym<uint64_t>(1), *seed = sym<uint64_t>(1);
  int *out = sym<int>(count), *ring = sym<int>(count);
  float *fsrc = sym<float>(count), *fdst = sym<float>(count);
  long *lsrc = sym<long>(count), *ldst = sym<long>(count);
  if (!seed_src || !seed || !out || !ring || !fsrc || !fdst || !lsrc || !ldst) return 1;
  hipStream_t s;
  CHECK(hipStreamCreate(&s));

  uint64_t mine = mix(uint64_t(time(nullptr)) ^ uint64_t(clock()));
  CHECK(hipMemcpy(seed_src, &mine, sizeof mine, hipMemcpyHostToDevice));
  rocshmem_barrier_all_kernel<<<1, 32, 0, s>>>();
  rocshmem_broadcastmem_kernel<<<1, 1024, 0, s>>>(ROCSHMEM_TEAM_WORLD, seed, seed_src, sizeof mine, 0);
  uint64_t base = mine;
  CHECK(hipStreamSynchronize(s));
  if (me != 0) CHECK(hipMemcpy(&base, seed, sizeof base, hipMemcpyDeviceToHost));

  auto val = [&](int pe, int i) { return mix(base + uint64_t(pe) * 1000003u + uint64_t(i)); };
  std::vector<int> o(count);
  std::vector<float> f(count);
  std::vector<long> l(count);
  for (int i = 0; i < count; i++) {
    o[i] = int(val(me, i));
    f[i] = float(val(me, i) % 1024);
    l[i] = long(val(me, i) >> 1);
  }
  CHECK(hipMemcpy(out, o.data(), count * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(fsrc, f.data(), count * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(lsrc, l.data(), count * sizeof(long), hipMemcpyHostToDevice));
  rocshmem_barrier_all_kernel<<<1, 32, 0, s>>>();
  rocshmem_putmem_kernel<<<1, 1024, 0, s>>>(ring, out, count * sizeof(int), (me + 1) % n);
  rocshmem_quiet_kernel<<<1, 1, 0, s>>>();
  hipLaunchKernelGGL(rocshmem_sync_all_kernel, 1, 32, 0, s);
  rocshmem_reduce_on_stream_kernel<float, ROCSHMEM_SUM><<<1, 1024, 0, s>>>(ROCSHMEM_TEAM_WORLD, fdst, fsrc, count);
  hipLaunchKernelGGL((rocshmem_reduce_on_stream_kernel<long, ROCSHMEM_MAX>), 1, 1024, 0, s, ROCSHMEM_TEAM_WORLD, ldst,
                     lsrc, count);
  CHECK(hipStreamSynchronize(s));

  std::vector<int> got(count);
  std::vector<float> fgot(count);
  std::vector<long> lgot(count);
  CHECK(hipMemcpy(got.data(), ring, count * sizeof(int), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(fgot.data(), fdst, count * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(lgot.data(), ldst, count * sizeof(long), hipMemcpyDeviceToHost));
  int bad = 0, from = (me + n - 1) % n;
  for (int i = 0; i < count; i++) {
    float fsum = 0;
    long lmax = long(val(0, i) >> 1);
    for (int p = 0; p < n; p++) {
      fsum += float(val(p, i) % 1024);
      if (long(val(p, i) >> 1) > lmax) lmax = long(val(p, i) >> 1);
    }
    bad += got[i] != int(val(from, i)) || fgot[i] != fsum || lgot[i] != lmax;
  }
  std::printf("PE %d: %d of %d elements wrong (put from PE %d, float sum, long max)\n", me, bad, count, from);
  rocshmem_finalize();
  return bad == 0 ? 0 : 1;
}
