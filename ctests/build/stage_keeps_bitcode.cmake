# ctest stage_keeps_nvidia_bitcode: cmake/stage_amd.cmake (run after every cargo build) removes
# stale AMD products from the staging folder but keeps the NVIDIA bitcode that another target
# (device/bitcode.cmake) staged there. It once removed every librocshmem_device*, and
# `pip install` then shipped no sm_90 bitcode whenever cargo's target ran after the bitcode's.
#   cmake -DSOURCE_DIR=... -DCARGO_OUT=... -DOBJCOPY=... -DWORK=... -P stage_keeps_bitcode.cmake
cmake_minimum_required(VERSION 3.21)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/lib")
string(RANDOM LENGTH 32 payload)
foreach(f librocshmem_device_sm_90.bc librocshmem_device_gfx942.bc librocshmem_device.a)
  file(WRITE "${WORK}/lib/${f}" "${payload}")
endforeach()
# MODE=OFF (no AMD products of cargo's are read: the pip build's case), with and without NVIDIA.
set(mode OFF)
foreach(nvidia OFF ON)
  execute_process(COMMAND ${CMAKE_COMMAND} -DCARGO_OUT=${CARGO_OUT} -DSTAGE_LIB=${WORK}/lib -DMODE=${mode}
                          -DNVIDIA=${nvidia} -DOBJCOPY=${OBJCOPY} -DOUT_CMAKE=${WORK}/amd.cmake
                          -P ${SOURCE_DIR}/cmake/stage_amd.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAIL: stage_amd.cmake MODE=${mode} NVIDIA=${nvidia}: ${out}")
  endif()
  set(got "")
  if(EXISTS "${WORK}/lib/librocshmem_device_sm_90.bc")
    file(READ "${WORK}/lib/librocshmem_device_sm_90.bc" got)
  endif()
  if(NOT got STREQUAL payload)
    message(FATAL_ERROR "FAIL: MODE=${mode} NVIDIA=${nvidia}: the staged NVIDIA bitcode was removed or changed")
  endif()
  if(EXISTS "${WORK}/lib/librocshmem_device_gfx942.bc")
    message(FATAL_ERROR "FAIL: MODE=${mode} NVIDIA=${nvidia}: a stale AMD bitcode (gfx942) stayed staged")
  endif()
  if(nvidia AND NOT EXISTS "${WORK}/lib/librocshmem_device.a")
    message(FATAL_ERROR "FAIL: NVIDIA=ON: the NVIDIA device library was removed")
  endif()
  if(NOT nvidia AND EXISTS "${WORK}/lib/librocshmem_device.a")
    message(FATAL_ERROR "FAIL: NVIDIA=OFF: a stale AMD device library stayed staged")
  endif()
  file(WRITE "${WORK}/lib/librocshmem_device_gfx942.bc" "${payload}")
  if(NOT EXISTS "${WORK}/lib/librocshmem_device.a")
    file(WRITE "${WORK}/lib/librocshmem_device.a" "${payload}")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
message(STATUS "PASS: stage_amd.cmake keeps the NVIDIA bitcode and removes stale AMD products (with and without NVIDIA)")
