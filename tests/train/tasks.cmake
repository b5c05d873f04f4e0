# Fine-tuning tasks (lib/train/tasks): scores, readers, heads.
add_kglm_test(tasks_scores_test SOURCES train/tasks/scores_test.cpp)
