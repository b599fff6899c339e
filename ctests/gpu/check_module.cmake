# Checks the PTX (and, when given, the cubin) of the module test's JIT module
# (module_kernel.cu linked with librocshmem_device_sm_XX.bc): the two kernels are entries, the
# three device globals rocshmem_hipmodule_init fills are visible module-scope variables of
# upstream's sizes (16, 8, 8 bytes), and so is the library's address table (constant memory),
# and every library function the kernels call was linked in: nothing is left `.extern .func`.
# (The entry points are not `used`, so opt inlines them into the kernels and drops them.)
#
#   cmake -DPTX=<module.ptx> [-DCUBIN=<module.cubin>] -P check_module.cmake
cmake_minimum_required(VERSION 3.21)
if(NOT EXISTS "${PTX}")
  message(FATAL_ERROR "check_module: ${PTX} does not exist (build the target rocshmem_gpu_module_artifacts)")
endif()
file(READ ${PTX} ptx)
set(missing "")
foreach(pattern
    "\\.visible \\.entry module_exchange\\("
    "\\.visible \\.entry module_exchange_wg\\("
    "\\.visible \\.global \\.align 8 \\.b8 ROCSHMEM_CTX_DEFAULT\\[16\\];"
    "\\.visible \\.global \\.align 8 \\.(u64|b64|b8) ROCSHMEM_TEAM_WORLD(\\[8\\])?;"
    "\\.visible \\.global \\.align 8 \\.(u64|b64|b8) ROCSHMEM_TEAM_SHARED(\\[8\\])?;"
    "\\.visible \\.const \\.align 8 \\.b8 rocshmemi_device_fast\\[[0-9]+\\];")
  if(NOT ptx MATCHES "${pattern}")
    list(APPEND missing "${pattern}")
  endif()
endforeach()
string(REGEX MATCHALL "\\.extern \\.func[^\n]*" unresolved "${ptx}")
if(unresolved)
  list(APPEND missing "no unresolved function (left .extern: ${unresolved})")
endif()
string(REGEX MATCH "\\.version [0-9.]+" version "${ptx}")
string(REGEX MATCH "\\.target [a-z0-9_]+" target "${ptx}")
string(LENGTH "${ptx}" bytes)
message("module PTX: ${version}, ${target}, ${bytes} bytes (${PTX})")
if(CUBIN)
  if(NOT EXISTS "${CUBIN}")
    list(APPEND missing "the cubin ${CUBIN}")
  else()
    file(READ ${CUBIN} head LIMIT 4 HEX)
    if(NOT head STREQUAL "7f454c46")
      list(APPEND missing "an ELF cubin (${CUBIN} starts with ${head})")
    endif()
    file(STRINGS ${CUBIN} syms REGEX "ROCSHMEM_CTX_DEFAULT|module_exchange")
    if(NOT syms)
      list(APPEND missing "the names ROCSHMEM_CTX_DEFAULT and module_exchange in the cubin")
    endif()
    file(SIZE ${CUBIN} cbytes)
    message("module cubin: ${cbytes} bytes (${CUBIN})")
  endif()
endif()
if(missing)
  string(REPLACE ";" "\n  " missing "${missing}")
  message(FATAL_ERROR "check_module: not found:\n  ${missing}")
endif()
