// kglm's token ids of each line of a file (without special tokens), for the comparison with
// transformers' tokenizers (tokenizers_check.py).
//   tokenize_lines encoder|t5 TOKENIZER FILE     TOKENIZER: what load_tokenizer / load_t5_tokenizer take
// Prints one line of space-separated ids per input line.
#include <fstream>
#include <iostream>
#include <string>

#include "tok/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: tokenize_lines encoder|t5 TOKENIZER FILE\n";
    return 2;
  }
  try {
    const std::string kind = argv[1];
    const auto tokenizer = kind == "t5" ? kglm::tok::load_t5_tokenizer(argv[2]) : kglm::tok::load_tokenizer(argv[2]);
    std::ifstream in(argv[3], std::ios::binary);
    kglm::tok::Encoding encoding;
    std::string out;
    for (std::string line; std::getline(in, line);) {
      tokenizer->encode(line, encoding);
      out.clear();
      for (size_t i = 0; i < encoding.ids.size(); ++i) out += (i ? " " : "") + std::to_string(encoding.ids[i]);
      std::cout << out << '\n';
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tokenize_lines: " << e.what() << "\n";
    return 1;
  }
}
