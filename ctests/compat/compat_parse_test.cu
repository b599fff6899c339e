/*
 * Parse test of the rocSHMEM HIP-on-CUDA compatibility headers (include/rocshmem/compat).
 *
 * A HIP program of the kind rocSHMEM users write, using a wide slice of the covered API. It is
 * only type-checked, on a machine without CUDA, against the stub CUDA headers in device/cuda_decls/:
 *
 *   clang++-16 -x cuda --cuda-gpu-arch=sm_90 -nocudainc -nocudalib -fsyntax-only \
 *     -I device/cuda_decls -I include/rocshmem/compat ctests/compat/compat_parse_test.cu
 *
 * (both the host and the device pass are checked). compat_runtime_test.cu runs the same
 * kinds of calls for real with nvcc on an NVIDIA GPU.
 */
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
#include <hip/hip_ext.h>

#if !defined(__HIP_PLATFORM_NVIDIA__) || !defined(__HIP_PLATFORM_NVCC__)
#error "compat layer must define __HIP_PLATFORM_NVIDIA__ and __HIP_PLATFORM_NVCC__"
#endif
#if !defined(ROCSHMEM_HIP_COMPAT) || HIP_VERSION_MAJOR < 6 || !defined(HIP_VERSION)
#error "compat layer version macros missing"
#endif
#if defined(__HIPCC__)
#error "compat layer must not claim AMD's compiler"
#endif
#if defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#error "__HIP_DEVICE_COMPILE__ must be set in the device pass"
#endif

