//===- Sweep.cpp - moe-bench over a grid of configurations ----------------===//

#include "Sweep.h"

#include "runtime/AtomicFile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <set>

using namespace llvm;
using namespace moebench;

namespace {
/// An axis, the moe-bench flag it sets, and the flags it replaces (which
/// may not be given beside it).
struct AxisFlag {
  const char *axis, *flag;
  std::initializer_list<const char *> replaces;
};
const AxisFlag kAxes[] = {
    {"tokens", "tokens", {"tokens"}},
    {"hidden", "hidden", {"hidden"}},
    {"mlp_dim", "mlp-dim", {"mlp-dim"}},
    {"experts", "experts", {"experts"}},
    {"topk", "topk", {"topk", "topk-list"}},
    {"null", "null-route-frac", {"null-route-frac", "null-route-frac-list", "null-route-sweep"}},
    {"dtype", "dtype", {"dtype"}},
    {"quant", "quant-mode", {"quant-mode"}},
    {"parallel", "parallel-mode", {"parallel-mode"}},
    {"ep_dispatch", "ep-dispatch", {"ep-dispatch"}},
    {"pass", "bench-pass", {"bench-pass"}},
    {"impl", "impl", {"impl"}},
};

/// The sweep's own flags: the parent's, not passed to the points.
constexpr const char *kSweepFlags[] = {"sweep", "csv", "plot", "json"};

/// Whether `arg` is moe-bench flag `name` (`--name`, `-name`, with or
/// without `=value`); `inlineValue` says which.
bool givesFlag(StringRef arg, StringRef name, bool *inlineValue = nullptr) {
  if (!arg.consume_front("--") && !arg.consume_front("-"))
    return false;
  if (!arg.consume_front(name))
    return false;
  if (inlineValue)
    *inlineValue = !arg.empty();
  return arg.empty() || arg.starts_with("=");
}

std::string duration(double s) {
  if (s < 60)
    return formatv("{0:F1} s", s).str();
  int64_t m = int64_t(s) / 60;
  return formatv("{0}m{1:02}s", m, int64_t(s) - 60 * m).str();
}

/// A CSV field: quoted when it holds a comma or a quote.
std::string csvField(const json::Value &v) {
  std::string s;
  if (auto str = v.getAsString())
    s = str->str();
  else if (auto b = v.getAsBoolean())
    s = *b ? "true" : "false";
  else if (auto i = v.getAsInteger())
    s = std::to_string(*i);
  else if (auto d = v.getAsNumber())
    raw_string_ostream(s) << format("%.6g", *d);
  else
    return "";
  if (s.find_first_of(",\"") == std::string::npos)
    return s;
  std::string quoted = "\"";
  for (char c : s)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

} // namespace

std::vector<std::string> moebench::sweepPointArgs(const std::vector<std::string> &args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    bool own = false, inlineValue = false;
    for (const char *flag : kSweepFlags)
      own = own || givesFlag(args[i], flag, &inlineValue);
    if (!own)
      out.push_back(args[i]);
    else if (!inlineValue)
      ++i; // its value
  }
  return out;
}

std::string moebench::parseSweep(const std::string &spec, const std::vector<std::string> &args,
                                 std::vector<SweepAxis> &axes) {
  axes.clear();
  SmallVector<StringRef> parts;
  SplitString(spec, parts, "; \t\n");
  std::set<std::string> seen;
  for (StringRef part : parts) {
    auto [name, list] = part.split('=');
    if (list.empty())
      return "--sweep: '" + part.str() + "' is not axis=value,value";
    const AxisFlag *axis = nullptr;
    for (const AxisFlag &a : kAxes)
      if (name == a.axis)
        axis = &a;
    if (!axis) {
      std::string names;
      for (const AxisFlag &a : kAxes)
        names += std::string(names.empty() ? "" : ", ") + a.axis;
      return "--sweep: unknown axis '" + name.str() + "' (axes: " + names + ")";
    }
    for (const std::string &arg : args)
      for (const char *flag : axis->replaces)
        if (givesFlag(arg, flag))
          return "--sweep sets --" + std::string(axis->flag) + " (axis " + axis->axis +
                 "); do not give " + arg + " as well";
    if (!seen.insert(axis->axis).second)
      return "--sweep: axis '" + name.str() + "' given twice";
    SweepAxis a{axis->axis, std::string("--") + axis->flag, {}};
    SmallVector<StringRef> values;
    list.split(values, ',', -1, false);
    for (StringRef v : values)
      a.values.push_back(v.trim().str());
    if (a.values.empty())
      return "--sweep: axis '" + name.str() + "' has no values";
    axes.push_back(std::move(a));
  }
  if (axes.empty())
    return "--sweep: no axes (e.g. --sweep 'topk=2,4,8; null=0,0.5')";
  return "";
}

std::string moebench::plotFormat(const std::string &plotFile) {
  // What matplotlib's Agg backend writes by itself (JPEG and TIFF need
  // Pillow, which python3-matplotlib does not bring).
  std::string ext = sys::path::extension(plotFile).lower();
  for (const char *format : {"svg", "svgz", "png", "pdf", "ps", "eps"})
    if (ext == std::string(".") + format)
      return format;
  return "";
}

