// STUB — replaced by the project/module loader (issue #5).
#include "frontend/Project.h"
#include "frontend/Frontend.h"
namespace inm::frontend {
std::string defaultStdDir() { return INM_SOURCE_STD_DIR; }
Project loadProject(const LoadOptions& opts, SourceManager& sm, StringTable& strings, DiagnosticEngine& diags) {
  Project p;
  p.dir = opts.projectDir;
  auto f = sm.loadFile(opts.projectDir + "/" + opts.mainFile);
  if (!f) { diags.error(DiagKind::ProjectNotFound, SourceRange{}, llvm::toString(f.takeError())); return p; }
  p.files.push_back(SourceFile{"__config__", "__config__", opts.projectDir, parseFile(*f, sm, strings, diags)});
  return p;
}
} // namespace inm::frontend
