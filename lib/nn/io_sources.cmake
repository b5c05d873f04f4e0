# Safetensors reading and writing, relative to lib/.
set(KGLM_NN_IO_SOURCES
  nn/convert.cpp
  nn/safetensors.cpp
  nn/torch_checkpoint.cpp
)
