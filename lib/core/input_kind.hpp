// What an input file holds, told from its first (decompressed) bytes, so that a wrong kind of
// file is refused with one line naming it, what it is and what was expected, instead of being
// parsed as garbage into an empty output (man 7 kglm, INPUTS).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace kglm {

class InputStream;

enum class InputKind {
  empty,       // no bytes at all (after decompression)
  hdf5,        // HDF5 signature
  xml,         // '<' first (after a BOM and whitespace)
  json,        // '{' or '[' first: a JSON document or JSON lines
  text,        // anything else that reads as text
  utf16_text,  // a UTF-16 byte-order mark
  binary,      // NUL bytes or many control bytes
};

// Classifies a file's head (the first few KiB are enough).
InputKind classify_input(std::string_view head);

// "an HDF5 file", "gzip-compressed JSON", "binary data", ...
std::string describe_input_kind(InputKind kind, std::string_view compression = "plain");

// Peeks at the stream and throws Error "NAME: is X; expected WHAT" unless its kind is accepted.
// Returns the kind (InputKind::empty passes whenever accepted is not empty: empty inputs are a
// warning, decided by the caller).
InputKind require_input_kind(InputStream& in, std::initializer_list<InputKind> accepted, std::string_view expected);

// Empty input, handled the same in every tool (man 7 kglm): when kind is InputKind::empty, warns
// "NAME: empty input" and returns true; the caller then skips the input, and its output is empty.
bool skip_empty_input(InputKind kind, std::string_view name);

// The description of the file at path as require_input_kind() sees it ("missing" when it cannot be
// opened), for messages about inputs read by a library (HDF5, safetensors).
std::string describe_file(const std::string& path);

// Inputs of lines (text, JSON lines, TSV; XML too, as text): HDF5, binary data and a MediaWiki
// XML dump (which wants wiki-extract first) are refused. Returns the kind, empty included.
InputKind require_text_input(InputStream& in, std::string_view expected);

}  // namespace kglm
