add_kglm_test(nn_model_test SOURCES nn/model_test.cpp)
