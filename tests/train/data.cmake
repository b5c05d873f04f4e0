# token dataset / prepare tests
add_kglm_test(train_data_test SOURCES train/data_test.cpp)
add_kglm_test(train_data_fixtures_test SOURCES train/data_fixtures_test.cpp LABELS fixtures)
