// The content-addressed files set of an export and its byte helpers (sha1 hex via llvm::SHA1, UTF-8
// validation via llvm's ConvertUTF, base64 via llvm::encodeBase64). Invariant: FileStore keys are the
// sha1 of exactly the stored bytes.
#include "exporter/Files.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Base64.h>
#include <llvm/Support/ConvertUTF.h>
#include <llvm/Support/SHA1.h>

namespace inm::exporter {

std::string sha1Hex(llvm::StringRef data) {
  std::array<uint8_t, 20> digest =
      llvm::SHA1::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest), /*LowerCase=*/true);
}

bool isValidUtf8(llvm::StringRef data) {
  const auto* begin = reinterpret_cast<const llvm::UTF8*>(data.data());
  const auto* end = begin + data.size();
  return llvm::isLegalUTF8String(&begin, end);
}

std::string base64Encode(llvm::StringRef data) { return llvm::encodeBase64(data); }

std::string FileStore::add(llvm::StringRef content) {
  std::string hash = sha1Hex(content);
  auto it = files_.find(hash);
  if (it == files_.end()) files_.emplace(hash, saver_.save(content));
  return hash;
}

void FileStore::absorb(const FileStore& other) {
  for (const auto& [hash, content] : other.files_)
    if (files_.find(hash) == files_.end()) files_.emplace(hash, saver_.save(content));
}

} // namespace inm::exporter
