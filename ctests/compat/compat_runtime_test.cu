/*
 * Runtime test of the rocSHMEM HIP-on-CUDA compatibility headers, for an NVIDIA GPU.
 *
 * A HIP program, built unchanged by nvcc through include/rocshmem/compat:
 *
 *   nvcc -std=c++17 -arch=sm_90 -I include/rocshmem/compat \
 *        ctests/compat/compat_runtime_test.cu -o compat_runtime_test -lcuda
 *   ./compat_runtime_test
 *
 * (-lcuda: modules, hipMemsetD32 and the stream memory operations go through the driver API.)
 * Every check prints a FAIL line when it does not hold; the last line is PASS or FAIL and the
 * exit status is 0 only on PASS. The IPC check runs this program again as a child process
 * (`--ipc-child <handle>`) that opens the parent's memory handle.
 */
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>
#include <hip/hip_cooperative_groups.h>
#include <hip/hip_fp16.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <sys/wait.h>

static int g_failures = 0;
static int g_checks = 0;

#define EXPECT(cond, ...)                                       \
  do {                                                          \
    ++g_checks;                                                 \
    if (!(cond)) {                                              \
      ++g_failures;                                             \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
      printf(__VA_ARGS__);                                      \
      printf("\n");                                             \
    }                                                           \
  } while (0)

#define HIP_OK(call)                                                                        \
  do {                                                                                      \
    hipError_t ok_err_ = (call);                                                            \
    ++g_checks;                                                                             \
    if (ok_err_ != hipSuccess) {                                                            \
      ++g_failures;                                                                         \
      printf("FAIL %s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #call,                      \
             hipGetErrorName(ok_err_), hipGetErrorString(ok_err_));                         \
    }                                                                                       \
  } while (0)

/* ---------------------------------------------------------------------------------------- */
/* Device code                                                                                */
/* ---------------------------------------------------------------------------------------- */

__device__ int d_counter;
__device__ int d_array[4];
__constant__ int c_table[8];

template <class T, int N>
__global__ void fill_kernel(T *out, T value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) out[i] = value;
}

__global__ void add_one(int *p) { atomicAdd(p, 1); }

__global__ void table_kernel(int *out) {
  int i = threadIdx.x;
  if (i < 8) out[i] = c_table[i] + d_counter + d_array[i % 4];
}

__global__ void maybe_abort(int *p, int do_abort) {
  if (do_abort) abort();
  p[0] = 77;
}

/* Per-thread results of the wave intrinsics (one block of 64 threads = 2 warps). */
struct WaveOut {
  unsigned long long ballot_odd;
  unsigned long long ballot_all;
  unsigned long long ballot_diverged;  // __ballot(1) inside `lane < 8`
  int lane_id;
  int shfl_bcast;
  int shfl_up;
  int shfl_down;
  int shfl_xor;
  int shfl_w16;
  int reduce;
  int any3;
  int all32;
  int all31;
  int lanemask_lt_pop;
  float shfl_float;
  double shfl_double;
  long long shfl_ll;
  unsigned long long shfl_ull;
  float shfl_half;
  long long clock_delta;
  int popc;
  int shared_ok;
  int coop_rank;
};

__global__ void wave_kernel(WaveOut *out) {
  HIP_DYNAMIC_SHARED(int, scratch)
  const int tid = threadIdx.x;
  const int lane = tid % warpSize;
  WaveOut r = {};

  scratch[tid] = tid * 3;
  __syncthreads();
  r.shared_ok = scratch[(tid + 1) % blockDim.x] == ((tid + 1) % static_cast<int>(blockDim.x)) * 3;

  r.ballot_odd = __ballot(lane & 1);
  r.ballot_all = __ballot(1);
  if (lane < 8) {
    r.ballot_diverged = __ballot(1);
  }
  __syncwarp();
  r.lane_id = static_cast<int>(__lane_id());
  r.shfl_bcast = __shfl(lane * 10, 5);
  r.shfl_up = __shfl_up(lane, 1u);
  r.shfl_down = __shfl_down(lane, 1u);
  r.shfl_xor = __shfl_xor(lane, 1);
  r.shfl_w16 = __shfl(lane, 0, 16);
  int v = lane;
  for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_down(v, off);
  r.reduce = __shfl(v, 0);
  r.any3 = __any(lane == 3) ? 1 : 0;
  r.all32 = __all(lane < 32) ? 1 : 0;
  r.all31 = __all(lane < 31) ? 1 : 0;
  r.lanemask_lt_pop = __popcll(__lanemask_lt());
  r.shfl_float = __shfl_xor(static_cast<float>(lane) + 0.5f, 2);
  r.shfl_double = __shfl(static_cast<double>(lane) * 0.25, 31);
  r.shfl_ll = __shfl(static_cast<long long>(lane) << 40, 7);
  r.shfl_ull = __shfl_down(0x100000000ull * static_cast<unsigned long long>(lane), 2u);
  __half h = __float2half(static_cast<float>(lane));
  r.shfl_half = __half2float(__shfl(h, 9));
  long long c0 = clock64();
  long long c1 = __clock64();
  r.clock_delta = c1 - c0;
  r.popc = __popcll(0xF0F0ull);

  namespace cg = cooperative_groups;
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  tile.sync();
  r.coop_rank = static_cast<int>(tile.thread_rank());

  out[tid] = r;
}

/* Spins for `ns` nanoseconds of wall_clock64 and reports what it measured, in ticks. */
__global__ void spin_kernel(long long ns, long long *ticks) {
  long long start = wall_clock64();
  long long now = start;
  while (now - start < ns) now = wall_clock64();
  *ticks = now - start;
}

__global__ void write_host(int *host_mapped, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) host_mapped[i] = i * 2 + 1;
}

__global__ void bf16_kernel(const __hip_bfloat16 *in, float *out) {
  out[threadIdx.x] = __bfloat162float(in[threadIdx.x]) * 2.0f;
}

/* ---------------------------------------------------------------------------------------- */
/* Host helpers                                                                               */
/* ---------------------------------------------------------------------------------------- */

static std::string to_hex(const void *p, size_t n) {
  static const char *digits = "0123456789abcdef";
  std::string s;
  const unsigned char *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i) {
    s.push_back(digits[b[i] >> 4]);
    s.push_back(digits[b[i] & 15]);
  }
  return s;
}

