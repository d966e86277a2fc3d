//===- Choice.h - a choice option's spellings, written once -----*- C++ -*-===//
//
// A choice (an enum a pass option, a tool's option and the Python module
// all take) is one table of {value, name, description}: the cl::values of
// the pass option and of moec's, moe-opt's and moe-bench's cl::opt, the name
// a report prints, the parse of a string the Python module is given, and
// the list a message shows all come from it, so no tool spells the list
// again.
//
//===----------------------------------------------------------------------===//
#ifndef MOEC_PASSES_CHOICE_H
#define MOEC_PASSES_CHOICE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace mlir::moe {

template <typename Enum> struct ChoiceSpelling {
  Enum value;
  llvm::StringLiteral name, description;
};

template <typename Enum, size_t N> struct ChoiceTable {
  ChoiceSpelling<Enum> spellings[N];

  /// The values of a cl::opt<Enum> or a pass option of type Enum.
  llvm::cl::ValuesClass values() const { return valuesOf(std::make_index_sequence<N>()); }

  llvm::StringRef name(Enum value) const {
    for (const ChoiceSpelling<Enum> &s : spellings)
      if (s.value == value)
        return s.name;
    return "?";
  }

  std::optional<Enum> parse(llvm::StringRef name) const {
    for (const ChoiceSpelling<Enum> &s : spellings)
      if (s.name == name)
        return s.value;
    return std::nullopt;
  }

  /// "a, b, c or d", for messages.
  std::string list() const {
    std::string out;
    for (size_t i = 0; i < N; ++i)
      out += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + spellings[i].name.str();
    return out;
  }

private:
  template <size_t... I> llvm::cl::ValuesClass valuesOf(std::index_sequence<I...>) const {
    return llvm::cl::ValuesClass({llvm::cl::OptionEnumValue{
        spellings[I].name, static_cast<int>(spellings[I].value), spellings[I].description}...});
  }
};

/// The command-line parser of a choice: llvm::cl::parser's, with a message
/// that lists what is accepted ("must be dense, compact, ring or a2a (got
/// 'scatter')") instead of "Cannot find option named 'scatter'!". Installed
/// as llvm::cl::parser<Enum> by MOE_CHOICE_PARSER, so moec's and
/// moe-bench's cl::opt and the passes' options (MLIR wraps the same
/// parser) all give it. Written out because llvm::cl::parser's parse() is
/// not virtual; the members are the ones MLIR's GenericOptionParser reads
/// (Values[i].Name, Values[i].V).
template <typename Enum, const auto &Table>
class ChoiceOptionParser : public llvm::cl::generic_parser_base {
protected:
  class OptionInfo : public GenericOptionInfo {
  public:
    OptionInfo(llvm::StringRef name, Enum v, llvm::StringRef helpStr)
        : GenericOptionInfo(name, helpStr), V(v) {}
    llvm::cl::OptionValue<Enum> V;
  };
  llvm::SmallVector<OptionInfo, 8> Values;

public:
  using parser_data_type = Enum;
  ChoiceOptionParser(llvm::cl::Option &o) : generic_parser_base(o) {}

  unsigned getNumOptions() const override { return unsigned(Values.size()); }
  llvm::StringRef getOption(unsigned n) const override { return Values[n].Name; }
  llvm::StringRef getDescription(unsigned n) const override { return Values[n].HelpStr; }
  const llvm::cl::GenericOptionValue &getOptionValue(unsigned n) const override {
    return Values[n].V;
  }

  bool parse(llvm::cl::Option &o, llvm::StringRef argName, llvm::StringRef arg, Enum &v) {
    llvm::StringRef value = Owner.hasArgStr() ? arg : argName;
    for (const OptionInfo &info : Values)
      if (info.Name == value) {
        v = info.V.getValue();
        return false;
      }
    return o.error("must be " + Table.list() + " (got '" + value + "')");
  }

  template <class DT>
  void addLiteralOption(llvm::StringRef name, const DT &v, llvm::StringRef helpStr) {
    Values.push_back(OptionInfo(name, static_cast<Enum>(v), helpStr));
    AddLiteralOption(Owner, name);
  }
  void removeLiteralOption(llvm::StringRef name) { Values.erase(Values.begin() + findOption(name)); }
};

} // namespace mlir::moe

/// Makes `Table`'s message the parser of every option of type `Enum`
/// (at namespace scope, after the table).
#define MOE_CHOICE_PARSER(Enum, Table)                                                    \
  template <>                                                                            \
  class llvm::cl::parser<Enum> : public ::mlir::moe::ChoiceOptionParser<Enum, Table> {   \
  public:                                                                                \
    using ChoiceOptionParser::ChoiceOptionParser;                                        \
  };

#endif // MOEC_PASSES_CHOICE_H
