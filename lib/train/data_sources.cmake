# Token datasets and pretrain prepare, relative to lib/.
set(KGLM_TRAIN_DATA_SOURCES
  train/token_dataset.cpp
  train/prepare.cpp
)
