// The process-wide limits (support/Limits.h) and the stack guard. Limits are set once by the driver before
// any stage runs and only read afterwards, so a plain global is enough (the compiler is single-threaded).
#include "support/Limits.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace inm {

namespace {
Limits gLimits;
uintptr_t gStackFloor = 0; // lowest address a recursive walk may reach (0: guard not initialised)

struct LimitField {
  const char* name;
  const char* env;
  uint64_t Limits::*u64;
  uint32_t Limits::*u32;
};
const LimitField kFields[] = {
    {"nesting", "INM_MAX_NESTING", nullptr, &Limits::maxNesting},
    {"inheritance", "INM_MAX_INHERITANCE", nullptr, &Limits::maxInheritance},
    {"instances", "INM_MAX_INSTANCES", &Limits::maxInstances, nullptr},
    {"string-bytes", "INM_MAX_STRING_BYTES", &Limits::maxStringBytes, nullptr},
    {"list-items", "INM_MAX_LIST_ITEMS", &Limits::maxListItems, nullptr},
    {"template-steps", "INM_MAX_TEMPLATE_STEPS", &Limits::maxTemplateSteps, nullptr},
    {"format-width", "INM_MAX_FORMAT_WIDTH", &Limits::maxFormatWidth, nullptr},
    {"memory-mib", "INM_MAX_MEMORY_MIB", &Limits::maxMemoryMiB, nullptr},
    {"metadata-bytes", "INM_MAX_METADATA_BYTES", &Limits::maxMetadataBytes, nullptr},
    {"int-digits", "INM_MAX_INT_DIGITS", &Limits::maxIntDigits, nullptr},
    {"source-bytes", "INM_MAX_SOURCE_BYTES", &Limits::maxSourceBytes, nullptr},
};

std::string setField(const LimitField& f, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end || errno == ERANGE)
    return std::string("invalid value '") + value + "' for limit " + f.name + " (a non-negative integer)";
  if (f.u32) {
    if (v < 1 || v > 1000000) return std::string("limit ") + f.name + " must be between 1 and 1000000";
    gLimits.*f.u32 = uint32_t(v);
  } else {
    gLimits.*f.u64 = uint64_t(v);
  }
  return "";
}
} // namespace

const Limits& limits() { return gLimits; }
Limits& mutableLimits() { return gLimits; }

std::string applyLimitsFromEnv(const char* (*lookup)(const char* name)) {
  for (const LimitField& f : kFields)
    if (const char* v = lookup(f.env)) {
      std::string err = setField(f, v);
      if (!err.empty()) return std::string(f.env) + ": " + err;
    }
  return "";
}

std::string setLimit(const std::string& name, const std::string& value) {
  for (const LimitField& f : kFields)
    if (name == f.name) return setField(f, value);
  return "unknown limit --max-" + name + " (known: " + limitNames() + ")";
}

const char* limitNames() {
  return "nesting, inheritance, instances, string-bytes, list-items, template-steps, format-width, "
         "memory-mib, "
         "metadata-bytes, int-digits, source-bytes";
}

void initStackGuard() {
  uintptr_t here = uintptr_t(__builtin_frame_address(0));
  struct rlimit rl;
  uint64_t size = 8ull << 20;
  if (getrlimit(RLIMIT_STACK, &rl) == 0)
    size = rl.rlim_cur == RLIM_INFINITY ? (1ull << 30) : uint64_t(rl.rlim_cur);
  if (size > (1ull << 30)) size = 1ull << 30;
  // Keep a reserve for the frames below the check (diagnostic rendering, libraries, sanitizer frames): an
  // eighth of the stack, at least 256 KiB (a half under AddressSanitizer, whose frames are much larger).
  uint64_t reserve = size / 8;
#if defined(__SANITIZE_ADDRESS__)
  reserve = size / 2;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  reserve = size / 2;
#endif
#endif
  if (reserve < (256u << 10)) reserve = 256u << 10;
  // The caller's frame is not the very top of the stack (environment, auxv, libc start-up): allow 64 KiB.
  uint64_t usable = size > reserve + (64u << 10) ? size - reserve - (64u << 10) : size / 4;
  gStackFloor = here > usable ? here - usable : 0;
}

bool stackNearlyExhausted() {
  return gStackFloor != 0 && uintptr_t(__builtin_frame_address(0)) < gStackFloor;
}

} // namespace inm
