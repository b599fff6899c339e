# The device library as LLVM bitcode for NVIDIA GPUs: librocshmem_device_sm_<arch>.bc, one
# file per architecture in ROCSHMEM_CUDA_ARCHS ("90" -> sm_90), for JIT users (Triton and the
# like) that link it into their own module with llvm-link and then call
# rocshmem_hipmodule_init on the loaded module (rocshmem-api.md sections 5.2, 5.3 and 7).
#
#   include(${CMAKE_CURRENT_SOURCE_DIR}/bitcode.cmake)     # from device/CMakeLists.txt
#
# Pipeline, per architecture (upstream's cmake/DeviceBitcode.cmake, for CUDA):
#   clang++ -x cuda --cuda-device-only --cuda-gpu-arch=sm_XX -fgpu-rdc -emit-llvm
#           -O3 -Xclang -disable-llvm-passes        every device/gen/*.cpp (bitcode_api.cpp
#           -DROCSHMEM_DEVICE_BITCODE               holds the 605 extern "C" entry points) and
#                                                   device/src/gpu_globals.cpp (the 3 globals);
#                                                   the define inlines route.hpp's routed paths
#   llvm-link                                       one module
#   opt -O3                                         optimised once, as a whole
# (each front end and the opt step through device/keep_step.sh: with $ROCSHMEM_DEVICE_CACHE set
# at build time, kept there by the preprocessed source and by the linked module)
# -> ${STAGE_LIB}/librocshmem_device_sm_XX.bc, installed to lib/.
#
# CUDA headers: the device library needs none of CUDA's code (the platform layer is inline
# PTX; the bitcode has no undefined symbol), only the declarations that the HIP-on-CUDA
# headers (include/rocshmem/compat) name. So by default it is compiled with -nocudainc against
# the declaration stubs in device/cuda_decls: the same result with or without a CUDA
# installation, and no dependence on which CUDA versions this clang knows.
# -DROCSHMEM_BITCODE_CUDA_PATH=/usr/local/cuda uses a real CUDA's headers (clang's CUDA
# wrapper headers) instead.
#
# Tools: clang++, llvm-link, opt, llvm-nm and llc from ONE LLVM (bitcode is only readable by
# the same or a newer LLVM): ROCSHMEM_LLVM_BIN, by default the first of
# /usr/lib/llvm-{16..21}/bin that has them all. 16 is preferred: the oldest LLVM that knows
# sm_90, so every newer LLVM (Triton's) can read the result.
#
# Defines:
#   target rocshmem_device_bitcode          (ALL) every architecture's .bc
#   target rocshmem_device_bitcode_check    runs the name check below on every .bc
#   global property ROCSHMEM_DEVICE_BITCODE_ARCHS   e.g. "sm_90"
#   global property ROCSHMEM_DEVICE_BITCODE_<sm_XX> the .bc's path
#   ROCSHMEM_LLVM_BIN, ROCSHMEM_BC_CLANG, ROCSHMEM_BC_LLVM_LINK, ROCSHMEM_BC_OPT,
#   ROCSHMEM_BC_LLVM_NM, ROCSHMEM_BC_LLC (cache)
#   ROCSHMEM_BITCODE_COMPILE_FLAGS (cache, internal): the clang flags above without the arch,
#   for programs that compile their own kernels the same way (ctests/gpu).
# Bitcode built elsewhere (another machine without these LLVM tools, or an earlier build of the
# same sources: it is the same file, nothing of CUDA is in it) is copied instead of built:
# -DROCSHMEM_DEVICE_BITCODE_PREBUILT=<folder holding librocshmem_device_sm_XX.bc>.
# Works in this repository's build (device/CMakeLists.txt) and standalone (ctests/gpu, as a
# top-level project, on a machine without CUDA).
include_guard(GLOBAL)

set(_rbc_device_dir ${CMAKE_CURRENT_LIST_DIR})
get_filename_component(_rbc_root ${_rbc_device_dir} DIRECTORY)

if(NOT DEFINED ROCSHMEM_CUDA_ARCHS)
  set(ROCSHMEM_CUDA_ARCHS "90")
endif()
set(ROCSHMEM_BITCODE_CUDA_PATH "" CACHE PATH
    "CUDA installation whose headers compile the device bitcode (empty: the declaration stubs in device/cuda_decls)")

