// Entry of the ir stage: the loaded project's ASTs -> a Program with every declaration registered
// (namespaces, imports, entities, attributes, relations, typedefs, implementations, implements, indexes,
// plugins). Static errors (duplicates, unknown types, bad defaults, cycles…) are reported to `diags`.
#pragma once

#include "frontend/Project.h"
#include "ir/Ir.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

namespace inm::ir {

/// A built-in plugin's signature in the language's own notation, e.g.
/// "std::replace(string: string, old: string, new: string) -> string". Flags: allow_unknown, deprecated.
struct PluginSpec {
  const char* signature;
  bool allowUnknown = false;
  bool deprecated = false;
  /// Where the plugin is defined (Python plugins: the `def` line), for duplicate-type messages.
  SourceRange range = {};
};
/// Signatures of every native std plugin (the runtime registers an implementation for each).
const std::vector<PluginSpec>& builtinPluginSpecs();

/// `extraPlugins`: signatures of plugins implemented outside the native std (Python plugins, pybridge/),
/// registered like the built-in ones. `nativeStdPlugins` false: the native std plugins are not defined (the
/// project's own std brings its plugins as Python, docs/modules.md "The std module").
Program lower(const frontend::Project& project, StringTable& strings, DiagnosticEngine& diags,
              llvm::ArrayRef<PluginSpec> extraPlugins = {}, bool nativeStdPlugins = true);

/// Outcome of resolving a type name (language.md §3.4 steps 1-2) from namespace `ns`.
enum class LookupResult : uint8_t { Found, NotFound, MissingImport };
/// What a failed lookup could not find: the type's short name and the namespace searched, the two fields of
/// TypeNotFound/MissingImport ("could not find type n in namespace x").
struct TypeMiss {
  std::string type;   // as written, qualified or not (the reference's `typ`)
  std::string ns;     // the namespace searched (the reference's `ns`)
  std::string module; // MissingImport: the module path to import
};
/// Resolves `name` ("n" or "a::b::n") as seen from a file of namespace `ns`. On failure `miss` names what was
/// not found. Never reports diagnostics itself.
LookupResult lookupType(const Program& program, NamespaceId ns, llvm::StringRef name, TypeEntry& out,
                        TypeMiss& miss);
/// The nearest name to a type `name` that does not resolve from `ns` and would (same qualification; a
/// misspelt namespace prefix is corrected too), among the kinds in `kinds` (a bit per TypeKind), or ""
/// (support/Suggest.h).
std::string suggestType(const Program& program, NamespaceId ns, llvm::StringRef name, unsigned kinds);
constexpr unsigned typeKindBit(TypeKind k) { return 1u << unsigned(k); }
/// Every kind a type reference can name except implementations.
constexpr unsigned kAnyTypeKinds = typeKindBit(TypeKind::Entity) | typeKindBit(TypeKind::Typedef) |
                                   typeKindBit(TypeKind::Plugin) | typeKindBit(TypeKind::Primitive);
/// The nearest attribute (or relation) name of entity `e` (inherited ones included) to `name`, or "".
std::string suggestAttribute(const Program& program, EntityId e, llvm::StringRef name);
/// Primitive type name -> BaseType (string int float bool number list dict); false if not primitive.
bool primitiveType(llvm::StringRef name, BaseType& out);
/// Reference spelling of a declared type: "string", "mod::port[]?", "__config__::A".
std::string typeName(const Program& program, const Type& type);
/// One line of the "Invalid Constructor call:" list for index attribute `slot` of entity `e` that a
/// constructor leaves unset ("\n\t* Missing attribute 'x'. The attribute E.x is part of an index."): the
/// static check and the runtime (a `**dict` that lacks it) write it alike.
std::string missingIndexAttrLine(const Program& program, const Entity& e, uint32_t slot);

/// Deterministic dump of the resolved declarations (`inmanta compile --dump-ir`).
void dumpIr(const Program& program, const SourceManager& sm, llvm::raw_ostream& os);

} // namespace inm::ir
