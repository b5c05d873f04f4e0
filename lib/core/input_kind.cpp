#include "core/input_kind.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "core/log.hpp"

namespace kglm {

namespace {

constexpr size_t kSniffBytes = 64 << 10;
constexpr std::string_view kHdf5Signature("\x89HDF\r\n\x1a\n", 8);

bool has_hdf5_signature(std::string_view head) {
  // The superblock sits at 0, or after a user block of 512, 1024, 2048, ... bytes.
  for (size_t at = 0; at + kHdf5Signature.size() <= head.size(); at = at == 0 ? 512 : at * 2)
    if (head.substr(at, kHdf5Signature.size()) == kHdf5Signature) return true;
  return false;
}

}  // namespace

InputKind classify_input(std::string_view head) {
  if (head.empty()) return InputKind::empty;
  if (has_hdf5_signature(head)) return InputKind::hdf5;
  if (head.starts_with("\xff\xfe") || head.starts_with("\xfe\xff")) {
    // UTF-16 with a byte-order mark: XML (which declares its encoding) is read as such.
    const size_t low = head[0] == '\xff' ? 0 : 1;  // the byte of an ASCII code unit that holds it
    for (size_t i = 2; i + 1 < head.size(); i += 2) {
      char c = head[i + low], other = head[i + 1 - low];
      if (other != 0) break;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
      if (c == '<') return InputKind::xml;
      break;
    }
    return InputKind::utf16_text;
  }
  // UTF-16 XML without a byte-order mark ("<\0?\0" or "\0<\0?"), as libxml2 detects it too.
  if (head.size() >= 4 && ((head[0] == '<' && head[1] == '\0' && head[2] != '\0' && head[3] == '\0') ||
                           (head[0] == '\0' && head[1] == '<' && head[2] == '\0' && head[3] != '\0')))
    return InputKind::xml;
  // Text has no NUL bytes and few control bytes besides tab, newline, carriage return, form feed.
  size_t control = 0;
  for (unsigned char c : head) {
    if (c == 0) return InputKind::binary;
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') || c == 0x7f) ++control;
  }
  if (control * 100 > head.size()) return InputKind::binary;
  size_t i = head.starts_with("\xef\xbb\xbf") ? 3 : 0;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r')) ++i;
  if (i == head.size()) return InputKind::text;
  if (head[i] == '<') return InputKind::xml;
  if (head[i] == '{' || head[i] == '[') return InputKind::json;
  return InputKind::text;
}

std::string describe_input_kind(InputKind kind, std::string_view compression) {
  std::string what;
  switch (kind) {
    case InputKind::empty:
      what = "empty";
      break;
    case InputKind::hdf5:
      what = "an HDF5 file";
      break;
    case InputKind::xml:
      what = "XML";
      break;
    case InputKind::json:
      what = "JSON";
      break;
    case InputKind::text:
      what = "text";
      break;
    case InputKind::utf16_text:
      what = "UTF-16 text (convert it to UTF-8)";
      break;
    case InputKind::binary:
      what = "binary data";
      break;
  }
  if (compression == "plain") return what;
  if (kind == InputKind::empty) return "an empty " + std::string(compression) + " stream";
  return std::string(compression) + "-compressed " + (kind == InputKind::hdf5 ? "HDF5 file" : what);
}

InputKind require_input_kind(InputStream& in, std::initializer_list<InputKind> accepted, std::string_view expected) {
  InputKind kind = classify_input(in.peek(kSniffBytes));
  if (kind == InputKind::empty || std::find(accepted.begin(), accepted.end(), kind) != accepted.end()) return kind;
  throw Error(location(in.name()) + "is " + describe_input_kind(kind, compression_name(in.compression())) +
              "; expected " + std::string(expected));
}

InputKind require_text_input(InputStream& in, std::string_view expected) {
  InputKind kind = require_input_kind(in, {InputKind::json, InputKind::text, InputKind::xml}, expected);
  if (kind == InputKind::xml && in.peek(1024).find("<mediawiki") != std::string_view::npos) {
    throw Error(location(in.name()) + "is a MediaWiki XML dump; expected " + std::string(expected) +
                ": run wiki-extract on it first");
  }
  return kind;
}

bool skip_empty_input(InputKind kind, std::string_view name) {
  if (kind != InputKind::empty) return false;
  log_warning(location(name) + "empty input");
  return true;
}

std::string describe_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return "a directory";
  try {
    InputStream in(path);
    return describe_input_kind(classify_input(in.peek(kSniffBytes)), compression_name(in.compression()));
  } catch (const Error& e) {
    return std::string("unreadable (") + e.what() + ")";
  }
}

}  // namespace kglm