#define CHECK(call)                                                              \
  do {                                                                           \
    hipError_t check_err_ = (call);                                              \
    if (check_err_ != hipSuccess) {                                              \
      fprintf(stderr, "%s: %s (%s)\n", #call, hipGetErrorString(check_err_),     \
              hipGetErrorName(check_err_));                                      \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

__device__ int d_counter;
__constant__ float c_scale[4];

template <class T, int N>
__global__ void fill(T *out, T value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) out[i] = value;
}

__global__ void waves(unsigned long long *ballots, int *sums, float *fsum, double *dsum,
                      __half *hv, long *lv) {
  HIP_DYNAMIC_SHARED(int, scratch)
  unsigned int lane = __lane_id();
  int tid = hipThreadIdx_x + hipBlockIdx_x * hipBlockDim_x;
  scratch[threadIdx.x] = tid;
  __syncthreads();

  unsigned long long b = __ballot(lane & 1);
  unsigned long long active = __ballot(1);
  int v = scratch[threadIdx.x];
  for (int off = warpSize / 2; off > 0; off /= 2) v += __shfl_down(v, off);
  int first = __shfl(v, 0);
  int up = __shfl_up(static_cast<int>(lane), 1u);
  int x = __shfl_xor(static_cast<int>(lane), 1);
  float f = __shfl_xor(1.0f, 1, 16);
  double d = __shfl(2.0, 3);
  long l = __shfl(static_cast<long>(lane), 2);
  unsigned long long u64 = __shfl_down(0x100000000ull, 1u);
  __half h = __shfl(hv[0], 0);
  if (__any(lane == 3) && __all(lane < 32u)) atomicAdd(&d_counter, 1);
  int pop = __popcll(b) + __popcll(__lanemask_lt() & active);
  long long t0 = clock64();
  long long t1 = wall_clock64();
  long long t2 = __clock64();
  unsigned int sm = __smid();
  (void)__lanemask_le();
  (void)__lanemask_gt();
  (void)__lanemask_eq();
  __threadfence();
  __threadfence_system();
  if (tid == 0) {
    ballots[0] = b;
    ballots[1] = active;
    sums[0] = v + first + up + x + pop + static_cast<int>(sm);
    fsum[0] = f * c_scale[0];
    dsum[0] = d + static_cast<double>(t1 - t0 + t2);
    lv[0] = l + static_cast<long>(u64);
    hv[1] = h;
  }
  if (tid < 0) abort();
}

__global__ void empty_kernel() {}

static void host_set_flag(void *arg) { *static_cast<int *>(arg) = 1; }

int main() {
  int count = 0, dev = 0;
  CHECK(hipGetDeviceCount(&count));
  CHECK(hipSetDevice(0));
  CHECK(hipGetDevice(&dev));

  hipDeviceProp_t prop;
  CHECK(hipGetDeviceProperties(&prop, dev));
  printf("%s %s %zu %zu %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", prop.name,
         prop.gcnArchName, prop.totalGlobalMem, prop.sharedMemPerBlock, prop.warpSize,
         prop.maxThreadsPerBlock, prop.maxThreadsDim[0], prop.maxGridSize[0], prop.clockRate,
         prop.multiProcessorCount, prop.major, prop.minor, prop.pciBusID, prop.pciDeviceID,
         prop.pciDomainID, prop.l2CacheSize, prop.memoryClockRate, prop.memoryBusWidth,
         prop.concurrentKernels, prop.canMapHostMemory, prop.isMultiGpuBoard, prop.computeMode,
         prop.arch.hasWarpShuffle, prop.isLargeBar);
  int wall_khz = 0, mp = 0, ccmaj = 0;
  CHECK(hipDeviceGetAttribute(&wall_khz, hipDeviceAttributeWallClockRate, dev));
  CHECK(hipDeviceGetAttribute(&mp, hipDeviceAttributeMultiprocessorCount, dev));
  CHECK(hipDeviceGetAttribute(&ccmaj, hipDeviceAttributeComputeCapabilityMajor, dev));
  CHECK(hipDeviceGetAttribute(&mp, hipDeviceAttributePciDomainId, dev));

  /* Memory. */
  int *d = nullptr;
  float *df = nullptr;
  void *raw = nullptr;
  int *host = nullptr;
  int *managed = nullptr;
  CHECK(hipMalloc(&d, 256 * sizeof(int)));
  CHECK(hipMalloc(reinterpret_cast<void **>(&df), 64 * sizeof(float)));
  CHECK(hipExtMallocWithFlags(&raw, 4096, hipDeviceMallocFinegrained));
  CHECK(hipExtMallocWithFlags(reinterpret_cast<void **>(&df), 64, hipDeviceMallocUncached));
  CHECK(hipHostMalloc(&host, 256 * sizeof(int)));
  CHECK(hipHostMalloc(reinterpret_cast<void **>(&host), 256, hipHostMallocMapped | hipHostMallocCoherent));
  CHECK(hipHostMalloc(&host, 256, hipHostMallocPortable | hipHostMallocNonCoherent));
  CHECK(hipMallocManaged(&managed, 64 * sizeof(int)));
  CHECK(hipMallocManaged(reinterpret_cast<void **>(&managed), 64, hipMemAttachGlobal));
  CHECK(hipMemPrefetchAsync(managed, 64, dev, 0));
  CHECK(hipMemAdvise(managed, 64, hipMemAdviseSetReadMostly, hipCpuDeviceId));
  CHECK(hipMemcpy(d, host, 256 * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(host, d, 256 * sizeof(int), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(d, d, 4, hipMemcpyDeviceToDevice));
  CHECK(hipMemcpy(d, d, 4, hipMemcpyDefault));
  CHECK(hipMemcpyHtoD(d, host, 4));
  CHECK(hipMemcpyDtoH(host, d, 4));
  CHECK(hipMemset(d, 0, 256 * sizeof(int)));
  CHECK(hipMemsetD32(d, 7, 256));
  CHECK(hipMemsetD8(d, 1, 16));
  CHECK(hipMemsetD16Async(d, 2, 8, 0));
  size_t free_b = 0, total_b = 0;
  CHECK(hipMemGetInfo(&free_b, &total_b));

  int h_counter = 5;
  const float scale[4] = {1, 2, 3, 4};
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(d_counter), &h_counter, sizeof(int)));
  CHECK(hipMemcpyToSymbol(&d_counter, &h_counter, sizeof(int), 0, hipMemcpyHostToDevice));
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(c_scale), scale, sizeof(scale)));
  CHECK(hipMemcpyFromSymbol(&h_counter, HIP_SYMBOL(d_counter), sizeof(int)));
  CHECK(hipMemcpyFromSymbol(&h_counter, &d_counter, sizeof(int), 0, hipMemcpyDeviceToHost));
  void *sym_addr = nullptr;
  size_t sym_size = 0;
  CHECK(hipGetSymbolAddress(&sym_addr, HIP_SYMBOL(d_counter)));
  CHECK(hipGetSymbolSize(&sym_size, HIP_SYMBOL(c_scale)));

  hipPointerAttribute_t attr;
  CHECK(hipPointerGetAttributes(&attr, d));
  if (attr.type != hipMemoryTypeDevice || attr.memoryType != hipMemoryTypeDevice) return 1;

  /* Streams and events. */
  hipStream_t s1, s2;
  CHECK(hipStreamCreate(&s1));
  CHECK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  hipEvent_t e0, e1, e2;
  CHECK(hipEventCreate(&e0));
  CHECK(hipEventCreate(&e1));
  CHECK(hipEventCreateWithFlags(&e2, hipEventDisableTiming | hipEventInterprocess));
  CHECK(hipEventRecord(e0, s1));
  CHECK(hipMemcpyAsync(host, d, 64, hipMemcpyDeviceToHost, s1));
  CHECK(hipMemsetAsync(d, 0, 64, s1));
  CHECK(hipMemcpyToSymbolAsync(HIP_SYMBOL(d_counter), &h_counter, sizeof(int), 0,
                               hipMemcpyHostToDevice, s2));
  CHECK(hipMemcpyFromSymbolAsync(&h_counter, HIP_SYMBOL(d_counter), sizeof(int), 0,
                                 hipMemcpyDeviceToHost, s2));

  /* Launches. */
  hipLaunchKernelGGL(HIP_KERNEL_NAME(fill<int, 256>), dim3(1), dim3(256), 0, s1, d, 3);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(fill<float, 64>), 1, 64, 0, hipStreamPerThread, df, 1.5f);
  hipLaunchKernelGGL(empty_kernel, dim3(1, 1, 1), dim3(32, 1, 1), 0, 0);
  unsigned long long *ballots = nullptr;
  int *sums = nullptr;
  double *dsum = nullptr;
  __half *hv = nullptr;
  long *lv = nullptr;
  hipLaunchKernelGGL(waves, dim3(2), dim3(64), 64 * sizeof(int), s1, ballots, sums, df, dsum,
                     hv, lv);
  void *args[] = {&d};
  CHECK(hipLaunchKernel(reinterpret_cast<const void *>(&empty_kernel), dim3(1), dim3(1), args, 0,
                        s1));
  CHECK(hipLaunchKernel(empty_kernel, dim3(1), dim3(1), nullptr));
  CHECK(hipGetLastError());
  CHECK(hipPeekAtLastError());

  int nblocks = 0, grid = 0, block = 0;
  CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&nblocks, waves, 64, 64 * sizeof(int)));
  CHECK(hipOccupancyMaxPotentialBlockSize(&grid, &block, waves));
  hipFuncAttributes fattr;
  CHECK(hipFuncGetAttributes(&fattr, reinterpret_cast<const void *>(waves)));
  CHECK(hipFuncSetAttribute(waves, hipFuncAttributeMaxDynamicSharedMemorySize, 1024));

  CHECK(hipStreamWaitEvent(s2, e0, 0));
  CHECK(hipStreamWaitEvent(s2, e0));
  CHECK(hipEventRecord(e1, s1));
  CHECK(hipEventRecord(e2));
  CHECK(hipEventSynchronize(e1));
  float ms = 0;
  CHECK(hipEventElapsedTime(&ms, e0, e1));
  if (hipEventQuery(e1) == hipErrorNotReady) return 1;
  int flag = 0;
  CHECK(hipLaunchHostFunc(s1, host_set_flag, &flag));
  CHECK(hipStreamWriteValue32(s1, d, 1u, 0));
  CHECK(hipStreamWaitValue32(s1, d, 1u, hipStreamWaitValueGte));
  CHECK(hipStreamWaitValue64(s1, d, 1ull, hipStreamWaitValueEq, ~0ull));
  CHECK(hipStreamSynchronize(s1));

  /* Graph capture. */
  hipGraph_t graph;
  hipGraphExec_t exec;
  hipStreamCaptureStatus cap;
  CHECK(hipStreamBeginCapture(s2, hipStreamCaptureModeGlobal));
  CHECK(hipStreamIsCapturing(s2, &cap));
  hipLaunchKernelGGL(HIP_KERNEL_NAME(fill<int, 256>), dim3(1), dim3(256), 0, s2, d, 9);
  CHECK(hipStreamEndCapture(s2, &graph));
  CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  CHECK(hipGraphInstantiateWithFlags(&exec, graph, 0));
  CHECK(hipGraphLaunch(exec, s2));
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));
  hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
  CHECK(hipThreadExchangeStreamCaptureMode(&mode));
  (void)hipStreamCaptureModeThreadLocal;

  /* IPC and peers. */
  hipIpcMemHandle_t mh;
  hipIpcEventHandle_t eh;
  void *mapped = nullptr;
  CHECK(hipIpcGetMemHandle(&mh, d));
  CHECK(hipIpcGetEventHandle(&eh, e2));
  CHECK(hipIpcOpenMemHandle(&mapped, mh, hipIpcMemLazyEnablePeerAccess));
  CHECK(hipIpcCloseMemHandle(mapped));
  hipEvent_t remote;
  CHECK(hipIpcOpenEventHandle(&remote, eh));
  static_assert(sizeof(hipIpcMemHandle_t) == HIP_IPC_HANDLE_SIZE, "IPC handle size");
  int can = 0;
  CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
  hipError_t perr = hipDeviceEnablePeerAccess(1, 0);
  if (perr != hipSuccess && perr != hipErrorPeerAccessAlreadyEnabled) return 1;

  /* Modules (driver API). */
  hipModule_t module;
  hipFunction_t function;
  hipDeviceptr_t global = nullptr;
  size_t global_bytes = 0;
  CHECK(hipModuleLoad(&module, "kernels.cubin"));
  CHECK(hipModuleLoadData(&module, static_cast<const void *>("image")));
  CHECK(hipModuleGetFunction(&function, module, "kernel"));
  CHECK(hipModuleGetGlobal(&global, &global_bytes, module, "global"));
  void *params[] = {&global};
  CHECK(hipModuleLaunchKernel(function, 1, 1, 1, 64, 1, 1, 0, s1, params, nullptr));
  size_t argbuf_size = sizeof(void *);
  void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &global, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                   &argbuf_size, HIP_LAUNCH_PARAM_END};
  CHECK(hipModuleLaunchKernel(function, 1, 1, 1, 64, 1, 1, 0, s1, nullptr, extra));
  CHECK(hipModuleUnload(module));

  /* Half types. */
  __half hh = __float2half(1.0f);
  __hip_bfloat16 bb = __float2bfloat16(2.0f);
  float back = __half2float(hh) + __bfloat162float(bb);
  static_assert(sizeof(__hip_bfloat16) == 2 && sizeof(__half) == 2, "16-bit types");
  (void)back;

  /* Errors by name. */
  const char *n = hipGetErrorName(hipErrorInvalidValue);
  const char *m = hipGetErrorString(hipErrorOutOfMemory);
  (void)n;
  (void)m;
  static_assert(hipErrorMemoryAllocation == hipErrorOutOfMemory, "aliases");

  CHECK(hipEventDestroy(e0));
  CHECK(hipEventDestroy(e1));
  CHECK(hipEventDestroy(e2));
  CHECK(hipStreamDestroy(s1));
  CHECK(hipStreamDestroy(s2));
  CHECK(hipFree(d));
  CHECK(hipFree(raw));
  CHECK(hipHostFree(host));
  CHECK(hipFree(managed));
  CHECK(hipDeviceSynchronize());
  CHECK(hipDeviceReset());
  int rv = 0, dv = 0;
  CHECK(hipRuntimeGetVersion(&rv));
  CHECK(hipDriverGetVersion(&dv));
  return 0;
}
