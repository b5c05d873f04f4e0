# Encoder model, heads, optimizer, checkpoints, relative to lib/.
set(KGLM_NN_MODEL_SOURCES
  nn/config_json.cpp
  nn/model_config.cpp
  nn/parameters.cpp
  nn/workspace.cpp
  nn/encoder.cpp
  nn/elmo_characters.cpp
  nn/elmo_options.cpp
  nn/t5_config.cpp
  nn/t5.cpp
  nn/t5_checkpoint.cpp
  nn/heads.cpp
  nn/checkpoint.cpp
  nn/optimizer.cpp
  nn/loss_scaler.cpp
  nn/threads.cpp
)
