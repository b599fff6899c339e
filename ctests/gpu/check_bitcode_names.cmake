# Checks that a device bitcode file (librocshmem_device_sm_XX.bc) defines, as external
# symbols, every `D(extern C, bitcode)` name of upstream's list (rocshmem-api-names.tsv: the
# 605 extern "C" entry points Triton calls) under its plain name, and the three device globals
# rocshmem_hipmodule_init copies (ROCSHMEM_CTX_DEFAULT, ROCSHMEM_TEAM_WORLD,
# ROCSHMEM_TEAM_SHARED) as data.
#
#   cmake -DNM=<llvm-nm> -DBC=<file.bc> -DTSV=<rocshmem-api-names.tsv> -P check_bitcode_names.cmake
#
# Prints "bitcode names: <found>/<expected> entry points, <g>/3 globals (<file>)" and the
# missing names; fails if any is missing.
cmake_minimum_required(VERSION 3.21)
foreach(v NM BC TSV)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_bitcode_names: -D${v}=... is required")
  endif()
endforeach()
if(NOT EXISTS ${BC})
  message(FATAL_ERROR "check_bitcode_names: ${BC} does not exist (build the target rocshmem_device_bitcode)")
endif()

execute_process(COMMAND ${NM} --defined-only --extern-only ${BC}
  OUTPUT_VARIABLE nm_out RESULT_VARIABLE nm_rc ERROR_VARIABLE nm_err)
if(NOT nm_rc EQUAL 0)
  message(FATAL_ERROR "check_bitcode_names: ${NM} failed on ${BC}: ${nm_err}")
endif()
# "<address or dashes> <type> <name>" per line; keep "<type> <name>".
string(REPLACE "\n" ";" nm_lines "${nm_out}")
set(functions "")
set(data "")
foreach(line IN LISTS nm_lines)
  if(line MATCHES "^[-0-9a-fA-F ]* ([A-Za-z]) ([^ ]+)$")
    set(type ${CMAKE_MATCH_1})
    set(sym ${CMAKE_MATCH_2})
    if(type STREQUAL "T" OR type STREQUAL "W")
      list(APPEND functions ${sym})
    elseif(type MATCHES "^[DBCRGSV]$")
      list(APPEND data ${sym})
    endif()
  endif()
endforeach()

file(STRINGS ${TSV} rows REGEX "\tD\\(extern C, bitcode\\)\t")
set(expected 0)
set(found 0)
set(missing "")
foreach(row IN LISTS rows)
  string(REGEX REPLACE "\t.*" "" name "${row}")
  math(EXPR expected "${expected} + 1")
  if(name IN_LIST functions)
    math(EXPR found "${found} + 1")
  else()
    list(APPEND missing ${name})
  endif()
endforeach()

set(globals_found 0)
foreach(g ROCSHMEM_CTX_DEFAULT ROCSHMEM_TEAM_WORLD ROCSHMEM_TEAM_SHARED)
  if(g IN_LIST data)
    math(EXPR globals_found "${globals_found} + 1")
  else()
    list(APPEND missing ${g})
  endif()
endforeach()

message("bitcode names: ${found}/${expected} entry points, ${globals_found}/3 globals (${BC})")
if(expected EQUAL 0)
  message(FATAL_ERROR "check_bitcode_names: no 'D(extern C, bitcode)' rows in ${TSV}")
endif()
if(missing)
  list(LENGTH missing nmiss)
  list(SUBLIST missing 0 40 shown)
  string(REPLACE ";" " " shown "${shown}")
  message(FATAL_ERROR "check_bitcode_names: ${nmiss} missing from ${BC}: ${shown}")
endif()
