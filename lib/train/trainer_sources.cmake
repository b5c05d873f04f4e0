# Masking, schedules, trainer, relative to lib/.
set(KGLM_TRAIN_TRAINER_SOURCES
)