static bool from_hex(const char *s, void *p, size_t n) {
  if (strlen(s) != 2 * n) return false;
  unsigned char *b = static_cast<unsigned char *>(p);
  for (size_t i = 0; i < n; ++i) {
    unsigned int v = 0;
    if (sscanf(s + 2 * i, "%2x", &v) != 1) return false;
    b[i] = static_cast<unsigned char>(v);
  }
  return true;
}

/* Child side of the IPC check: map the parent's buffer, check its pattern, write another. */
static int ipc_child(const char *hex) {
  hipIpcMemHandle_t handle;
  if (!from_hex(hex, &handle, sizeof(handle))) {
    printf("FAIL ipc child: bad handle text\n");
    return 2;
  }
  void *mapped = nullptr;
  hipError_t err = hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess);
  if (err != hipSuccess) {
    printf("FAIL ipc child: hipIpcOpenMemHandle -> %s\n", hipGetErrorName(err));
    return 3;
  }
  int host[64];
  if (hipMemcpy(host, mapped, sizeof(host), hipMemcpyDeviceToHost) != hipSuccess) return 4;
  for (int i = 0; i < 64; ++i) {
    if (host[i] != 1000 + i) {
      printf("FAIL ipc child: element %d is %d, want %d\n", i, host[i], 1000 + i);
      return 5;
    }
  }
  for (int i = 0; i < 64; ++i) host[i] = -i;
  if (hipMemcpy(mapped, host, sizeof(host), hipMemcpyHostToDevice) != hipSuccess) return 6;
  if (hipDeviceSynchronize() != hipSuccess) return 7;
  if (hipIpcCloseMemHandle(mapped) != hipSuccess) return 8;
  return 0;
}

static const char kPtx[] = R"PTX(
.version 7.0
.target sm_52
.address_size 64

.visible .global .align 4 .u32 mod_global = 42;

.visible .entry set_value(
  .param .u64 set_value_p,
  .param .u32 set_value_v
)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [set_value_p];
  ld.param.u32 %r1, [set_value_v];
  cvta.to.global.u64 %rd2, %rd1;
  st.global.u32 [%rd2], %r1;
  ret;
}
)PTX";

static void host_set_flag(void *arg) { *static_cast<volatile int *>(arg) = 1; }

