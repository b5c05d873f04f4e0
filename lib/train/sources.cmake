# Sources of lib/train, relative to lib/: token datasets and their preparation, masking, trainer.
include(train/data_sources.cmake)
include(train/trainer_sources.cmake)
set(KGLM_TRAIN_SOURCES
  ${KGLM_TRAIN_DATA_SOURCES}
  ${KGLM_TRAIN_TRAINER_SOURCES}
)