int moebench::runSweep(const SweepRequest &request) {
  const std::vector<SweepAxis> &axes = request.axes;
  std::string exe = sys::fs::getMainExecutable(nullptr, (void *)&moebench::runSweep);
  std::string jsonFile = request.jsonFile.empty() ? "moe-bench-sweep.json" : request.jsonFile;
  // The results must have somewhere to go before the points run: main
  // checked the files given, this the default JSON file's place.
  if (std::string error; request.jsonFile.empty() && !moec::checkOutputFile(jsonFile, error)) {
    errs() << "moe-bench: error: " << error << "\n";
    return 2;
  }

  SmallString<128> dir;
  if (auto ec = sys::fs::createUniqueDirectory("moe-bench-sweep", dir)) {
    errs() << "moe-bench: error: cannot create a directory for the sweep: " << ec.message()
           << "\n";
    return 2;
  }

  int64_t total = 1;
  for (const SweepAxis &a : axes)
    total *= int64_t(a.values.size());
  outs() << "sweep: " << total << " configurations over";
  for (const SweepAxis &a : axes)
    outs() << " " << a.name << "=" << join(a.values, ",");
  outs() << "\n";
  outs().flush();

  json::Array results;
  double peak = 0;
  std::string peakKind;
  int failed = 0;
  auto start = std::chrono::steady_clock::now();
  std::vector<size_t> index(axes.size(), 0);
  for (int64_t i = 0; i < total; ++i) {
    // The point: the odometer `index` over the axes, last axis fastest.
    std::vector<std::string> args = {exe};
    args.insert(args.end(), request.args.begin(), request.args.end());
    std::string label;
    json::Object point;
    for (size_t a = 0; a < axes.size(); ++a) {
      const std::string &v = axes[a].values[index[a]];
      args.push_back(axes[a].flag);
      args.push_back(v);
      label += (label.empty() ? "" : " ") + axes[a].name + "=" + v;
      point[axes[a].name] = v;
    }
    std::string json = (dir + "/" + std::to_string(i) + ".json").str();
    std::string log = (dir + "/" + std::to_string(i) + ".log").str();
    args.push_back("--json");
    args.push_back(json);
    SmallVector<StringRef> argRefs(args.begin(), args.end());
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log), StringRef(log)};
    auto t0 = std::chrono::steady_clock::now();
    std::string error;
    int rc = sys::ExecuteAndWait(exe, argRefs, std::nullopt, redirects, 0, 0, &error);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // The child's RESULT lines, and on failure the end of its output.
    auto text = MemoryBuffer::getFile(log);
    SmallVector<StringRef> lines;
    if (text)
      (*text)->getBuffer().split(lines, '\n', -1, false);
    for (StringRef line : lines)
      if (line.starts_with("RESULT "))
        outs() << line << "\n";
    if (rc != 0) {
      ++failed;
      outs() << "sweep: " << label << " failed (exit " << rc << (error.empty() ? "" : ": ")
             << error << "); its last lines:\n";
      for (size_t l = lines.size() > 5 ? lines.size() - 5 : 0; l < lines.size(); ++l)
        outs() << "  " << lines[l] << "\n";
    } else if (auto buffer = MemoryBuffer::getFile(json)) {
      Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
      json::Object *root = parsed ? parsed->getAsObject() : nullptr;
      if (!parsed)
        consumeError(parsed.takeError());
      if (root) {
        if (auto p = root->getNumber("peak_gflops"))
          peak = std::max(peak, *p);
        if (auto k = root->getString("peak_kind"))
          peakKind = peakKind.empty() || peakKind == *k ? k->str() : "per result";
        if (json::Array *rs = root->getArray("results"))
          for (json::Value &r : *rs)
            if (json::Object *o = r.getAsObject()) {
              (*o)["sweep"] = json::Object(point);
              // A result's own peak (the run's best when it was taken)
              // before the run's final one.
              if (auto p = root->getNumber("peak_gflops"); p && !o->getNumber("peak_gflops"))
                (*o)["peak_gflops"] = *p;
              if (auto k = root->getString("peak_kind"))
                (*o)["peak_kind"] = k->str();
              results.push_back(std::move(r));
            }
      }
    }

    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double left = elapsed / double(i + 1) * double(total - i - 1);
    outs() << formatv("sweep: configuration {0} of {1} ({2}) {3} in {4}; elapsed {5}, about "
                      "{6} left\n",
                      i + 1, total, label, rc == 0 ? "done" : "FAILED", duration(took),
                      duration(elapsed), duration(left));
    outs().flush();
    for (size_t a = axes.size(); a-- > 0;) {
      if (++index[a] < axes[a].values.size())
        break;
      index[a] = 0;
    }
  }

  // The files: every result with its point; the CSV's columns are the axes,
  // then the result fields in a fixed order, then any others.
  std::string error;
  json::Object root;
  json::Object axesObject;
  for (const SweepAxis &a : axes) {
    json::Array values;
    for (const std::string &v : a.values)
      values.push_back(v);
    axesObject[a.name] = std::move(values);
  }
  root["sweep"] = json::Object{{"axes", std::move(axesObject)},
                               {"order", [&] {
                                  json::Array order;
                                  for (const SweepAxis &a : axes)
                                    order.push_back(a.name);
                                  return order;
                                }()}};
  root["peak_gflops"] = peak;
  root["peak_kind"] = peakKind;
  root["failed"] = failed;
  root["results"] = json::Array(results);
  std::string jsonText;
  raw_string_ostream(jsonText) << formatv("{0:2}", json::Value(std::move(root))) << "\n";
  if (!moec::writeFileAtomically(jsonFile, jsonText, error)) {
    errs() << "moe-bench: error: " << error << " (each point's results are in " << dir
           << ")\n";
    return 2;
  }
  outs() << "sweep: " << results.size() << " results written to " << jsonFile;

  if (!request.csvFile.empty()) {
    std::vector<std::string> columns;
    for (const SweepAxis &a : axes)
      columns.push_back(a.name);
    std::vector<std::string> fields = {
        "distribution", "mode",         "pass",       "impl",        "backend",
        "dtype",        "quant",        "rel_error",  "tokens",       "hidden",     "mlp_dim",     "experts",
        "topk",         "null_target",  "null_realized", "null_assignments",
        "real_assignments", "parallel", "mesh",
        "median_s",     "tflops",       "tokens_per_s", "peak_pct",  "peak_gflops", "peak_kind"};
    std::set<std::string> used;
    for (const json::Value &r : results)
      for (const auto &kv : *r.getAsObject())
        used.insert(kv.first.str());
    for (const std::string &f : fields)
      if (used.count(f))
        columns.push_back(f);
    for (const std::string &f : used)
      if (std::find(fields.begin(), fields.end(), f) == fields.end() && f != "sweep" &&
          f != "stages_s")
        columns.push_back(f);
    std::string csv;
    for (size_t c = 0; c < columns.size(); ++c)
      csv += (c ? "," : "") + (c < axes.size() ? "sweep_" + columns[c] : columns[c]);
    csv += "\n";
    for (const json::Value &r : results) {
      const json::Object *o = r.getAsObject();
      const json::Object *p = o->getObject("sweep");
      for (size_t c = 0; c < columns.size(); ++c) {
        const json::Value *v = c < axes.size() ? p->get(columns[c]) : o->get(columns[c]);
        csv += (c ? "," : "") + (v ? csvField(*v) : std::string());
      }
      csv += "\n";
    }
    if (!moec::writeFileAtomically(request.csvFile, csv, error)) {
      outs().flush();
      errs() << "\nmoe-bench: error: " << error << " (the JSON has every result)\n";
      return 2;
    }
    outs() << " and " << request.csvFile;
  }
  outs() << "\n";
  outs().flush();

  if (!request.plotFile.empty() && results.empty()) {
    errs() << "moe-bench: error: no configuration ran: nothing to plot\n";
    return 1;
  }
  if (!request.plotFile.empty()) {
    // The plotting script sits beside the executable (the build copies
    // bench/plot_sweep.py there); matplotlib draws it.
    SmallString<256> script(sys::path::parent_path(exe));
    sys::path::append(script, "moe-plot-sweep.py");
    // Debian's python3 (with python3-matplotlib) before any other on PATH.
    auto python = sys::fs::can_execute("/usr/bin/python3")
                      ? ErrorOr<std::string>(std::string("/usr/bin/python3"))
                      : sys::findProgramByName("python3");
    if (!python || !sys::fs::exists(script)) {
      errs() << "moe-bench: error: --plot needs python3 and " << script
             << " (scripts/setup.sh installs python3-matplotlib)\n";
      return 2;
    }
    // matplotlib draws into an unnamed file that becomes the plot when
    // whole (runtime/AtomicFile.h); the format is the extension main
    // checked before the sweep.
    std::string error;
    auto plot = moec::PendingOutput::create(request.plotFile, error);
    if (!plot) {
      errs() << "moe-bench: error: " << error << "\n";
      return 2;
    }
    std::string into = plot->procPath();
    std::string format = plotFormat(request.plotFile);
    SmallVector<StringRef> plotArgs = {*python, script, jsonFile, into, format};
    std::string plotError;
    int rc = sys::ExecuteAndWait(*python, plotArgs, std::nullopt, {}, 0, 0, &plotError);
    if (rc != 0) {
      errs() << "moe-bench: error: plotting " << request.plotFile << " failed (exit " << rc
             << (plotError.empty() ? "" : ": ") << plotError << ")\n";
      return 2;
    }
    if (!moec::publishOutputs({plot.get()}, error)) {
      errs() << "moe-bench: error: " << error << "\n";
      return 2;
    }
    outs() << "sweep: plot written to " << request.plotFile << "\n";
    outs().flush();
  }
  sys::fs::remove_directories(dir);
  if (failed)
    errs() << "moe-bench: error: " << failed << " of " << total << " configurations failed\n";
  return failed ? 1 : 0;
}
