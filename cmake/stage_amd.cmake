# Stages what cargo built into the build's lib/ folder (run after every cargo build, cmake -P):
#  - librocshmem.a: cargo's static library without the LLVM bitcode that Rust's precompiled
#    standard library objects embed (sections .llvmbc and .llvmcmd; see below), plus, when the
#    AMD device library was built, its
#    relocatable device object (device code for every arch of librocshmem_device.a and the host
#    glue rocshmemi_device_globals_set), so that `hipcc -fgpu-rdc --hip-link app.o librocshmem.a`
#    links host and device code from one archive, as upstream's does. Programs that do not ask
#    for the glue (plain C/C++) never pull that object in.
#  - librocshmem_device.a and librocshmem_device_<arch>.bc (device/amd_build/, products.txt);
#  - OUT_CMAKE: the arches, for the installed CMake package (rocshmem-config.cmake).
cmake_minimum_required(VERSION 3.21)
# Inputs: CARGO_OUT (cargo's profile folder), STAGE_LIB, MODE (OFF|AUTO|REQUIRE), NVIDIA, AMD_DIR
# (optional: the AMD products' folder, instead of the newest of cargo's), AR (an llvm-ar, to add
# the AMD device objects), OBJCOPY (objcopy of the host toolchain), OUT_CMAKE.

# The newest products of this profile's build script (one per feature set; the newest is the
# one cargo just ran or kept).
set(manifest "")
if(AMD_DIR)
  # Products built apart from cargo (device/amd_main.rs, scripts/check-amd.sh): another HIP
  # toolchain's device library over the same host library.
  set(manifest "${AMD_DIR}/products.txt")
  if(NOT EXISTS "${manifest}")
    message(FATAL_ERROR "rocSHMEM: AMD_DIR=${AMD_DIR} has no products.txt")
  endif()
elseif(NOT MODE STREQUAL "OFF")
  file(GLOB manifests "${CARGO_OUT}/build/rocshmem-*/out/amd/products.txt")
  set(newest 0)
  foreach(m IN LISTS manifests)
    file(TIMESTAMP "${m}" t "%s")
    if(t GREATER newest)
      set(newest ${t})
      set(manifest ${m})
    endif()
  endforeach()
endif()

set(archive_arches "")
set(bitcode_arches "")
set(files "")
if(manifest)
  get_filename_component(amd_dir "${manifest}" DIRECTORY)
  file(STRINGS "${manifest}" lines)
  foreach(l IN LISTS lines)
    if(l MATCHES "^archive_arches=(.*)$")
      set(archive_arches "${CMAKE_MATCH_1}")
    elseif(l MATCHES "^bitcode_arches=(.*)$")
      set(bitcode_arches "${CMAKE_MATCH_1}")
    elseif(l MATCHES "^files=(.*)$")
      set(files "${CMAKE_MATCH_1}")
    endif()
  endforeach()
elseif(MODE STREQUAL "REQUIRE")
  message(FATAL_ERROR "rocSHMEM: ROCSHMEM_AMD=REQUIRE but cargo's build script left no AMD products "
                      "(no ${CARGO_OUT}/build/rocshmem-*/out/amd/products.txt): see its warning lines")
endif()

# AMD products of an earlier build that this one did not make must not be installed. Only AMD
# names are touched: the NVIDIA bitcode (librocshmem_device_sm_XX.bc, device/bitcode.cmake) is
# staged in the same folder by another target, in any order relative to this one, and with
# NVIDIA=ON librocshmem_device.a is NVIDIA's. (Removing every librocshmem_device* here once left
# `pip install` without its sm_90 bitcode, depending on which target ran last.)
file(GLOB old "${STAGE_LIB}/librocshmem_device_gfx*")
if(NOT NVIDIA AND EXISTS "${STAGE_LIB}/librocshmem_device.a")
  list(APPEND old "${STAGE_LIB}/librocshmem_device.a")
endif()
foreach(f IN LISTS old)
  get_filename_component(n "${f}" NAME)
  if(NOT n IN_LIST files)
    file(REMOVE "${f}")
  endif()
endforeach()
foreach(n IN LISTS files)
  file(COPY_FILE "${amd_dir}/${n}" "${STAGE_LIB}/${n}" ONLY_IF_DIFFERENT)
endforeach()

# librocshmem.a. Rust's standard library comes precompiled with its LLVM bitcode embedded in
# every object (.llvmbc, .llvmcmd: 283 of the archive's 358 members). Tools that look at
# archives through an LLVM LTO plugin try to read that bitcode, which is newer than their LLVM:
# GNU ar, which HIP 5.2's hipcc runs on an archive given by path (it unpacks it and packs the
# host objects again), says "LLVM gold plugin has failed to create LTO module: Opaque pointers
# are only supported in -opaque-pointers mode (Producer: 'LLVM22...' Reader: 'LLVM 14.0.6')"
# for each, leaves their symbols out of the new index, and the link ends with 6,674 undefined
# references. Nothing here uses that bitcode (the library is never link-time optimised with the
# program), so the sections are removed; the code is unchanged.
set(core "${STAGE_LIB}/.librocshmem-core.a")
if(NOT OBJCOPY)
  message(FATAL_ERROR "rocSHMEM: no objcopy (binutils) to stage librocshmem.a")
endif()
if(NOT EXISTS "${core}" OR "${CARGO_OUT}/librocshmem.a" IS_NEWER_THAN "${core}")
  execute_process(COMMAND "${OBJCOPY}" --remove-section=.llvmbc --remove-section=.llvmcmd
                          "${CARGO_OUT}/librocshmem.a" "${core}.tmp"
                  RESULT_VARIABLE rc0 ERROR_VARIABLE log0)
  if(NOT rc0 EQUAL 0)
    file(REMOVE "${core}.tmp")
    message(FATAL_ERROR "rocSHMEM: ${OBJCOPY} could not remove the embedded bitcode from ${CARGO_OUT}/librocshmem.a: ${log0}")
  endif()
  file(RENAME "${core}.tmp" "${core}")
