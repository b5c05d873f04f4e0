// The Hugging Face tokenizer files of a model directory: file names, reading tokenizer_config.json
// (BertTokenizer's options and special token names) and writing the files HF's XLMRobertaTokenizer
// and BertTokenizer load.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "tok/wordpiece_options.hpp"

namespace kglm::tok {

inline constexpr const char* kSentencePieceModelFile = "sentencepiece.bpe.model";
inline constexpr const char* kWordPieceVocabFile = "vocab.txt";
inline constexpr const char* kT5SentencePieceFile = "spiece.model";
inline constexpr const char* kTokenizerConfigFile = "tokenizer_config.json";
inline constexpr const char* kSpecialTokensMapFile = "special_tokens_map.json";

// The whole file; kglm::Error naming the path when it cannot be read.
std::string read_whole_file(const std::filesystem::path& path);

// Overwrites the options that tokenizer_config.json sets (do_lower_case, strip_accents,
// tokenize_chinese_chars, the special token names); kglm::Error naming the file when it is not
// valid JSON or a field has the wrong type.
void read_bert_tokenizer_config(const std::filesystem::path& config_file, WordPieceOptions& options);

// Writes sentencepiece.bpe.model (the given model bytes), tokenizer_config.json and
// special_tokens_map.json for XLMRobertaTokenizer.
void write_xlmr_hf_files(const std::filesystem::path& dir, std::string_view model_bytes);

// Writes spiece.model (the given model bytes), tokenizer_config.json and special_tokens_map.json for
// T5Tokenizer (no extra ids: kglm's T5 vocabularies have no sentinel tokens).
void write_t5_hf_files(const std::filesystem::path& dir, std::string_view model_bytes);

// Writes vocab.txt (the given contents), tokenizer_config.json and special_tokens_map.json for BertTokenizer.
void write_bert_hf_files(const std::filesystem::path& dir, std::string_view vocab_text,
                         const WordPieceOptions& options);

}  // namespace kglm::tok
