# Sources of lib/tok, relative to lib/.
set(KGLM_TOK_SOURCES
  tok/bert_basic_tokenizer.cpp
  tok/hf_tokenizer_files.cpp
  tok/sentencepiece_tokenizer.cpp
  tok/tokenizer.cpp
  tok/word_vocabulary_tokenizer.cpp
  tok/wordpiece_tokenizer.cpp
)
