// libFuzzer target for the frontend: feeds arbitrary bytes to frontend::parseFile (lexer, two-stage parser,
// AST builder, string/f-string decoding) and, when the file parsed, to dumpAst and reprExpr/reprStmt.
// Differential by default: INM_PARSER=fast-check (unless the caller set INM_PARSER) runs the hand-written
// fast parser and the ANTLR parser on every input; the fast one accepting what ANTLR rejects, or building a
// different Ast, aborts (the fast one giving up is its designed fallback to ANTLR, not a finding).
// Built only with -DINM_FUZZ=ON and clang (-fsanitize=fuzzer,address); seed corpus: test/lang/**/*.cf.
// Invariant: any input must return normally — a crash, hang, sanitizer report or parser disagreement is a
// bug.
#include "frontend/Frontend.h"

#include <llvm/Support/raw_ostream.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

static inm::frontend::ParseOptions parseOpts;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = std::getenv("INM_PARSER");
  parseOpts.mode = inm::frontend::parserModeFromName(env ? env : "fast-check")
                       .value_or(inm::frontend::ParserMode::FastCheck);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  inm::SourceManager sm;
  inm::StringTable strings;
  inm::DiagnosticEngine diags(sm);
  inm::FileId file = sm.addBuffer("fuzz.cf", std::string(reinterpret_cast<const char*>(data), size));
  inm::frontend::Ast ast = inm::frontend::parseFile(file, sm, strings, diags, parseOpts);
  if (!diags.hasErrors()) {
    std::string out;
    llvm::raw_string_ostream os(out);
    inm::frontend::dumpAst(ast, strings, sm, os);
    for (inm::frontend::StmtId s : ast.topLevel) (void)inm::frontend::reprStmt(ast, s, strings);
    for (uint32_t i = 0; i < ast.exprs.size(); ++i)
      (void)inm::frontend::reprExpr(ast, inm::frontend::ExprId{i}, strings);
  }
  std::string rendered;
  llvm::raw_string_ostream ros(rendered);
  diags.render(ros, inm::DiagFormat::Text);
  // The fast-check verdicts of parseFile are ParserDisagreement diagnostics (the parser reports no other
  // kind); "fast parser rejected …" is the designed fallback to ANTLR, no bug. Only messages are compared,
  // never the rendered text, which quotes the input.
  for (const inm::Diagnostic& d : diags.all()) {
    if (d.kind != inm::DiagKind::ParserDisagreement) continue;
    llvm::StringRef msg(d.message);
    if (msg.startswith("fast parser accepted") || msg.startswith("fast parser built")) {
      std::fprintf(stderr, "parser disagreement: %s\n", d.message.c_str());
      std::abort();
    }
  }
  return 0;
}
