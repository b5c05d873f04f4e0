# Token datasets and pretrain prepare, relative to lib/.
set(KGLM_TRAIN_DATA_SOURCES
  train/token_block_cache.cpp
  train/token_dataset.cpp
  train/token_shards.cpp
  train/prepare.cpp
  train/word_vocabulary.cpp
)
