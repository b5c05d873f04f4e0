# Masking, schedules, trainer, relative to lib/.
set(KGLM_TRAIN_TRAINER_SOURCES
  train/objectives/masker.cpp
  train/objectives/spans.cpp
  train/objectives/whole_word.cpp
  train/objectives/reasoning.cpp
  train/objectives/entity_prediction.cpp
  train/objectives/objective_table.cpp
  train/batch_order.cpp
  train/mlm_batch.cpp
  train/loss_terms.cpp
  train/metrics_log.cpp
  train/trainer_state.cpp
  train/mask_dump.cpp
  train/trainer.cpp
  train/pretrain.cpp
  train/tasks/scores.cpp
)
