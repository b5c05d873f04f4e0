# Tests of lib/nn (sources under tests/nn/): ops with finite-difference checks, safetensors,
# model parity with the PyTorch reference (tests/reference/).
include(nn/ops.cmake)
include(nn/safetensors.cmake)
include(nn/model.cmake)
include(nn/elmo.cmake)
