// Failures that cross the orchestrator's layers: a code from ErrorCodes.def plus a message naming the cause
// (the field, the id, the database problem). store/ and service/ return them inside llvm::Error; api/ turns
// them into a JSON body {"message": …} with the code's HTTP status. Invariant: every failure the API reports
// has one of these codes; anything else is reported as Internal with its text.
#pragma once

#include <llvm/Support/Error.h>

#include <string>

namespace inm::model {

/// An error code (see ErrorCodes.def).
enum class ErrorCode {
#define INM_ERROR(Code, Status) Code,
#include "model/ErrorCodes.def"
#undef INM_ERROR
};

/// The HTTP status of a code.
int httpStatus(ErrorCode code);
/// The code's name, e.g. "NotFound".
const char* errorCodeName(ErrorCode code);

/// An llvm::ErrorInfo carrying a code and a message.
class Failure : public llvm::ErrorInfo<Failure> {
 public:
  static char ID;
  Failure(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  void log(llvm::raw_ostream& os) const override { os << message_; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  ErrorCode code() const { return code_; }
  const std::string& text() const { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

/// Makes an llvm::Error holding a Failure.
inline llvm::Error fail(ErrorCode code, std::string message) {
  return llvm::make_error<Failure>(code, std::move(message));
}

/// Splits any error into (code, message); non-Failure errors become Internal.
std::pair<ErrorCode, std::string> describe(llvm::Error err);

} // namespace inm::model
