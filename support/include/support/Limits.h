// Resource limits of the compiler (docs/limits.md): every bound that protects the process from a hostile or
// careless model lives here, with its default, its environment variable and its driver flag. The driver
// applies the environment (`INM_MAX_*`) and its `--max-*` flags once at start-up (applyLimitsFromEnv /
// setLimit); the stages read limits() and report a diagnostic naming the construct when one is exceeded. Also
// the stack guard: a last-resort check that a recursive walk stops with "nested too deep" before the real
// stack runs out, whatever the stack rlimit (the driver's 1 GiB re-exec is an optimisation, not the defence).
#pragma once

#include <cstdint>
#include <string>

namespace inm {

struct Limits {
  /// Nesting of expressions and blocks in a .cf file (brackets, operator chains, `not`, nested if/for),
  /// of values built from literals, of template blocks and of YAML documents.
  uint32_t maxNesting = 500;
  /// Depth of an entity's inheritance chain (imports are loaded from a queue: their chain has no limit).
  uint32_t maxInheritance = 1000;
  /// Instances one compile may create.
  uint64_t maxInstances = 2000000;
  /// Bytes of one string value (concatenation, formatting, templates, file contents).
  uint64_t maxStringBytes = 64ull << 20;
  /// Items of one generated list (std::sequence, comprehensions) and iterations of one template loop.
  uint64_t maxListItems = 10000000;
  /// Steps (nodes rendered, loop iterations) of one std::template render; each iteration allocates its loop
  /// variables, so this bounds time and memory of nested template loops.
  uint64_t maxTemplateSteps = 1000000;
  /// Width and precision in a format spec (`{x:>N}`, `{x:.Nf}`).
  uint64_t maxFormatWidth = 1000000;
  /// Address space of the process's heap (RLIMIT_DATA), MiB; 0 = no limit. Not applied under ASan.
  uint64_t maxMemoryMiB = 8192;
  /// Bytes of project.yml / module.yml.
  uint64_t maxMetadataBytes = 1ull << 20;
  /// Bytes of one model source file (main.cf, an imported .cf): a bigger file is refused before it is read.
  uint64_t maxSourceBytes = 64ull << 20;
  /// Decimal digits of one int value (ints are exact, so `2 ** 10**18` would otherwise exhaust memory).
  uint64_t maxIntDigits = 100000;
};

/// The process's limits (defaults until the driver changes them).
const Limits& limits();
Limits& mutableLimits();

/// Applies INM_MAX_NESTING, INM_MAX_INHERITANCE, INM_MAX_INSTANCES, INM_MAX_STRING_BYTES, INM_MAX_LIST_ITEMS,
/// INM_MAX_TEMPLATE_STEPS, INM_MAX_FORMAT_WIDTH, INM_MAX_MEMORY_MIB, INM_MAX_METADATA_BYTES,
/// INM_MAX_INT_DIGITS, INM_MAX_SOURCE_BYTES as `lookup` returns them (the driver passes the process
/// environment; null = unset). Returns an error text for a bad value.
std::string applyLimitsFromEnv(const char* (*lookup)(const char* name));
/// Sets one limit by its flag name without `--max-` ("nesting", "instances", ...). Error text or "".
std::string setLimit(const std::string& name, const std::string& value);
/// "nesting, inheritance, ..." for the usage text.
const char* limitNames();

/// Records the current stack position as the base of the main thread's stack and computes the lowest safe
/// address from RLIMIT_STACK. Call first thing in main().
void initStackGuard();
/// True when less than a safety reserve of stack is left (recursive walks then stop with "nested too deep").
bool stackNearlyExhausted();

} // namespace inm
