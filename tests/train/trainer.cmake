add_kglm_test(trainer_test SOURCES train/trainer_test.cpp)
