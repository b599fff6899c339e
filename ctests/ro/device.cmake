# The device functional suite (ctests/device, rocshmem_device_tests) under the RO backend, in
# the three configurations at 2, 3 and 4 PEs: ro_<config>_device_<family>_np<n>. One run per
# family runs every test of the family (-t a,b,c) with the light type list (-L): 2 work-groups
# (2 queues) of 32 threads at 2 and 4 PEs, of 8 threads (a partial wave) at 3 PEs. Every
# atomic goes through the proxies, and amo-standard's compare-and-swap loops make every thread
# of every PE contend for one word: 4 PEs x 64 threads take about 10 s on 2 cores (with
# waiters parked on a futex; before, when they slept and polled, 250 s, and two such jobs side
# by side ran past 300 s).
# Included from ctests/ro/CMakeLists.txt (needs rocshmem_ro_test).
if(NOT TARGET rocshmem_device_tests)
  return()
endif()
# The families, one source with scripts/gpu-nvidia-ro.sh.
file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/device_families.txt ro_device_families REGEX "^[a-z]+=")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/device_families.txt)
foreach(f IN LISTS ro_device_families)
  string(REPLACE "=" ";" f ${f})
  list(GET f 0 family)
  list(GET f 1 tests)
  rocshmem_ro_test(device_${family} NP 2 4 TIMEOUT 300 LABELS device ENV ROCSHMEM_HOST_WAVE_SIZE=32
    COMMAND $<TARGET_FILE:rocshmem_device_tests> -t ${tests} -w 2 -z 32 -L)
  rocshmem_ro_test(device_${family} NP 3 TIMEOUT 300 LABELS device ENV ROCSHMEM_HOST_WAVE_SIZE=32
    COMMAND $<TARGET_FILE:rocshmem_device_tests> -t ${tests} -w 2 -z 8 -L)
endforeach()
# Two waves per work-group share one queue: waves on different teams queue their collectives
# in different orders on different PEs, and the proxy must not serve a queue's collectives one
# at a time (that deadlocked coll-multi-team; found on an H200 with the GPU shape -w 2 -z 64).
rocshmem_ro_test(device_two_waves NP 4 TIMEOUT 300 LABELS device ENV ROCSHMEM_HOST_WAVE_SIZE=32
  COMMAND $<TARGET_FILE:rocshmem_device_tests> -t coll-multi-team,coll-move-wave,coll-reduce-wave -w 2 -z 64 -L)
