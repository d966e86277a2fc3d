//===- ParserGuard.cpp - input upstream MLIR's parsers crash on -----------===//

#include "dialect/ParserGuard.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {

/// Length of `[int, int, ...]` (an empty one too) at the start of `text`,
/// 0 if it is not one.
size_t integerArrayLength(StringRef text) {
  size_t i = 0;
  auto skipSpace = [&] {
    while (i < text.size() && llvm::isSpace(text[i]))
      ++i;
  };
  if (text.empty() || text[0] != '[')
    return 0;
  ++i;
  skipSpace();
  if (i < text.size() && text[i] == ']')
    return i + 1;
  while (true) {
    if (i < text.size() && text[i] == '-')
      ++i;
    size_t digits = i;
    while (i < text.size() && llvm::isDigit(text[i]))
      ++i;
    if (i == digits)
      return 0;
    skipSpace();
    if (i < text.size() && text[i] == ']')
      return i + 1;
    if (i >= text.size() || text[i] != ',')
      return 0;
    ++i;
    skipSpace();
  }
}

bool isIdentifierChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '.'; }

/// Whether `pos` is in a `//` comment.
bool inComment(StringRef text, size_t pos) {
  size_t lineStart = text.rfind('\n', pos);
  lineStart = lineStart == StringRef::npos ? 0 : lineStart + 1;
  return text.slice(lineStart, pos).contains("//");
}

/// Where the nesting of brackets in `text` first exceeds `limit` (npos if
/// never). Strings and `//` comments are skipped; `->` and `>=` close
/// nothing. An overestimate at worst (an unbalanced `<` in an exotic
/// attribute), never an underestimate of what the parser recurses on.
size_t tooDeep(StringRef text, int64_t limit) {
  int64_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == StringRef::npos)
        return StringRef::npos;
      continue;
    }
    bool opens = c == '(' || c == '[' || c == '{' || (c == '<' && text.substr(i + 1, 1) != "=");
    bool closes = c == ')' || c == ']' || c == '}' ||
                  (c == '>' && (i == 0 || text[i - 1] != '-') && text.substr(i + 1, 1) != "=");
    if (opens && ++depth > limit)
      return i;
    if (closes && depth > 0)
      --depth;
  }
  return StringRef::npos;
}

} // namespace

LogicalResult mlir::moe::checkUpstreamParserHazards(llvm::SourceMgr &sourceMgr,
                                                    MLIRContext *context) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef text = buffer->getBuffer();
  if (size_t at = tooDeep(text, kMaxNestingDepth); at != StringRef::npos) {
    auto [line, column] = sourceMgr.getLineAndColumn(llvm::SMLoc::getFromPointer(text.data() + at));
    auto loc = FileLineColLoc::get(context, buffer->getBufferIdentifier(), line, column);
    emitError(loc) << "nesting deeper than " << kMaxNestingDepth
                   << " levels of (), [], {} and <> (refused before parsing: MLIR's recursive "
                      "parser would overflow the stack)";
    return failure();
  }
  bool found = false;
  for (StringRef op : {"linalg.reduce", "linalg.broadcast", "linalg.transpose"}) {
    StringRef keyword = op == "linalg.transpose" ? "permutation" : "dimensions";
    for (size_t at = text.find(op); at != StringRef::npos; at = text.find(op, at + 1)) {
      size_t end = at + op.size();
      // The custom form only: `linalg.reduce ins(`, not "linalg.reduce"(
      // (the generic form parses the attribute on its own) or a longer name.
      if ((at > 0 && (isIdentifierChar(text[at - 1]) || text[at - 1] == '"')) ||
          (end < text.size() && isIdentifierChar(text[end])) || inComment(text, at))
        continue;
      size_t k = text.find(keyword, end);
      while (k != StringRef::npos && inComment(text, k))
        k = text.find(keyword, k + 1);
      if (k == StringRef::npos)
        continue; // the parser fails on the missing keyword, cleanly
      size_t i = k + keyword.size();
      while (i < text.size() && llvm::isSpace(text[i]))
        ++i;
      if (i >= text.size() || text[i] != '=')
        continue;
      ++i;
      while (i < text.size() && llvm::isSpace(text[i]))
        ++i;
      if (integerArrayLength(text.substr(i)))
        continue;
      auto [line, column] = sourceMgr.getLineAndColumn(llvm::SMLoc::getFromPointer(text.data() + i));
      auto loc = FileLineColLoc::get(context, buffer->getBufferIdentifier(), line, column);
      emitError(loc) << "expected '[' and a list of integers ending in ']' after '" << keyword
                     << " =' of " << op
                     << " (refused before parsing: MLIR 22's parser crashes on it)";
      found = true;
    }
  }
  return failure(found);
}

mlir::moe::ShortSourceLineDiagnosticHandler::ShortSourceLineDiagnosticHandler(
    llvm::SourceMgr &mgr, MLIRContext *context, llvm::raw_ostream &os)
    : SourceMgrDiagnosticHandler(mgr, context, os) {
  setHandler([this](Diagnostic &diag) {
    bool shortLines = lineIsShort(diag.getLocation());
    for (Diagnostic &note : diag.getNotes())
      shortLines &= lineIsShort(note.getLocation());
    if (shortLines) {
      emitDiagnostic(diag); // everything the base handler does (call stacks too)
      return;
    }
    emitDiagnostic(diag.getLocation(), diag.str(), diag.getSeverity(),
                   lineIsShort(diag.getLocation()));
    for (Diagnostic &note : diag.getNotes())
      emitDiagnostic(note.getLocation(), note.str(), note.getSeverity(),
                     lineIsShort(note.getLocation()));
  });
}

bool mlir::moe::ShortSourceLineDiagnosticHandler::lineIsShort(Location loc) const {
  auto fileLoc = loc->findInstanceOf<FileLineColLoc>();
  if (!fileLoc)
    return true;
  for (unsigned id = 1; id <= mgr.getNumBuffers(); ++id) {
    const llvm::MemoryBuffer *buffer = mgr.getMemoryBuffer(id);
    if (buffer->getBufferIdentifier() != fileLoc.getFilename().getValue())
      continue;
    llvm::SMLoc start = mgr.FindLocForLineAndColumn(id, fileLoc.getLine(), 1);
    if (!start.isValid())
      return true;
    StringRef rest(start.getPointer(), buffer->getBufferEnd() - start.getPointer());
    return rest.find('\n') <= 240 || rest.size() <= 240;
  }
  return true;
}
