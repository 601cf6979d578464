// libFuzzer target for the frontend: feeds arbitrary bytes to frontend::parseFile (lexer, two-stage parser,
// AST builder, string/f-string decoding) and, when the file parsed, to dumpAst and reprExpr/reprStmt.
// Built only with -DINM_FUZZ=ON and clang (-fsanitize=fuzzer,address); seed corpus: test/lang/parser/*.cf.
// Invariant: any input must return normally — a crash, hang or sanitizer report is a frontend bug.
#include "frontend/Frontend.h"

#include <llvm/Support/raw_ostream.h>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  inm::SourceManager sm;
  inm::StringTable strings;
  inm::DiagnosticEngine diags(sm);
  inm::FileId file = sm.addBuffer("fuzz.cf", std::string(reinterpret_cast<const char*>(data), size));
  inm::frontend::Ast ast = inm::frontend::parseFile(file, sm, strings, diags);
  if (!diags.hasErrors()) {
    std::string out;
    llvm::raw_string_ostream os(out);
    inm::frontend::dumpAst(ast, strings, sm, os);
    for (inm::frontend::StmtId s : ast.topLevel) (void)inm::frontend::reprStmt(ast, s, strings);
    for (uint32_t i = 0; i < ast.exprs.size(); ++i) (void)inm::frontend::reprExpr(ast, inm::frontend::ExprId{i}, strings);
  }
  std::string rendered;
  llvm::raw_string_ostream ros(rendered);
  diags.render(ros, inm::DiagFormat::Text);
  return 0;
}