# ---- tools: one LLVM ----
set(_rbc_tools clang++ llvm-link opt llvm-nm llc)
if(NOT ROCSHMEM_LLVM_BIN)
  foreach(v 16 17 18 19 20 21)
    set(_rbc_ok TRUE)
    foreach(t IN LISTS _rbc_tools)
      if(NOT EXISTS /usr/lib/llvm-${v}/bin/${t})
        set(_rbc_ok FALSE)
      endif()
    endforeach()
    if(_rbc_ok)
      set(_rbc_found /usr/lib/llvm-${v}/bin)
      break()
    endif()
  endforeach()
  if(NOT _rbc_found)
    # Versioned names on the PATH (clang++-16, ...), else plain ones.
    find_program(_rbc_clang_any NAMES clang++-16 clang++-17 clang++-18 clang++-19 clang++-20 clang++-21 clang++)
    if(_rbc_clang_any)
      get_filename_component(_rbc_real ${_rbc_clang_any} REALPATH)
      get_filename_component(_rbc_found ${_rbc_real} DIRECTORY)
    endif()
  endif()
  set(ROCSHMEM_LLVM_BIN "${_rbc_found}" CACHE PATH "LLVM bin folder (clang++, llvm-link, opt, llvm-nm, llc) for the device bitcode")
endif()
find_program(ROCSHMEM_BC_CLANG NAMES clang++ HINTS ${ROCSHMEM_LLVM_BIN} NO_DEFAULT_PATH)
find_program(ROCSHMEM_BC_LLVM_LINK NAMES llvm-link HINTS ${ROCSHMEM_LLVM_BIN} NO_DEFAULT_PATH)
find_program(ROCSHMEM_BC_OPT NAMES opt HINTS ${ROCSHMEM_LLVM_BIN} NO_DEFAULT_PATH)
find_program(ROCSHMEM_BC_LLVM_NM NAMES llvm-nm HINTS ${ROCSHMEM_LLVM_BIN} NO_DEFAULT_PATH)
find_program(ROCSHMEM_BC_LLC NAMES llc HINTS ${ROCSHMEM_LLVM_BIN} NO_DEFAULT_PATH)
set(ROCSHMEM_DEVICE_BITCODE_PREBUILT "" CACHE PATH
    "Folder holding librocshmem_device_sm_XX.bc built elsewhere, copied instead of built")
set(_rbc_prebuilt FALSE)
if(ROCSHMEM_DEVICE_BITCODE_PREBUILT)
  # The bitcode needs nothing of CUDA (see above): one built elsewhere is the same file.
  set(_rbc_prebuilt TRUE)
  message(STATUS "rocSHMEM device bitcode: copied from ${ROCSHMEM_DEVICE_BITCODE_PREBUILT}")
elseif(NOT (ROCSHMEM_BC_CLANG AND ROCSHMEM_BC_LLVM_LINK AND ROCSHMEM_BC_OPT))
  message(WARNING "rocSHMEM device bitcode: not built (no LLVM with clang++, llvm-link and opt found; "
                  "install clang-16 and llvm-16, set ROCSHMEM_LLVM_BIN, or give a folder of prebuilt "
                  "bitcode in ROCSHMEM_DEVICE_BITCODE_PREBUILT)")
  return()
else()
  message(STATUS "rocSHMEM device bitcode: LLVM tools in ${ROCSHMEM_LLVM_BIN}")
endif()

# ---- flags ----
if(ROCSHMEM_BITCODE_CUDA_PATH)
  set(_rbc_cuda_flags --cuda-path=${ROCSHMEM_BITCODE_CUDA_PATH} -Wno-unknown-cuda-version)
else()
  set(_rbc_cuda_flags -nocudainc -I${_rbc_root}/device/cuda_decls)
endif()
set(ROCSHMEM_BITCODE_COMPILE_FLAGS
    -x cuda --cuda-device-only -nocudalib ${_rbc_cuda_flags} -fgpu-rdc -std=c++17
    -O3 -Xclang -disable-llvm-passes -emit-llvm -DROCSHMEM_DEVICE_BITCODE
    CACHE INTERNAL "clang flags of the device bitcode (without --cuda-gpu-arch)")
set(_rbc_includes -I${_rbc_root}/include/rocshmem/compat -I${_rbc_root}/include -I${_rbc_device_dir}/include)

