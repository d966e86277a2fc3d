//===- ChoiceTablesTest.cpp - choice tables that mirror another's names ---===//
//
// Some choice tables take their values from the dialect's enums (the pack
// strategy, the null policy: passes/Choices.h) or from a pass's table
// (moe-bench's --quant-mode from moe-quantize's mode): their names must be
// those, every value listed, so that what moe-bench writes into a program,
// prints and passes on is what the dialect and the pass read.
//
//===----------------------------------------------------------------------===//

#include "tools/moe-bench/BenchChoices.h"

#include <gtest/gtest.h>

using namespace mlir::moe;

namespace {

TEST(ChoiceTables, PackStrategyNamesAreTheDialects) {
  ASSERT_EQ(std::size(kPackStrategyChoices.spellings),
            size_t(getMaxEnumValForPackStrategy()) + 1);
  for (const auto &s : kPackStrategyChoices.spellings)
    EXPECT_EQ(s.name, stringifyPackStrategy(s.value));
}

TEST(ChoiceTables, NullPolicyNamesAreTheDialects) {
  ASSERT_EQ(std::size(kNullPolicyChoices.spellings),
            size_t(getMaxEnumValForNullPolicy()) + 1);
  for (const auto &s : kNullPolicyChoices.spellings)
    EXPECT_EQ(s.name, stringifyNullPolicy(s.value));
}

TEST(ChoiceTables, QuantRunNamesAreNoneAndMoeQuantizesModes) {
  using moebench::QuantRun;
  EXPECT_EQ(moebench::kQuantRunChoices.name(QuantRun::none), "none");
  EXPECT_EQ(moebench::kQuantRunChoices.name(QuantRun::int8), kQuantModeChoices.name(QuantMode::int8));
  EXPECT_EQ(moebench::kQuantRunChoices.name(QuantRun::int8Routed),
            kQuantModeChoices.name(QuantMode::int8Routed));
  EXPECT_EQ(moebench::kQuantRunChoices.name(QuantRun::fakeInt8),
            kQuantModeChoices.name(QuantMode::fakeInt8));
  // Every mode of the pass is one of moe-bench's.
  for (const auto &s : kQuantModeChoices.spellings)
    EXPECT_TRUE(moebench::kQuantRunChoices.parse(s.name).has_value()) << s.name.str();
}

TEST(ChoiceTables, ParseIsTheInverseOfName) {
  for (const auto &s : moebench::kImplChoices.spellings)
    EXPECT_EQ(moebench::kImplChoices.parse(s.name), s.value);
  EXPECT_FALSE(moebench::kImplChoices.parse("fastest").has_value());
  EXPECT_EQ(moebench::kImplChoices.list(), "baseline, fused_w13, preweight or scatter");
}

} // namespace
