# Encoder model, heads, optimizer, checkpoints, relative to lib/.
set(KGLM_NN_MODEL_SOURCES
)
