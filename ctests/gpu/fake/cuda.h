/*
 * Test stub, NOT NVIDIA's header: device/cuda_decls/cuda.h plus the driver API calls
 * module_test.cu makes, so that clang can parse the test on a machine without CUDA:
 *   clang++ -x cuda -fsyntax-only -nocudainc -nocudalib --cuda-gpu-arch=sm_90
 *           -I ctests/gpu/fake -I device/cuda_decls -I include/rocshmem/compat -I include
 * (this folder first). Names and signatures follow CUDA 13's cuda.h; only declarations.
 */
#ifndef FAKE_GPU_CUDA_H
#define FAKE_GPU_CUDA_H

#include_next <cuda.h>

typedef int CUdevice;

typedef enum CUjit_option_enum {
  CU_JIT_MAX_REGISTERS = 0,
  CU_JIT_THREADS_PER_BLOCK = 1,
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
} CUjit_option;

extern "C" {
CUresult cuInit(unsigned int Flags);
CUresult cuCtxGetDevice(CUdevice *device);
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                            CUjit_option *options, void **optionValues);
CUresult cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult cuGetErrorName(CUresult error, const char **pStr);
CUresult cuGetErrorString(CUresult error, const char **pStr);
}

#endif  // FAKE_GPU_CUDA_H
