# Sources of lib/nn, relative to lib/: tensors, the ops (dispatch + backends), safetensors I/O,
# the model (encoder, heads, optimizer, checkpoints) and the CUDA backend.
include(nn/ops/sources.cmake)
include(nn/io_sources.cmake)
include(nn/model_sources.cmake)
include(nn/cuda/sources.cmake)
set(KGLM_NN_SOURCES
  nn/tensor.cpp
  ${KGLM_NN_OPS_SOURCES}
  ${KGLM_NN_IO_SOURCES}
  ${KGLM_NN_MODEL_SOURCES}
  ${KGLM_NN_CUDA_SOURCES}
)
