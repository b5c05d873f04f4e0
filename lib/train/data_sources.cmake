# Token datasets and pretrain prepare, relative to lib/.
set(KGLM_TRAIN_DATA_SOURCES
)
