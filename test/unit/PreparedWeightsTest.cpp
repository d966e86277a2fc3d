//===- PreparedWeightsTest.cpp - prepared forms and their argument lists ---===//
//
// The line a library lists a prepared form in, the checks of a form
// against the signatures it names, and which of f's arguments each half
// gets. The calls go to a function of the test that records them (a
// compiled block's halves are run by test/moec/library.mlir and the Python
// tests).
//
//===----------------------------------------------------------------------===//

#include "runtime/PreparedWeights.h"

#include <gtest/gtest.h>

using namespace moec;

namespace {

FunctionSignature sig(const std::string &text) {
  std::string error;
  auto s = FunctionSignature::parse(text, error);
  EXPECT_TRUE(s) << error;
  return s ? *s : FunctionSignature{};
}

PreparedForm blockForm() {
  return {"f", "f_prepare_weights", "f_prepared", {2, 3}, {0, 1}};
}

TEST(PreparedFormTest, LineRoundTrips) {
  PreparedForm form = blockForm();
  EXPECT_EQ(form.str(), "f prepare=f_prepare_weights prepared=f_prepared weights=2,3 kept=0,1");
  std::string error;
  auto parsed = PreparedForm::parse(form.str(), error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(parsed->function, "f");
  EXPECT_EQ(parsed->prepare, "f_prepare_weights");
  EXPECT_EQ(parsed->prepared, "f_prepared");
  EXPECT_EQ(parsed->weightArgs, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(parsed->keptArgs, (std::vector<int64_t>{0, 1}));
  // No kept argument: an empty list.
  auto none = PreparedForm::parse("g prepare=a prepared=b weights=0 kept=", error);
  ASSERT_TRUE(none) << error;
  EXPECT_TRUE(none->keptArgs.empty());
  EXPECT_EQ(none->layout, ""); // a library from before layouts were recorded
  // The layout, when recorded, goes last and comes back.
  form.layout = "5f0e9a1c22d3b4e7";
  EXPECT_EQ(form.str(), "f prepare=f_prepare_weights prepared=f_prepared weights=2,3 kept=0,1 layout=5f0e9a1c22d3b4e7");
  auto withLayout = PreparedForm::parse(form.str(), error);
  ASSERT_TRUE(withLayout) << error;
  EXPECT_EQ(withLayout->layout, "5f0e9a1c22d3b4e7");
  // A key a later moec adds is not this runtime's to read.
  auto later = PreparedForm::parse("g prepare=a prepared=b weights=0 kept=1 tiles=v2", error);
  ASSERT_TRUE(later) << error;
  EXPECT_EQ(later->keptArgs, (std::vector<int64_t>{1}));
}

TEST(PreparedFormTest, BadLinesAreRefused) {
  for (const char *line : {"", "f", "f prepare=a prepared=b weights=0", "f prepare=a prepared=b weights=x kept=",
                           "f prepare=a prepared=b weights=-1 kept=", "f prepare= prepared=b weights=0 kept=",
                           "f prepare=a prepare=a prepared=b weights=0 kept=", "f prepare=a prepared=b weights=0,,1 kept=",
                           "f prepare=a prepared=b weights=0 kept= =1", "f prepare=a prepared=b weights=0 kept= layout=",
                           "f prepare=a prepared=b weights=0 kept= layout=1 layout=1"}) {
    std::string error;
    EXPECT_FALSE(PreparedForm::parse(line, error)) << line;
    EXPECT_NE(error.find("not a prepared form"), std::string::npos) << error;
  }
}

TEST(PreparedFormTest, MismatchNamesWhatDisagrees) {
  FunctionSignature f = sig("f(f32[?,8],f32[?,4],f32[4,8,16],f32[4,16,8])->(f32[?,8])");
  FunctionSignature prepare = sig("f_prepare_weights(f32[4,8,16],f32[4,16,8])->(f32[4,1,8,16],f32[4,1,16,8])");
  FunctionSignature prepared = sig("f_prepared(f32[?,8],f32[?,4],f32[4,1,8,16],f32[4,1,16,8])->(f32[?,8])");
  EXPECT_EQ(blockForm().mismatch(f, prepare, prepared), "");

  PreparedForm pastTheEnd = blockForm();
  pastTheEnd.weightArgs = {2, 4};
  EXPECT_EQ(pastTheEnd.mismatch(f, prepare, prepared), "'f_prepare_weights' takes argument 4 of 'f', which has 4");
  PreparedForm swapped = blockForm();
  swapped.weightArgs = {3, 2};
  EXPECT_EQ(swapped.mismatch(f, prepare, prepared),
            "input 0 of 'f_prepare_weights' is f32[4,8,16], not argument 3 of 'f' (f32[4,16,8])");
  PreparedForm oneKept = blockForm();
  oneKept.keptArgs = {0};
  EXPECT_EQ(oneKept.mismatch(f, prepare, prepared),
            "'f_prepared' takes 4 inputs, not 1 kept arguments and 2 prepared weights");
}

/// f(x, w) with w prepared into w + 1; f_prepared(x, p) = x + p.
struct RecordedCalls {
  std::vector<std::string> names;
  std::vector<std::vector<const void *>> data;
  CallByName call() {
    return [this](const std::string &name, std::vector<Buffer> &args, std::string &) {
      names.push_back(name);
      std::vector<const void *> seen;
      for (const Buffer &b : args)
        seen.push_back(b.data());
      data.push_back(seen);
      std::vector<Buffer> out;
      out.emplace_back(DType::F32, std::vector<int64_t>{2});
      for (int i = 0; i < 2; ++i)
        out.back().as<float>()[i] = args.back().as<float>()[i] + (name == "g_prepare_weights" ? 1 : 0) +
                                    (name == "g_prepared" ? args.front().as<float>()[i] : 0);
      return std::optional<std::vector<Buffer>>(std::move(out));
    };
  }
};

TEST(PreparedWeightsTest, EachHalfGetsItsArguments) {
  FunctionSignature g = sig("g(f32[2],f32[2])->(f32[2])");
  PreparedForm form{"g", "g_prepare_weights", "g_prepared", {1}, {0}};
  std::vector<Buffer> args;
  args.emplace_back(DType::F32, std::vector<int64_t>{2});
  args.emplace_back(DType::F32, std::vector<int64_t>{2});
  args[0].as<float>()[0] = 10, args[0].as<float>()[1] = 20;
  args[1].as<float>()[0] = 1, args[1].as<float>()[1] = 2;
  RecordedCalls calls;
  std::string error;
  auto weights = PreparedWeights::prepare(form, g, args, calls.call(), error);
  ASSERT_TRUE(weights) << error;
  EXPECT_EQ(weights->bytes(), 8u);
  ASSERT_EQ(calls.names, (std::vector<std::string>{"g_prepare_weights"}));
  EXPECT_EQ(calls.data[0], (std::vector<const void *>{args[1].data()})); // a view: not copied

  // The weight's own Buffer may go: the run reads x and the prepared copy.
  args[1] = Buffer();
  auto out = weights->run(form, g, args, calls.call(), error);
  ASSERT_TRUE(out) << error;
  EXPECT_EQ(calls.names.back(), "g_prepared");
  EXPECT_EQ(calls.data.back(), (std::vector<const void *>{args[0].data(), weights->buffers()[0].data()}));
  EXPECT_EQ((*out)[0].as<float>()[0], 12.0f);
  EXPECT_EQ((*out)[0].as<float>()[1], 23.0f);
}

TEST(PreparedWeightsTest, ArgumentsAreChecked) {
  FunctionSignature g = sig("g(f32[2],f32[2])->(f32[2])");
  PreparedForm form{"g", "g_prepare_weights", "g_prepared", {1}, {0}};
  RecordedCalls calls;
  std::string error;
  std::vector<Buffer> one;
  one.emplace_back(DType::F32, std::vector<int64_t>{2});
  EXPECT_FALSE(PreparedWeights::prepare(form, g, one, calls.call(), error));
  EXPECT_EQ(error, "'g' takes 2 inputs, got 1");
  std::vector<Buffer> wrong;
  wrong.emplace_back(DType::F32, std::vector<int64_t>{2});
  wrong.emplace_back(DType::F32, std::vector<int64_t>{3});
  EXPECT_FALSE(PreparedWeights::prepare(form, g, wrong, calls.call(), error));
  EXPECT_EQ(error, "argument 1 of 'g' expects 2xf32, got 3xf32 (a weight 'g_prepare_weights' prepares)");
  // An argument the prepared function reads may not be left out.
  std::vector<Buffer> noX;
  noX.emplace_back();
  noX.emplace_back(DType::F32, std::vector<int64_t>{2});
  auto weights = PreparedWeights::prepare(form, g, noX, calls.call(), error);
  ASSERT_TRUE(weights) << error; // x is not read by prepare
  EXPECT_FALSE(weights->run(form, g, noX, calls.call(), error));
  EXPECT_EQ(error, "argument 0 of 'g' is not given (an argument 'g_prepared' reads)");
  EXPECT_EQ(calls.names, (std::vector<std::string>{"g_prepare_weights"}));
}

TEST(PreparedWeightsTest, WeightsOfAnotherLayoutAreRefused) {
  // Weights prepared by another library's (or program's) form of g: the
  // same shapes, but not the layout this one's prepared function reads.
  FunctionSignature g = sig("g(f32[2],f32[2])->(f32[2])");
  PreparedForm theirs{"g", "g_prepare_weights", "g_prepared", {1}, {0}, "00000000000000aa"};
  PreparedForm ours = theirs, unrecorded = theirs;
  ours.layout = "00000000000000bb";
  unrecorded.layout = "";
  std::vector<Buffer> args;
  args.emplace_back(DType::F32, std::vector<int64_t>{2});
  args.emplace_back(DType::F32, std::vector<int64_t>{2});
  RecordedCalls calls;
  std::string error;
  auto weights = PreparedWeights::prepare(theirs, g, args, calls.call(), error);
  ASSERT_TRUE(weights) << error;
  EXPECT_FALSE(weights->run(ours, g, args, calls.call(), error));
  EXPECT_EQ(error, "these weights were prepared for 'g' by another library or program (layout 00000000000000aa), "
                   "not for 'g' here (layout 00000000000000bb): prepare them with the one that runs them");
  EXPECT_FALSE(weights->run(unrecorded, g, args, calls.call(), error));
  EXPECT_NE(error.find("here (layout not recorded)"), std::string::npos) << error;
  EXPECT_EQ(calls.names, (std::vector<std::string>{"g_prepare_weights"})); // prepared never ran
  EXPECT_TRUE(weights->run(theirs, g, args, calls.call(), error)) << error;
}

} // namespace
