// Error codes <-> HTTP status and names (see Failure.h).
#include "model/Failure.h"

namespace inm::model {

char Failure::ID = 0;

int httpStatus(ErrorCode code) {
  switch (code) {
#define INM_ERROR(Code, Status)                                                                              \
  case ErrorCode::Code:                                                                                      \
    return Status;
#include "model/ErrorCodes.def"
#undef INM_ERROR
  }
  return 500;
}

const char* errorCodeName(ErrorCode code) {
  switch (code) {
#define INM_ERROR(Code, Status)                                                                              \
  case ErrorCode::Code:                                                                                      \
    return #Code;
#include "model/ErrorCodes.def"
#undef INM_ERROR
  }
  return "Internal";
}

std::pair<ErrorCode, std::string> describe(llvm::Error err) {
  std::pair<ErrorCode, std::string> out{ErrorCode::Internal, ""};
  llvm::handleAllErrors(
      std::move(err),
      [&](const Failure& f) {
        out = {f.code(), f.text()};
      },
      [&](const llvm::ErrorInfoBase& e) {
        out = {ErrorCode::Internal, e.message()};
      });
  return out;
}

} // namespace inm::model
