# Tests of lib/train (sources under tests/train/).
include(train/data.cmake)
include(train/trainer.cmake)
include(train/tasks.cmake)
