# ctest driver (cmake -P): install the omkl build tree to a fresh prefix, then configure, build
# and run the consumer project against that prefix only. Any failing step fails the test.
#
# Inputs (-D): OMKL_BINARY_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, and optionally GENERATOR,
# CXX_COMPILER, BUILD_CONFIG.
cmake_minimum_required(VERSION 3.16)

foreach(var OMKL_BINARY_DIR CONSUMER_SOURCE_DIR WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer_test.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT BUILD_CONFIG)
  set(BUILD_CONFIG Release)
endif()

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(step name)
  message(STATUS "consumer test: ${name}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ${name} failed (${rc})\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

step("install omkl to ${prefix}"
  "${CMAKE_COMMAND}" --install "${OMKL_BINARY_DIR}" --prefix "${prefix}" --config "${BUILD_CONFIG}")

foreach(required include/omkl/omkl.h include/omkl/config.h)
  if(NOT EXISTS "${prefix}/${required}")
    message(FATAL_ERROR "consumer test: the install lacks ${required}")
  endif()
endforeach()

# A shared libomkl keeps CUDA and MPI private: its exported link interface names neither, so
# an application links libomkl alone.
file(GLOB shared_libs "${prefix}/lib*/libomkl.so")
if(shared_libs)
  file(GLOB targets_files "${prefix}/lib*/cmake/omkl/omklTargets*.cmake")
  foreach(targets_file ${targets_files})
    file(READ "${targets_file}" exported)
    foreach(private CUDA:: cublas curand MPI::)
      string(FIND "${exported}" "${private}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "consumer test: ${targets_file} makes applications link ${private}")
      endif()
    endforeach()
  endforeach()
endif()
foreach(doc README.md LICENSE papers.md features.md)
  if(NOT EXISTS "${prefix}/share/doc/omkl/${doc}")
    message(FATAL_ERROR "consumer test: the install lacks share/doc/omkl/${doc}, which the headers cite")
  endif()
endforeach()

# The README's "Library use" program, as the installed README writes it: it must compile and run.
file(READ "${prefix}/share/doc/omkl/README.md" readme)
string(FIND "${readme}" "## Library use" section)
if(section EQUAL -1)
  message(FATAL_ERROR "consumer test: the README has no \"Library use\" section")
endif()
string(SUBSTRING "${readme}" ${section} -1 readme)
string(FIND "${readme}" "```cpp\n" begin)
if(begin EQUAL -1)
  message(FATAL_ERROR "consumer test: the README's \"Library use\" section has no C++ program")
endif()
math(EXPR begin "${begin} + 7")
string(SUBSTRING "${readme}" ${begin} -1 readme)
string(FIND "${readme}" "\n```" end)
string(SUBSTRING "${readme}" 0 ${end} snippet)
file(WRITE "${WORK_DIR}/readme_snippet.cpp" "${snippet}\n")

set(configure_args -S "${CONSUMER_SOURCE_DIR}" -B "${build}"
  "-DOMKL_README_SNIPPET=${WORK_DIR}/readme_snippet.cpp"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  "-DCMAKE_BUILD_TYPE=${BUILD_CONFIG}"
  # Only the fresh prefix may provide omkl, never a system or user package registry.
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
step("configure the consumer" "${CMAKE_COMMAND}" ${configure_args})

# The package must have come from the prefix.
file(STRINGS "${build}/CMakeCache.txt" omkl_dir_line REGEX "^omkl_DIR:")
string(FIND "${omkl_dir_line}" "${prefix}" found)
if(found EQUAL -1)
  message(FATAL_ERROR "consumer test: omkl was not found in ${prefix} (${omkl_dir_line})")
endif()

step("build the consumer" "${CMAKE_COMMAND}" --build "${build}" --config "${BUILD_CONFIG}")

set(exe "${build}/omkl_consumer")
if(NOT EXISTS "${exe}")
  set(exe "${build}/${BUILD_CONFIG}/omkl_consumer")
endif()
step("run the consumer" "${exe}")
# In the work folder: it writes model.ckpt where it runs.
get_filename_component(exe_dir "${exe}" DIRECTORY)
step("run the README's program" "${CMAKE_COMMAND}" -E chdir "${WORK_DIR}" "${exe_dir}/omkl_readme_snippet")

file(REMOVE_RECURSE "${WORK_DIR}")