endif()
set(combine FALSE)
if("librocshmem_device.a" IN_LIST files)
  if(AR)
    set(combine TRUE)
  elseif(MODE STREQUAL "REQUIRE")
    message(FATAL_ERROR "rocSHMEM: no llvm-ar found to add the AMD device objects to librocshmem.a (install llvm)")
  else()
    message(WARNING "rocSHMEM: no llvm-ar found: librocshmem.a is the host library only "
                    "(link librocshmem_device.a for device code)")
  endif()
endif()
if(combine)
  set(tmp "${STAGE_LIB}/.stage-static")
  file(REMOVE_RECURSE "${tmp}")
  file(MAKE_DIRECTORY "${tmp}/x")
  execute_process(COMMAND "${AR}" x "${STAGE_LIB}/librocshmem_device.a" WORKING_DIRECTORY "${tmp}/x"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  file(GLOB members "${tmp}/x/*.o")
  if(NOT rc EQUAL 0 OR NOT members)
    message(FATAL_ERROR "rocSHMEM: cannot extract the device objects of ${STAGE_LIB}/librocshmem_device.a")
  endif()
  # The device object's host part also defines host shadows of device globals that the core
  # defines weakly and references (ROCSHMEM_CTX_DEFAULT, ...). In one archive, GNU ld could then
  # pull the device object into a plain host link (and need HIP) just to resolve one of those,
  # depending on member order. So its copies are renamed rocshmemi_hipshadow_<name>: device
  # code and HIP's registration name the device variables by string, the glue still writes
  # them, and host code reads the core's variables, which the core sets at init.
  string(REPLACE "llvm-ar" "llvm-nm" nm "${AR}")
  string(REPLACE "llvm-ar" "llvm-objcopy" objcopy "${AR}")
  execute_process(COMMAND "${nm}" --defined-only -j "${core}" OUTPUT_VARIABLE core_syms ERROR_QUIET)
  set(core_syms "\n${core_syms}")
  string(FIND "${core_syms}" "\nrocshmem_init\n" rc1)
  if(rc1 EQUAL -1)
    set(rc1 1)
  else()
    set(rc1 0)
  endif()
  foreach(m IN LISTS members)
    execute_process(COMMAND "${nm}" --defined-only -j "${m}" OUTPUT_VARIABLE dev_syms ERROR_QUIET RESULT_VARIABLE rc2)
    if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
      message(FATAL_ERROR "rocSHMEM: ${nm} cannot list the symbols of ${core} and ${m}")
    endif()
    string(REPLACE "\n" ";" dev_syms "${dev_syms}")
    set(renames "")
    foreach(sym IN LISTS dev_syms)
      string(FIND "${core_syms}" "\n${sym}\n" at)
      if(sym AND NOT at EQUAL -1 AND NOT sym MATCHES "^(__hip|\\.)")
        list(APPEND renames --redefine-sym "${sym}=rocshmemi_hipshadow_${sym}")
      endif()
    endforeach()
    if(renames)
      execute_process(COMMAND "${objcopy}" ${renames} "${m}" RESULT_VARIABLE rc3 ERROR_VARIABLE log3)
      if(NOT rc3 EQUAL 0)
        message(FATAL_ERROR "rocSHMEM: ${objcopy} ${renames} ${m} failed: ${log3}")
      endif()
    endif()
  endforeach()
  file(COPY_FILE "${core}" "${tmp}/librocshmem.a")
  # Deterministic (D): the same inputs give the same bytes, so an unchanged library is not
  # touched and programs are not relinked.
  execute_process(COMMAND "${AR}" qD "${tmp}/librocshmem.a" ${members} RESULT_VARIABLE rc1
                  OUTPUT_VARIABLE log1 ERROR_VARIABLE log1)
  execute_process(COMMAND "${AR}" sD "${tmp}/librocshmem.a" RESULT_VARIABLE rc2
                  OUTPUT_VARIABLE log2 ERROR_VARIABLE log2)
  if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
    message(FATAL_ERROR "rocSHMEM: ${AR} could not add the AMD device objects to librocshmem.a:\n${log1}${log2}")
  endif()
  file(COPY_FILE "${tmp}/librocshmem.a" "${STAGE_LIB}/librocshmem.a" ONLY_IF_DIFFERENT)
  file(REMOVE_RECURSE "${tmp}")
  message(STATUS "rocSHMEM: librocshmem.a holds AMD device code for ${archive_arches}")
else()
  file(COPY_FILE "${core}" "${STAGE_LIB}/librocshmem.a" ONLY_IF_DIFFERENT)
endif()

set(text "# Generated by cmake/stage_amd.cmake: what the AMD device library of this install holds.\n")
string(APPEND text "set(rocshmem_AMD_GPU_TARGETS \"${archive_arches}\")  # librocshmem_device.a, librocshmem.a\n")
string(APPEND text "set(rocshmem_AMD_BITCODE_ARCHES \"${bitcode_arches}\")  # librocshmem_device_<arch>.bc\n")
string(APPEND text "set(rocshmem_AMD_IN_STATIC ${combine})  # librocshmem.a holds the device object\n")
if(EXISTS "${OUT_CMAKE}")
  file(READ "${OUT_CMAKE}" before)
else()
  set(before "")
endif()
if(NOT before STREQUAL text)
  file(WRITE "${OUT_CMAKE}" "${text}")
endif()
