// The one base64 codec of the tree (RFC 4648): the standard alphabet with '=' padding (§4) for file contents
// on the wire and in the executor protocol, and the URL-safe alphabet (§5) without padding for JSON Web
// Tokens. Pure std code, no I/O. Invariant: decode(encode(x)) == x for every byte string and both alphabets;
// decoding is strict — a character outside the accepted alphabet, data after padding, a wrong amount of
// padding or a length no encoder produces is an error naming the offset, never a silent partial result.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace inm::support {

/// Which 64-character table an encoder writes and a decoder accepts.
enum class Base64Alphabet {
  Standard, ///< A-Z a-z 0-9 + /   (RFC 4648 §4)
  UrlSafe,  ///< A-Z a-z 0-9 - _   (RFC 4648 §5)
  Either,   ///< decoding only: both tables (clients differ in which they send)
};

/// The encoding of `bytes`; `pad` appends '=' up to a multiple of four characters.
std::string base64Encode(std::string_view bytes, Base64Alphabet alphabet = Base64Alphabet::Standard,
                         bool pad = true);

/// How strict a decode is beyond the alphabet.
struct Base64Decoding {
  Base64Alphabet alphabet = Base64Alphabet::Standard;
  bool skipWhitespace = false; ///< ignore ' ', '\t', '\r', '\n' (MIME-style line breaks)
  bool requirePadding = false; ///< true: unpadded input (length not a multiple of 4) is an error
};

/// The bytes `text` encodes, or nullopt with the reason in `error` (when given), e.g. "'*' at offset 3 is not
/// a base64 character".
std::optional<std::string> base64Decode(std::string_view text, Base64Decoding how = {},
                                        std::string* error = nullptr);

} // namespace inm::support
