# Sources of lib/nn, relative to lib/.
set(KGLM_NN_SOURCES
  nn/tensor.cpp
)
