// KGLM_HOST_DEVICE marks the small functions that CPU code and CUDA kernels share (index ranges,
// sampling distributions), so that both devices compute them alike.
#pragma once

#ifdef __CUDACC__
#define KGLM_HOST_DEVICE __host__ __device__
#else
#define KGLM_HOST_DEVICE
#endif
