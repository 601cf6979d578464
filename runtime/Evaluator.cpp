// STUB — replaced by the evaluation engine (issue #6).
#include "runtime/Model.h"
namespace inm::runtime {
Model evaluate(const ir::Program& program, DiagnosticEngine&, const EvalOptions&) { return Model(program); }
} // namespace inm::runtime
