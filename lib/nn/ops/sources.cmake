# Op dispatch files (nn/ops/*.cpp) and CPU kernels (nn/cpu/*.cpp), relative to lib/.
set(KGLM_NN_OPS_SOURCES
)
