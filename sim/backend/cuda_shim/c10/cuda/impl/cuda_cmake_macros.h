#pragma once
// Only for the compile check of the CUDA-only backend code against a CPU libtorch (see
// sim/backend/CMakeLists.txt): a CUDA build of libtorch generates this header; Debian's CPU
// package ships c10/cuda headers without it. Its one macro says c10_cuda is a shared library.
#define C10_CUDA_BUILD_SHARED_LIBS
