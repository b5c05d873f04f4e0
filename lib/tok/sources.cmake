# Sources of lib/tok, relative to lib/.
set(KGLM_TOK_SOURCES
)