/* ---------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--ipc-child") == 0) return ipc_child(argv[2]);

  /* Devices and properties. */
  int count = 0, dev = -1;
  HIP_OK(hipGetDeviceCount(&count));
  EXPECT(count >= 1, "device count %d", count);
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipGetDevice(&dev));
  EXPECT(dev == 0, "device %d", dev);

  hipDeviceProp_t prop;
  HIP_OK(hipGetDeviceProperties(&prop, 0));
  char arch[32];
  snprintf(arch, sizeof(arch), "sm_%d%d", prop.major, prop.minor);
  printf("device 0: %s, %s, %d SMs, %.1f GiB, clock %d kHz, memory clock %d kHz, bus %d bits, "
         "L2 %d B, PCI %04x:%02x:%02x\n",
         prop.name, prop.gcnArchName, prop.multiProcessorCount,
         prop.totalGlobalMem / 1073741824.0, prop.clockRate, prop.memoryClockRate,
         prop.memoryBusWidth, prop.l2CacheSize, prop.pciDomainID, prop.pciBusID,
         prop.pciDeviceID);
  EXPECT(strlen(prop.name) > 0, "empty name");
  EXPECT(strcmp(prop.gcnArchName, arch) == 0, "gcnArchName %s, want %s", prop.gcnArchName, arch);
  EXPECT(prop.warpSize == 32, "warpSize %d", prop.warpSize);
  EXPECT(prop.totalGlobalMem > (1ull << 30), "totalGlobalMem %zu", prop.totalGlobalMem);
  EXPECT(prop.sharedMemPerBlock >= 48 * 1024, "sharedMemPerBlock %zu", prop.sharedMemPerBlock);
  EXPECT(prop.maxThreadsPerBlock == 1024, "maxThreadsPerBlock %d", prop.maxThreadsPerBlock);
  EXPECT(prop.maxThreadsDim[0] == 1024 && prop.maxGridSize[0] > 65535, "dims %d %d",
         prop.maxThreadsDim[0], prop.maxGridSize[0]);
  EXPECT(prop.clockRate > 100000, "clockRate %d kHz", prop.clockRate);
  EXPECT(prop.memoryClockRate > 100000, "memoryClockRate %d kHz", prop.memoryClockRate);
  EXPECT(prop.memoryBusWidth >= 64, "memoryBusWidth %d", prop.memoryBusWidth);
  EXPECT(prop.multiProcessorCount > 0, "multiProcessorCount %d", prop.multiProcessorCount);
  EXPECT(prop.major >= 7, "major %d", prop.major);
  EXPECT(prop.l2CacheSize > 0, "l2CacheSize %d", prop.l2CacheSize);
  EXPECT(prop.concurrentKernels == 1, "concurrentKernels %d", prop.concurrentKernels);
  EXPECT(prop.canMapHostMemory == 1, "canMapHostMemory %d", prop.canMapHostMemory);
  EXPECT(prop.computeMode >= 0 && prop.computeMode <= 3, "computeMode %d", prop.computeMode);
  EXPECT(prop.isMultiGpuBoard == 0 || prop.isMultiGpuBoard == 1, "isMultiGpuBoard %d",
         prop.isMultiGpuBoard);
  EXPECT(prop.arch.hasWarpShuffle == 1, "arch bits");

  int attr = 0;
  HIP_OK(hipDeviceGetAttribute(&attr, hipDeviceAttributeWallClockRate, 0));
  EXPECT(attr == 1000000, "WallClockRate %d", attr);
  HIP_OK(hipDeviceGetAttribute(&attr, hipDeviceAttributeMultiprocessorCount, 0));
  EXPECT(attr == prop.multiProcessorCount, "MultiprocessorCount %d", attr);
  HIP_OK(hipDeviceGetAttribute(&attr, hipDeviceAttributeComputeCapabilityMajor, 0));
  EXPECT(attr == prop.major, "ComputeCapabilityMajor %d", attr);
  HIP_OK(hipDeviceGetAttribute(&attr, hipDeviceAttributeClockRate, 0));
  EXPECT(attr == prop.clockRate, "ClockRate %d", attr);
  HIP_OK(hipDeviceGetAttribute(&attr, hipDeviceAttributePciBusId, 0));
  EXPECT(attr == prop.pciBusID, "PciBusId %d", attr);
  HIP_OK(hipDeviceGetAttribute(&attr, hipDeviceAttributeWarpSize, 0));
  EXPECT(attr == 32, "WarpSize %d", attr);
  HIP_OK(hipDeviceGetAttribute(&attr, hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, 0));
  EXPECT(static_cast<size_t>(attr) == prop.maxSharedMemoryPerMultiProcessor,
         "MaxSharedMemoryPerMultiprocessor %d", attr);
  EXPECT(hipDeviceGetAttribute(&attr, hipDeviceAttributeWarpSize, 999) != hipSuccess,
         "bad device accepted");
  (void)hipGetLastError();
  EXPECT(hipDeviceGetAttribute(&attr, hipDeviceAttributeWallClockRate, 999) != hipSuccess,
         "bad device accepted (layer-answered attribute)");
  (void)hipGetLastError();

  /* Errors. */
  EXPECT(strcmp(hipGetErrorName(hipErrorInvalidValue), "hipErrorInvalidValue") == 0, "%s",
         hipGetErrorName(hipErrorInvalidValue));
  EXPECT(strcmp(hipGetErrorName(hipSuccess), "hipSuccess") == 0, "%s", hipGetErrorName(hipSuccess));
  EXPECT(strlen(hipGetErrorString(hipErrorOutOfMemory)) > 0, "empty error string");
  void *huge = nullptr;
  hipError_t oom = hipMalloc(&huge, static_cast<size_t>(1) << 60);
  EXPECT(oom == hipErrorOutOfMemory, "huge hipMalloc -> %s", hipGetErrorName(oom));
  EXPECT(hipGetLastError() == hipErrorOutOfMemory, "last error not recorded");
  EXPECT(hipGetLastError() == hipSuccess, "last error not cleared");

  /* Memory: malloc, memcpy, memset, memsetD32. */
  const int n = 256;
  int *d = nullptr;
  int host[n];
  HIP_OK(hipMalloc(&d, n * sizeof(int)));
  HIP_OK(hipMemsetD32(d, 0x12345678, n));
  HIP_OK(hipMemcpy(host, d, sizeof(host), hipMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < n; ++i) ok = ok && host[i] == 0x12345678;
  EXPECT(ok, "hipMemsetD32 pattern: host[0]=%#x", host[0]);
  HIP_OK(hipMemset(d, 0x01, n * sizeof(int)));
  HIP_OK(hipMemcpy(host, d, sizeof(host), hipMemcpyDeviceToHost));
  EXPECT(host[17] == 0x01010101, "hipMemset pattern %#x", host[17]);
  for (int i = 0; i < n; ++i) host[i] = i * i;
  HIP_OK(hipMemcpy(d, host, sizeof(host), hipMemcpyHostToDevice));
  int *d2 = nullptr;
  HIP_OK(hipExtMallocWithFlags(reinterpret_cast<void **>(&d2), n * sizeof(int),
                               hipDeviceMallocFinegrained));
  HIP_OK(hipMemcpy(d2, d, n * sizeof(int), hipMemcpyDeviceToDevice));
  memset(host, 0, sizeof(host));
  HIP_OK(hipMemcpy(host, d2, sizeof(host), hipMemcpyDefault));
  EXPECT(host[100] == 10000 && host[255] == 65025, "round trip %d %d", host[100], host[255]);
  HIP_OK(hipMemsetD8(d2, 0xAB, 4));
  HIP_OK(hipMemcpy(host, d2, sizeof(int), hipMemcpyDeviceToHost));
  EXPECT(static_cast<unsigned>(host[0]) == 0xABABABABu, "hipMemsetD8 %#x", host[0]);
  size_t free_b = 0, total_b = 0;
  HIP_OK(hipMemGetInfo(&free_b, &total_b));
  EXPECT(free_b > 0 && total_b >= free_b, "hipMemGetInfo %zu / %zu", free_b, total_b);

  /* Launch (template kernel, HIP_KERNEL_NAME) and hipLaunchKernel. */
  hipLaunchKernelGGL(HIP_KERNEL_NAME(fill_kernel<int, n>), dim3(n / 64), dim3(64), 0, 0, d, 5);
  HIP_OK(hipGetLastError());
  HIP_OK(hipDeviceSynchronize());
  HIP_OK(hipMemcpy(host, d, sizeof(host), hipMemcpyDeviceToHost));
  ok = true;
  for (int i = 0; i < n; ++i) ok = ok && host[i] == 5;
  EXPECT(ok, "fill_kernel result %d", host[0]);
  int *counter = nullptr;
  HIP_OK(hipMalloc(&counter, sizeof(int)));
  HIP_OK(hipMemset(counter, 0, sizeof(int)));
  void *args[] = {&counter};
  HIP_OK(hipLaunchKernel(add_one, dim3(2), dim3(32), args, 0, 0));
  HIP_OK(hipLaunchKernel(reinterpret_cast<const void *>(add_one), dim3(1), dim3(1), args));
  int cval = 0;
  HIP_OK(hipMemcpy(&cval, counter, sizeof(int), hipMemcpyDeviceToHost));
  EXPECT(cval == 65, "hipLaunchKernel counter %d", cval);

  /* abort() compiles in device code; not taken here. */
  hipLaunchKernelGGL(maybe_abort, 1, 1, 0, 0, counter, 0);
  HIP_OK(hipMemcpy(&cval, counter, sizeof(int), hipMemcpyDeviceToHost));
  EXPECT(cval == 77, "maybe_abort %d", cval);

  /* Symbols: HIP_SYMBOL(var) and &var forms, __constant__ and __device__. */
  int table[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  int one = 1000;
  int arr[4] = {1, 2, 3, 4};
  HIP_OK(hipMemcpyToSymbol(HIP_SYMBOL(c_table), table, sizeof(table)));
  HIP_OK(hipMemcpyToSymbol(&d_counter, &one, sizeof(int), 0, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpyToSymbol(HIP_SYMBOL(d_array), arr, sizeof(arr)));
  int back = 0;
  HIP_OK(hipMemcpyFromSymbol(&back, HIP_SYMBOL(d_counter), sizeof(int)));
  EXPECT(back == 1000, "hipMemcpyFromSymbol %d", back);
  int arr_back[2] = {0, 0};
  HIP_OK(hipMemcpyFromSymbol(arr_back, &d_array, 2 * sizeof(int), 2 * sizeof(int),
                             hipMemcpyDeviceToHost));
  EXPECT(arr_back[0] == 3 && arr_back[1] == 4, "hipMemcpyFromSymbol offset %d %d", arr_back[0],
         arr_back[1]);
  void *sym_addr = nullptr;
  size_t sym_size = 0;
  HIP_OK(hipGetSymbolAddress(&sym_addr, HIP_SYMBOL(d_counter)));
  HIP_OK(hipGetSymbolSize(&sym_size, HIP_SYMBOL(c_table)));
  EXPECT(sym_addr != nullptr && sym_size == sizeof(table), "symbol %p %zu", sym_addr, sym_size);
  hipLaunchKernelGGL(table_kernel, dim3(1), dim3(8), 0, 0, d);
  HIP_OK(hipMemcpy(host, d, 8 * sizeof(int), hipMemcpyDeviceToHost));
  EXPECT(host[0] == 1011 && host[7] == 1084, "table_kernel %d %d", host[0], host[7]);

  /* Wave intrinsics: 2 warps, dynamic shared memory. */
  WaveOut *dw = nullptr;
  WaveOut hw[64];
  HIP_OK(hipMalloc(&dw, sizeof(hw)));
  hipLaunchKernelGGL(wave_kernel, dim3(1), dim3(64), 64 * sizeof(int), 0, dw);
  HIP_OK(hipGetLastError());
  HIP_OK(hipMemcpy(hw, dw, sizeof(hw), hipMemcpyDeviceToHost));
  for (int t = 0; t < 64; ++t) {
    const WaveOut &r = hw[t];
    const int lane = t % 32;
    EXPECT(r.ballot_odd == 0xAAAAAAAAull, "t%d ballot_odd %#llx", t, r.ballot_odd);
    EXPECT(r.ballot_all == 0xFFFFFFFFull, "t%d ballot_all %#llx", t, r.ballot_all);
    EXPECT(lane >= 8 || r.ballot_diverged == 0xFFull, "t%d ballot_diverged %#llx", t,
           r.ballot_diverged);
    EXPECT(r.lane_id == lane, "t%d lane_id %d", t, r.lane_id);
    EXPECT(r.shfl_bcast == 50, "t%d shfl %d", t, r.shfl_bcast);
    EXPECT(r.shfl_up == (lane == 0 ? 0 : lane - 1), "t%d shfl_up %d", t, r.shfl_up);
    EXPECT(r.shfl_down == (lane == 31 ? 31 : lane + 1), "t%d shfl_down %d", t, r.shfl_down);
    EXPECT(r.shfl_xor == (lane ^ 1), "t%d shfl_xor %d", t, r.shfl_xor);
    EXPECT(r.shfl_w16 == (lane < 16 ? 0 : 16), "t%d shfl width 16: %d", t, r.shfl_w16);
    EXPECT(r.reduce == 496, "t%d reduce %d", t, r.reduce);
    EXPECT(r.any3 == 1 && r.all32 == 1 && r.all31 == 0, "t%d any/all %d %d %d", t, r.any3,
           r.all32, r.all31);
    EXPECT(r.lanemask_lt_pop == lane, "t%d lanemask_lt %d", t, r.lanemask_lt_pop);
    EXPECT(r.shfl_float == static_cast<float>(lane ^ 2) + 0.5f, "t%d shfl float %f", t,
           r.shfl_float);
    EXPECT(r.shfl_double == 31 * 0.25, "t%d shfl double %f", t, r.shfl_double);
    EXPECT(r.shfl_ll == (7ll << 40), "t%d shfl long long %lld", t, r.shfl_ll);
    EXPECT(r.shfl_ull == 0x100000000ull * static_cast<unsigned long long>(lane >= 30 ? lane : lane + 2),
           "t%d shfl_down ull %#llx", t, r.shfl_ull);
    EXPECT(r.shfl_half == 9.0f, "t%d shfl half %f", t, r.shfl_half);
    EXPECT(r.clock_delta >= 0, "t%d clock64 delta %lld", t, r.clock_delta);
    EXPECT(r.popc == 8, "t%d popcll %d", t, r.popc);
    EXPECT(r.shared_ok == 1, "t%d dynamic shared", t);
    EXPECT(r.coop_rank == lane, "t%d tile rank %d", t, r.coop_rank);
  }

  /* Streams, events and wall_clock64 against event timing. */
  hipStream_t s1, s2;
  HIP_OK(hipStreamCreate(&s1));
  HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  hipEvent_t e0, e1, ev_sync;
  HIP_OK(hipEventCreate(&e0));
  HIP_OK(hipEventCreate(&e1));
  HIP_OK(hipEventCreateWithFlags(&ev_sync, hipEventDisableTiming));
  long long *dticks = nullptr;
  HIP_OK(hipMalloc(&dticks, sizeof(long long)));
  const long long spin_ns = 20 * 1000 * 1000;  // 20 ms
  HIP_OK(hipEventRecord(e0, s1));
  hipLaunchKernelGGL(spin_kernel, dim3(1), dim3(1), 0, s1, spin_ns, dticks);
  HIP_OK(hipEventRecord(e1, s1));
  HIP_OK(hipEventSynchronize(e1));
  float ms = 0;
  HIP_OK(hipEventElapsedTime(&ms, e0, e1));
  long long ticks = 0;
  HIP_OK(hipMemcpy(&ticks, dticks, sizeof(ticks), hipMemcpyDeviceToHost));
  int wall_khz = 0;
  HIP_OK(hipDeviceGetAttribute(&wall_khz, hipDeviceAttributeWallClockRate, 0));
  const double wall_ms = static_cast<double>(ticks) / wall_khz;
  printf("spin: wall_clock64 %.3f ms, events %.3f ms\n", wall_ms, ms);
  EXPECT(wall_ms >= 20.0 && wall_ms < 25.0, "wall_clock64 ms %.3f", wall_ms);
  EXPECT(ms >= 19.0 && ms < 40.0, "event ms %.3f vs wall_clock64 %.3f", ms, wall_ms);
  EXPECT(hipEventQuery(e1) == hipSuccess, "event query");

  /* s2 waits for s1's kernel through an event. */
  hipLaunchKernelGGL(spin_kernel, dim3(1), dim3(1), 0, s1, 5 * 1000 * 1000LL, dticks);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(fill_kernel<int, n>), dim3(n / 64), dim3(64), 0, s1, d, 42);
  HIP_OK(hipEventRecord(ev_sync, s1));
  HIP_OK(hipStreamWaitEvent(s2, ev_sync, 0));
  int *pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, n * sizeof(int), hipHostMallocDefault));
  HIP_OK(hipMemcpyAsync(pinned, d, n * sizeof(int), hipMemcpyDeviceToHost, s2));
  HIP_OK(hipStreamSynchronize(s2));
  EXPECT(pinned[0] == 42 && pinned[n - 1] == 42, "stream wait event: %d %d", pinned[0],
         pinned[n - 1]);
  volatile int host_flag = 0;
  HIP_OK(hipLaunchHostFunc(s1, host_set_flag, const_cast<int *>(&host_flag)));
  HIP_OK(hipStreamSynchronize(s1));
  EXPECT(host_flag == 1, "hipLaunchHostFunc");
  HIP_OK(hipMemsetAsync(d, 0, n * sizeof(int), hipStreamPerThread));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));

  /* Stream memory operations. */
  HIP_OK(hipStreamWriteValue32(s1, d, 7u, 0));
  HIP_OK(hipStreamWaitValue32(s1, d, 7u, hipStreamWaitValueGte));
  HIP_OK(hipMemcpyAsync(pinned, d, sizeof(int), hipMemcpyDeviceToHost, s1));
  HIP_OK(hipStreamSynchronize(s1));
  EXPECT(pinned[0] == 7, "hipStreamWriteValue32 %d", pinned[0]);
  EXPECT(hipStreamWaitValue32(s1, d, 7u, hipStreamWaitValueEq, 0xFFu) == hipErrorNotSupported,
         "masked wait must report not supported");

  /* Mapped host memory written by a kernel (hipHostMalloc coherent). */
  int *mapped_host = nullptr;
  HIP_OK(hipHostMalloc(&mapped_host, 64 * sizeof(int), hipHostMallocMapped | hipHostMallocCoherent));
  int *mapped_dev = nullptr;
  HIP_OK(hipHostGetDevicePointer(reinterpret_cast<void **>(&mapped_dev), mapped_host, 0));
  hipLaunchKernelGGL(write_host, dim3(1), dim3(64), 0, 0, mapped_dev, 64);
  HIP_OK(hipDeviceSynchronize());
  EXPECT(mapped_host[0] == 1 && mapped_host[63] == 127, "mapped host %d %d", mapped_host[0],
         mapped_host[63]);

  /* Pointer attributes. */
  hipPointerAttribute_t pa;
  HIP_OK(hipPointerGetAttributes(&pa, d));
  EXPECT(pa.type == hipMemoryTypeDevice && pa.device == 0 && pa.devicePointer == d,
         "device pointer attributes %d %d", static_cast<int>(pa.type), pa.device);
  HIP_OK(hipPointerGetAttributes(&pa, pinned));
  EXPECT(pa.type == hipMemoryTypeHost && pa.memoryType == hipMemoryTypeHost,
         "pinned pointer attributes %d", static_cast<int>(pa.type));
  int *managed = nullptr;
  HIP_OK(hipMallocManaged(&managed, 64 * sizeof(int)));
  HIP_OK(hipPointerGetAttributes(&pa, managed));
  EXPECT(pa.type == hipMemoryTypeManaged && pa.isManaged == 1, "managed pointer attributes %d",
         static_cast<int>(pa.type));
  HIP_OK(hipMemPrefetchAsync(managed, 64 * sizeof(int), 0, s1));
  HIP_OK(hipStreamSynchronize(s1));
  int *plain = static_cast<int *>(malloc(64));
  HIP_OK(hipPointerGetAttributes(&pa, plain));
  EXPECT(pa.type == hipMemoryTypeUnregistered, "malloc pointer attributes %d",
         static_cast<int>(pa.type));
  free(plain);

  /* Graph capture: two launches of a captured increment. */
  HIP_OK(hipMemset(counter, 0, sizeof(int)));
  hipGraph_t graph = nullptr;
  hipGraphExec_t exec = nullptr;
  HIP_OK(hipStreamBeginCapture(s2, hipStreamCaptureModeGlobal));
  hipStreamCaptureStatus cap = hipStreamCaptureStatusNone;
  HIP_OK(hipStreamIsCapturing(s2, &cap));
  EXPECT(cap == hipStreamCaptureStatusActive, "capture status %d", static_cast<int>(cap));
  hipLaunchKernelGGL(add_one, dim3(1), dim3(10), 0, s2, counter);
  HIP_OK(hipStreamEndCapture(s2, &graph));
  HIP_OK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  HIP_OK(hipGraphLaunch(exec, s2));
  HIP_OK(hipGraphLaunch(exec, s2));
  HIP_OK(hipStreamSynchronize(s2));
  HIP_OK(hipMemcpy(&cval, counter, sizeof(int), hipMemcpyDeviceToHost));
  EXPECT(cval == 20, "graph launches counted %d", cval);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(graph));

  /* Occupancy and function attributes. */
  int blocks = 0, grid = 0, block = 0;
  HIP_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, wave_kernel, 64, 64 * sizeof(int)));
  EXPECT(blocks > 0, "occupancy %d", blocks);
  HIP_OK(hipOccupancyMaxPotentialBlockSize(&grid, &block, add_one));
  EXPECT(grid > 0 && block > 0, "potential block size %d %d", grid, block);
  hipFuncAttributes fa;
  HIP_OK(hipFuncGetAttributes(&fa, add_one));
  EXPECT(fa.maxThreadsPerBlock > 0, "func attributes %d", fa.maxThreadsPerBlock);

  /* 16-bit floats. */
  __hip_bfloat16 hb[4] = {__float2bfloat16(1.0f), __float2bfloat16(2.5f), __float2bfloat16(-3.0f),
                          __float2bfloat16(0.0f)};
  __hip_bfloat16 *dbf = nullptr;
  float *dfl = nullptr;
  float hf[4] = {0, 0, 0, 0};
  HIP_OK(hipMalloc(&dbf, sizeof(hb)));
  HIP_OK(hipMalloc(&dfl, sizeof(hf)));
  HIP_OK(hipMemcpy(dbf, hb, sizeof(hb), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(bf16_kernel, dim3(1), dim3(4), 0, 0, dbf, dfl);
  HIP_OK(hipMemcpy(hf, dfl, sizeof(hf), hipMemcpyDeviceToHost));
  EXPECT(hf[0] == 2.0f && hf[1] == 5.0f && hf[2] == -6.0f, "bf16 %f %f %f", hf[0], hf[1], hf[2]);

  /* Modules: PTX text through the driver's JIT. */
  hipModule_t module = nullptr;
  hipError_t merr = hipModuleLoadData(&module, kPtx);
  HIP_OK(merr);
  if (merr == hipSuccess) {
    hipFunction_t fn = nullptr;
    HIP_OK(hipModuleGetFunction(&fn, module, "set_value"));
    hipDeviceptr_t gptr = nullptr;
    size_t gbytes = 0;
    HIP_OK(hipModuleGetGlobal(&gptr, &gbytes, module, "mod_global"));
    int gval = 0;
    HIP_OK(hipMemcpy(&gval, gptr, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT(gbytes == 4 && gval == 42, "module global %zu %d", gbytes, gval);
    unsigned int v = 1234;
    void *kparams[] = {&counter, &v};
    HIP_OK(hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s1, kparams, nullptr));
    HIP_OK(hipStreamSynchronize(s1));
    HIP_OK(hipMemcpy(&cval, counter, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT(cval == 1234, "hipModuleLaunchKernel (params) %d", cval);
    /* The packed parameter block: the pointer at 0, the u32 at 8; its size must be the
     * kernel's parameter size (12 bytes), not the padded struct's. */
    struct ArgBuf {
      void *p;
      unsigned int v;
    } argbuf = {counter, 5678u};
    size_t argsize = offsetof(ArgBuf, v) + sizeof(unsigned int);
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &argbuf, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                     &argsize, HIP_LAUNCH_PARAM_END};
    HIP_OK(hipModuleLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s1, nullptr, extra));
    HIP_OK(hipStreamSynchronize(s1));
    HIP_OK(hipMemcpy(&cval, counter, sizeof(int), hipMemcpyDeviceToHost));
    EXPECT(cval == 5678, "hipModuleLaunchKernel (extra) %d", cval);
    HIP_OK(hipModuleUnload(module));
  }
  hipModule_t missing = nullptr;
  hipError_t nf = hipModuleLoad(&missing, "/nonexistent/kernels.cubin");
  EXPECT(nf == hipErrorFileNotFound, "hipModuleLoad missing file -> %s", hipGetErrorName(nf));

  /* IPC: handles, and a child process that maps the buffer. */
  int *ipc_buf = nullptr;
  HIP_OK(hipMalloc(&ipc_buf, 64 * sizeof(int)));
  int pattern[64];
  for (int i = 0; i < 64; ++i) pattern[i] = 1000 + i;
  HIP_OK(hipMemcpy(ipc_buf, pattern, sizeof(pattern), hipMemcpyHostToDevice));
  hipIpcMemHandle_t mh;
  HIP_OK(hipIpcGetMemHandle(&mh, ipc_buf));
  hipEvent_t ipc_event;
  HIP_OK(hipEventCreateWithFlags(&ipc_event, hipEventDisableTiming | hipEventInterprocess));
  hipIpcEventHandle_t eh;
  HIP_OK(hipIpcGetEventHandle(&eh, ipc_event));
  std::string cmd = std::string("\"") + argv[0] + "\" --ipc-child " + to_hex(&mh, sizeof(mh));
  int status = system(cmd.c_str());
  int child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  EXPECT(child_rc == 0, "IPC child exit status %d", child_rc);
  if (child_rc == 0) {
    HIP_OK(hipMemcpy(pattern, ipc_buf, sizeof(pattern), hipMemcpyDeviceToHost));
    EXPECT(pattern[0] == 0 && pattern[63] == -63, "IPC child writes %d %d", pattern[0],
           pattern[63]);
  }
  int can = 0;
  if (count > 1) {
    HIP_OK(hipDeviceCanAccessPeer(&can, 0, 1));
    if (can) {
      hipError_t pe = hipDeviceEnablePeerAccess(1, 0);
      EXPECT(pe == hipSuccess || pe == hipErrorPeerAccessAlreadyEnabled, "peer access %s",
             hipGetErrorName(pe));
    }
  }

  /* Clean up. */
  HIP_OK(hipEventDestroy(e0));
  HIP_OK(hipEventDestroy(e1));
  HIP_OK(hipEventDestroy(ev_sync));
  HIP_OK(hipEventDestroy(ipc_event));
  HIP_OK(hipStreamDestroy(s1));
  HIP_OK(hipStreamDestroy(s2));
  HIP_OK(hipFree(d));
  HIP_OK(hipFree(d2));
  HIP_OK(hipFree(counter));
  HIP_OK(hipFree(dw));
  HIP_OK(hipFree(dticks));
  HIP_OK(hipFree(managed));
  HIP_OK(hipFree(dbf));
  HIP_OK(hipFree(dfl));
  HIP_OK(hipFree(ipc_buf));
  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipHostFree(mapped_host));
  HIP_OK(hipDeviceSynchronize());

  printf("%d checks, %d failed\n", g_checks, g_failures);
  printf(g_failures == 0 ? "PASS\n" : "FAIL\n");
  return g_failures == 0 ? 0 : 1;
}
