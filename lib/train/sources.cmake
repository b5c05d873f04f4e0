# Sources of lib/train, relative to lib/.
set(KGLM_TRAIN_SOURCES
)
