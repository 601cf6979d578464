// The content-addressed files set of an export and its byte helpers (sha1 hex via OpenSSL, UTF-8
// validation via llvm's ConvertUTF, base64 via llvm::encodeBase64). Invariant: FileStore keys are the
// sha1 of exactly the stored bytes.
#include "exporter/Files.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Base64.h>
#include <llvm/Support/ConvertUTF.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>

namespace inm::exporter {

std::string sha1Hex(llvm::StringRef data) {
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest, SHA_DIGEST_LENGTH), /*LowerCase=*/true);
}

bool isValidUtf8(llvm::StringRef data) {
  // Plain ASCII (nearly every file) is checked 8 bytes at a time.
  const char* p = data.data();
  const char* end = p + data.size();
  while (end - p >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    if (word & 0x8080808080808080ull) break;
    p += 8;
  }
  const auto* begin = reinterpret_cast<const llvm::UTF8*>(p);
  return llvm::isLegalUTF8String(&begin, reinterpret_cast<const llvm::UTF8*>(end));
}

std::string base64Encode(llvm::StringRef data) { return llvm::encodeBase64(data); }

std::string FileStore::add(llvm::StringRef content) {
  std::string hash = sha1Hex(content);
  auto [it, fresh] = byHash_.try_emplace(hash);
  if (fresh) it->second = saver_.save(content);
  return hash;
}

void FileStore::absorb(const FileStore& other) {
  for (const auto& entry : other.byHash_) {
    auto [it, fresh] = byHash_.try_emplace(entry.getKey());
    if (fresh) it->second = saver_.save(entry.getValue());
  }
}

std::vector<std::pair<llvm::StringRef, llvm::StringRef>> FileStore::sorted() const {
  std::vector<std::pair<llvm::StringRef, llvm::StringRef>> out;
  out.reserve(byHash_.size());
  for (const auto& entry : byHash_) out.emplace_back(entry.getKey(), entry.getValue());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace inm::exporter