file(GLOB _rbc_sources CONFIGURE_DEPENDS ${_rbc_device_dir}/gen/*.cpp)
list(APPEND _rbc_sources ${_rbc_device_dir}/src/gpu_globals.cpp)

if(DEFINED STAGE_LIB)
  set(_rbc_out_dir ${STAGE_LIB})
else()
  set(_rbc_out_dir ${CMAKE_BINARY_DIR}/lib)
endif()
set(_rbc_check_script ${_rbc_root}/ctests/gpu/check_bitcode_names.cmake)
# Each front end and the optimiser, kept by what they read under $ROCSHMEM_DEVICE_CACHE when
# that is set (CI), else run as they are.
set(_rbc_keep ${_rbc_device_dir}/keep_step.sh)
set(_rbc_names_tsv ${_rbc_root}/ctests/data/rocshmem-api-names.tsv)

set(_rbc_all_outputs "")
set(_rbc_archs "")
set(_rbc_check_commands "")
foreach(arch IN LISTS ROCSHMEM_CUDA_ARCHS)
  # CMake's CUDA_ARCHITECTURES spelling: 90, 90a, 90-real, 90a-virtual -> sm_90 / sm_90a
  string(REGEX REPLACE "-(real|virtual)$" "" arch "${arch}")
  if(arch STREQUAL "" OR arch MATCHES "^(all|all-major|native)$")
    message(WARNING "rocSHMEM device bitcode: architecture '${arch}' skipped (name one, e.g. 90)")
    continue()
  endif()
  set(sm sm_${arch})
  list(APPEND _rbc_archs ${sm})
  set(objdir ${CMAKE_BINARY_DIR}/device_bitcode/${sm})
  set(objs "")
  if(_rbc_prebuilt)
    set(_rbc_sources_here "")
  else()
    set(_rbc_sources_here ${_rbc_sources})
  endif()
  foreach(src IN LISTS _rbc_sources_here)
    get_filename_component(stem ${src} NAME_WE)
    set(obj ${objdir}/${stem}.bc)
    # A fixed -cuid (clang's default hashes the path): the same bitcode from every checkout
    # folder, so that keep_step.sh can reuse it.
    add_custom_command(OUTPUT ${obj}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${objdir}
      COMMAND sh ${_rbc_keep} front ${_rbc_root} ${obj}
              ${ROCSHMEM_BC_CLANG} ${ROCSHMEM_BITCODE_COMPILE_FLAGS} --cuda-gpu-arch=${sm} ${_rbc_includes}
              -cuid=rocshmem_${stem} -MD -MF ${obj}.d -MT ${obj} -c ${src} -o ${obj}
      DEPENDS ${src} ${_rbc_keep}
      DEPFILE ${obj}.d
      COMMENT "device bitcode ${sm}: ${stem}"
      VERBATIM)
    list(APPEND objs ${obj})
  endforeach()
  set(out ${_rbc_out_dir}/librocshmem_device_${sm}.bc)
  if(_rbc_prebuilt)
    set(pre ${ROCSHMEM_DEVICE_BITCODE_PREBUILT}/librocshmem_device_${sm}.bc)
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_rbc_out_dir}
      COMMAND ${CMAKE_COMMAND} -E copy ${pre} ${out}
      DEPENDS ${pre}
      COMMENT "device bitcode ${sm}: prebuilt ${pre}"
      VERBATIM)
  else()
    add_custom_command(OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_rbc_out_dir}
      COMMAND ${ROCSHMEM_BC_LLVM_LINK} ${objs} -o ${objdir}/linked.bc
      COMMAND sh ${_rbc_keep} input ${_rbc_root} ${out} ${objdir}/linked.bc
              ${ROCSHMEM_BC_OPT} -O3 ${objdir}/linked.bc -o ${out}
      DEPENDS ${objs} ${_rbc_keep}
      COMMENT "device bitcode ${sm}: llvm-link + opt -O3 -> librocshmem_device_${sm}.bc"
      VERBATIM)
  endif()
  list(APPEND _rbc_all_outputs ${out})
  set_property(GLOBAL PROPERTY ROCSHMEM_DEVICE_BITCODE_${sm} ${out})
  if(ROCSHMEM_BC_LLVM_NM)
    list(APPEND _rbc_check_commands
      COMMAND ${CMAKE_COMMAND} -DNM=${ROCSHMEM_BC_LLVM_NM} -DBC=${out} -DTSV=${_rbc_names_tsv}
              -P ${_rbc_check_script})
  endif()
endforeach()
set_property(GLOBAL PROPERTY ROCSHMEM_DEVICE_BITCODE_ARCHS "${_rbc_archs}")

add_custom_target(rocshmem_device_bitcode ALL DEPENDS ${_rbc_all_outputs})
if(NOT _rbc_check_commands)
  set(_rbc_check_commands COMMAND ${CMAKE_COMMAND} -E echo "no llvm-nm: bitcode names not checked")
endif()
add_custom_target(rocshmem_device_bitcode_check ${_rbc_check_commands} VERBATIM)
add_dependencies(rocshmem_device_bitcode_check rocshmem_device_bitcode)
install(FILES ${_rbc_all_outputs} DESTINATION ${CMAKE_INSTALL_LIBDIR} OPTIONAL)
