# Masking, schedules, trainer, relative to lib/.
set(KGLM_TRAIN_TRAINER_SOURCES
  train/objectives/whole_word.cpp
  train/batch_order.cpp
  train/mlm_batch.cpp
  train/metrics_log.cpp
  train/trainer_state.cpp
  train/trainer.cpp
  train/pretrain.cpp
)
