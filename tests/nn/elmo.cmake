# ELMo: options.json, character ids (and, as they land, the model and its checkpoints).
add_kglm_test(nn_elmo_test SOURCES nn/elmo_test.cpp)
