# SPDX-License-Identifier: MIT
# The CMake targets of weft, header-only and INTERFACE: weft::weft (C++20, the headers, Eigen,
# OpenMP when found, -march=native unless WEFT_NATIVE is OFF) and weft::cuda (weft::weft, cudart, cuBLAS and the nvcc flags weft's .cuh
# headers need; only when the CUDA Toolkit is found). Included by both the installed
# weftConfig.cmake (find_package) and the top-level CMakeLists.txt (add_subdirectory,
# FetchContent), which set WEFT_INCLUDE_DIR (the folder holding weft/) first.

# weft.pc's cuda_args (meson.build's weft_cuda_args): 20012 is Eigen 3.4's defaulted members marked
# __host__ __device__, which nvcc reports even from a system header. scripts/test checks that this
# line, weft.pc and the README agree.
set(WEFT_CUDA_ARGS --expt-relaxed-constexpr --extended-lambda --diag-suppress=20012)

if(NOT TARGET Eigen3::Eigen)
  find_package(Eigen3 3.4 REQUIRED NO_MODULE)
endif()
if(NOT TARGET OpenMP::OpenMP_CXX)
  find_package(OpenMP QUIET COMPONENTS CXX)
endif()
if(NOT TARGET CUDA::cudart)
  find_package(CUDAToolkit QUIET)
endif()

# From a checkout the targets are GLOBAL, so that the project which added weft's folder sees them
# (the dependencies they name are looked up here, where they were linked).
set(_weft_scope)
if(NOT WEFT_INSTALLED)
  set(_weft_scope GLOBAL)
endif()

add_library(weft::weft INTERFACE IMPORTED ${_weft_scope})
target_include_directories(weft::weft INTERFACE "${WEFT_INCLUDE_DIR}")
target_compile_features(weft::weft INTERFACE cxx_std_20)
target_link_libraries(weft::weft INTERFACE Eigen3::Eigen)
if(TARGET OpenMP::OpenMP_CXX)
  target_link_libraries(weft::weft INTERFACE OpenMP::OpenMP_CXX)
endif()

# x86-64 compilers target SSE2 unless told, and weft's kernels then run 4-float packets (about 3x
# slower than AVX-512 on bench/pointwise). So weft::weft compiles its users for the machine that
# builds them, as llama.cpp's GGML_NATIVE does; OFF gives a portable binary (which says once on
# stderr, at its first kernel, what the CPU could do: WEFT_LOGS=cpu=off silences it). A -march or
# -mcpu already in CMAKE_CXX_FLAGS wins: the option then adds nothing.
option(WEFT_NATIVE "Compile the users of weft::weft with -march=native (OFF: a portable binary)" ON)
if(WEFT_NATIVE AND CMAKE_CXX_COMPILER_LOADED AND NOT CMAKE_CXX_FLAGS MATCHES "-march=|-mcpu=")
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag(-march=native WEFT_CXX_HAS_MARCH_NATIVE)
  if(WEFT_CXX_HAS_MARCH_NATIVE)
    # nvcc's host pass gets it through -Xcompiler, so that .cu and .cpp files agree on the packets.
    target_compile_options(weft::weft INTERFACE "$<$<COMPILE_LANGUAGE:CXX>:-march=native>"
                                                "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-march=native>")
  else()
    message(WARNING "weft: ${CMAKE_CXX_COMPILER_ID} does not take -march=native; weft::weft adds no -march "
                    "(set WEFT_NATIVE=OFF to silence this)")
  endif()
endif()

if(TARGET CUDA::cudart AND TARGET CUDA::cublas)
  add_library(weft::cuda INTERFACE IMPORTED ${_weft_scope})
  target_link_libraries(weft::cuda INTERFACE weft::weft CUDA::cudart CUDA::cublas)
  # -std=c++20 as a flag, not the cuda_std_20 feature: CMake 3.25 knows no C++20 for nvcc. A
  # later -std (CUDA_STANDARD) wins, as nvcc takes the last.
  target_compile_options(weft::cuda INTERFACE "$<$<COMPILE_LANGUAGE:CUDA>:-std=c++20;${WEFT_CUDA_ARGS}>")
endif()
unset(_weft_scope)
