// The Python extension module omkl._omkl: the library's learner, study runner and registry over
// NumPy arrays. The Python package (python/omkl) wraps it; shapes and dtypes are checked there
// (every array arrives here C-contiguous float64) and again here, where a mistake would read
// out of bounds. Long calls release the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "omkl/algorithm.h"
#include "omkl/config.h"
#include "omkl/error.h"
#include "omkl/learner.h"
#include "omkl/study.h"

namespace nb = nanobind;

namespace {

using Rows = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Values = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Out = nb::ndarray<double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using MutableRows = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// The Python exception types, made once when the module is imported and kept for its lifetime
// (the translator's payload).
struct ErrorTypes {
  PyObject* error = nullptr;
  PyObject* input = nullptr;
  PyObject* config = nullptr;
  PyObject* cuda = nullptr;
  PyObject* diverged = nullptr;
};

// Raises omkl.DivergedError carrying the C++ error's sample and prediction as attributes (a
// caller that catches it can report where the run went wrong without parsing the message).
void raise_diverged(PyObject* type, const omkl::DivergedError& e) {
  PyObject* error = PyObject_CallFunction(type, "s", e.what());
  if (error == nullptr) return;  // the call's own exception stands
  PyObject* sample = PyLong_FromLongLong(static_cast<long long>(e.sample()));
  PyObject* prediction = PyFloat_FromDouble(e.prediction());
  if (sample != nullptr && prediction != nullptr && PyObject_SetAttrString(error, "sample", sample) == 0 &&
      PyObject_SetAttrString(error, "prediction", prediction) == 0)
    PyErr_SetObject(type, error);
  Py_XDECREF(sample);
  Py_XDECREF(prediction);
  Py_DECREF(error);
}

void translate(const std::exception_ptr& thrown, void* payload) {
  const auto* types = static_cast<const ErrorTypes*>(payload);
  try {
    std::rethrow_exception(thrown);
  } catch (const omkl::InputError& e) {
    PyErr_SetString(types->input, e.what());
  } catch (const omkl::ConfigError& e) {
    PyErr_SetString(types->config, e.what());
  } catch (const omkl::CudaError& e) {
    PyErr_SetString(types->cuda, e.what());
  } catch (const omkl::DivergedError& e) {
    raise_diverged(types->diverged, e);
  } catch (const omkl::Error& e) {
    PyErr_SetString(types->error, e.what());
  }
}

// A Python class `omkl.<name>` deriving from the given bases (a tuple), added to the module.
PyObject* add_exception(nb::module_& m, const char* name, PyObject* bases, const char* doc) {
  const std::string qualified = std::string("omkl.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!type) throw nb::python_error();
  m.attr(name) = nb::handle(type);
  return type;
}

void check_rows(const Rows& x, const omkl::Learner& learner) {
  if (x.shape(1) != learner.n_features())
    throw omkl::InputError("X has " + std::to_string(x.shape(1)) + " features, the model expects " +
                           std::to_string(learner.n_features()));
}

void check_length(std::size_t expected, std::size_t got, const char* what) {
  if (expected != got)
    throw omkl::InputError(std::string(what) + " has " + std::to_string(got) + " values for " +
                           std::to_string(expected) + " rows");
}

omkl::Learner create_learner(const std::string& spec, std::size_t n_features, const std::string& task,
                             const std::string& profile, std::uint64_t seed, std::uint64_t replicate,
                             std::size_t horizon, const std::string& backend, const std::string& preset,
                             const std::string& loss) {
  omkl::LearnerContext context;
  context.n_features = n_features;
  context.task = omkl::parse_task(task);
  context.profile = omkl::parse_profile(profile);
  context.seed = seed;
  context.replicate = replicate;
  context.horizon = horizon;
  context.backend = omkl::parse_backend(backend);
  if (!preset.empty()) context.defaults = omkl::find_preset(preset).defaults;
  // As `omkl run --loss`: the bandit paper's names for the library's losses.
  if (!loss.empty()) context.defaults.emplace_back("loss", omkl::loss_parameter(loss));
  if (n_features == 0) throw omkl::ConfigError("n_features must be at least 1");
  return omkl::make_learner(omkl::parse_algorithm_spec(spec), context);
}

// summary.json, curves.csv, logs.json, regret.csv, and the scale note (empty for none).
using StudyTexts = std::tuple<std::string, std::string, std::string, std::string, std::string>;

StudyTexts run_study(const omkl::StudySource& source, const std::vector<std::string>& algos, std::size_t seeds,
                     const std::string& profile, const std::string& backend, std::size_t threads,
                     const std::string& metric, const std::string& loss, std::size_t curve_points,
                     const std::string& out, bool shuffle, bool regret, bool regret_include_reg,
                     const std::string& time_match, const std::string& spread,
                     const std::string& regret_comparator, double regret_lambda, const std::string& regret_dict,
                     const std::string& command) {
  omkl::StudyConfig config;
  for (const auto& text : algos)
    for (omkl::AlgorithmSpec& spec : omkl::expand_algorithm_grid(text)) config.algorithms.push_back(std::move(spec));
  config.n_seeds = seeds;
  config.base_seed = source.seed;
  config.profile = omkl::parse_profile(profile);
  config.preset = source.preset;
  config.backend = omkl::parse_backend(backend);
  config.threads = threads;
  config.out_dir = out;
  config.curve_points = curve_points;
  config.metric = metric;
  config.shuffle = shuffle;
  config.regret = regret;
  config.regret_include_reg = regret_include_reg;
  config.time_match = time_match;
  if (!spread.empty()) config.spread = omkl::parse_spread(spread);
  config.regret_comparator = omkl::parse_regret_comparator(regret_comparator);
  config.regret_lambda = regret_lambda;
  config.regret_dict = regret_dict;
  omkl::set_study_loss(config, loss);
  config.provenance = {{"command", command}, {"data", source.path},
                       {"normalization", source.normalize.empty() ? (source.preset.empty() ? "none" : "the preset's")
                                                                  : source.normalize}};
  // The loss decides how the stream is read, as `omkl study --loss` (a regression loss on ±1
  // targets learns them as a regression stream).
  omkl::StudySource stream = source;
  stream.loss = loss;
  const omkl::Dataset data = omkl::load_study_data(stream);
  // A raw stream far from unit scale gets the command line's note, as a warning in Python.
  const bool raw = source.normalize.empty() && omkl::study_normalization(source) == omkl::Normalization::None;
  std::string note = raw ? omkl::scale_advice(data, "normalize='none'") : std::string();
  const omkl::StudyResult result = omkl::run_study(config, data);
  const omkl::StudyOutputs texts = omkl::format_study_outputs(result);
  return {texts.summary_json, texts.curves_csv, texts.logs_json, texts.regret_csv, std::move(note)};
}

}  // namespace

NB_MODULE(_omkl, m) {
  m.doc() = "omkl's C++ library (online multi-kernel learning with random features); use the omkl package";
  m.attr("__version__") = OMKL_VERSION_STRING;
  m.attr("with_cuda") = static_cast<bool>(OMKL_WITH_CUDA);

  static ErrorTypes types;  // lives as long as the process: the module cannot be unloaded
  nb::object exception_base = nb::borrow(PyExc_Exception);
  types.error = add_exception(m, "Error", exception_base.ptr(), "Base class of every error omkl raises.");
  const nb::tuple input_bases = nb::make_tuple(nb::handle(types.error), nb::handle(PyExc_ValueError));
  types.input = add_exception(m, "InputError", input_bases.ptr(),
                              "Malformed or inconsistent data: files, arrays, checkpoints. The message names "
                              "the file, line and column, or the sample, where known.");
  const nb::tuple config_bases = nb::make_tuple(nb::handle(types.error), nb::handle(PyExc_ValueError));
  types.config = add_exception(m, "ConfigError", config_bases.ptr(),
                               "An invalid configuration: an unknown algorithm, parameter, preset or option value.");
  const nb::tuple cuda_bases = nb::make_tuple(nb::handle(types.error), nb::handle(PyExc_RuntimeError));
  types.cuda = add_exception(m, "CudaError", cuda_bases.ptr(), "A CUDA failure, or no usable device.");
  const nb::tuple diverged_bases = nb::make_tuple(nb::handle(types.error), nb::handle(PyExc_ArithmeticError));
  types.diverged = add_exception(
      m, "DivergedError", diverged_bases.ptr(),
      "The model diverged: its prediction of a finite sample was NaN or infinite (mostly a step size eta too "
      "large), or save() found NaN or infinity in its state. Attributes: sample (the 1-based sample count, 0 "
      "when found at save) and prediction (that value; 0.0 when sample is 0). The learner refuses further "
      "updates.");
  nb::register_exception_translator(translate, &types);

  nb::class_<omkl::Learner>(m, "Learner", "One online learner (see omkl.Learner for the documented interface).")
      .def_static("create", &create_learner, nb::arg("spec"), nb::arg("n_features"), nb::arg("task"),
                  nb::arg("profile"), nb::arg("seed"), nb::arg("replicate"), nb::arg("horizon"), nb::arg("backend"),
                  nb::arg("preset"), nb::arg("loss"))
      .def_prop_ro("spec", &omkl::Learner::spec)
      .def_prop_ro("n_features", &omkl::Learner::n_features)
      .def_prop_ro("task", [](const omkl::Learner& l) { return omkl::to_string(l.task()); })
      .def_prop_ro("n_seen", &omkl::Learner::n_seen)
      .def_prop_ro("failed", &omkl::Learner::failed)
      .def_prop_ro("failure", &omkl::Learner::failure)
      .def_prop_ro("parameters", &omkl::Learner::parameters)
      .def_prop_ro("kernel_weights", &omkl::Learner::kernel_weights)
      .def_prop_ro("preprocessing", [](const omkl::Learner& l) { return omkl::to_string(l.preprocessing().how); })
      .def_prop_ro("feature_names", &omkl::Learner::feature_names)
      .def(
          "preprocess",
          [](const omkl::Learner& learner, MutableRows& x, std::optional<Out> y) {
            // The model's normalisation with its training statistics, in place, as `omkl predict`
            // applies it to new rows (an online scaler as it stands after the rows it learned).
            if (x.shape(1) != learner.n_features())
              throw omkl::InputError("X has " + std::to_string(x.shape(1)) + " features, the model expects " +
                                     std::to_string(learner.n_features()));
            if (y) check_length(x.shape(0), y->shape(0), "y");
            const omkl::Normalizer& stored = learner.preprocessing();
            if (stored.n_features == 0) return;  // a model without a stored normalisation
            const std::size_t d = learner.n_features();
            double* targets = y ? y->data() : nullptr;
            for (std::size_t i = 0; i < x.shape(0); ++i)
              stored.apply_row(x.data() + i * d, d, targets ? targets + i : nullptr);
          },
          nb::arg("x"), nb::arg("y").none(), "Applies the model's normalisation in place.")
      .def(
          "partial_fit",
          [](omkl::Learner& learner, const Rows& x, const Values& y, Out& out) {
            check_rows(x, learner);
            check_length(x.shape(0), y.shape(0), "y");
            check_length(x.shape(0), out.shape(0), "the output");
            nb::gil_scoped_release release;
            learner.partial_fit_block(x.data(), y.data(), x.shape(0), out.data());
          },
          nb::arg("x"), nb::arg("y"), nb::arg("out"), "Predicts then learns each row in order; predictions into out.")
      .def(
          "predict",
          [](const omkl::Learner& learner, const Rows& x, Out& out) {
            check_rows(x, learner);
            check_length(x.shape(0), out.shape(0), "the output");
            nb::gil_scoped_release release;
            const std::size_t d = learner.n_features();
            for (std::size_t i = 0; i < x.shape(0); ++i) out.data()[i] = learner.predict(x.data() + i * d);
          },
          nb::arg("x"), nb::arg("out"), "Predictions without learning, into out.")
      .def(
          "save", [](const omkl::Learner& learner, const std::string& path) { learner.save(path); },
          nb::arg("path"), nb::call_guard<nb::gil_scoped_release>(), "Writes the checkpoint to path atomically.")
      .def_static(
          "load", [](const std::string& path) { return omkl::Learner::load(path); }, nb::arg("path"),
          nb::call_guard<nb::gil_scoped_release>(), "The learner in the checkpoint file at path.")
      .def(
          "to_bytes",
          [](const omkl::Learner& learner) {
            const std::string bytes = learner.to_bytes();
            return nb::bytes(bytes.data(), bytes.size());
          },
          "The checkpoint as bytes.")
      .def_static(
          "from_bytes",
          [](nb::bytes bytes, const std::string& name) {
            return omkl::Learner::from_bytes(std::string(bytes.c_str(), bytes.size()), name);
          },
          nb::arg("data"), nb::arg("name"), "The learner in checkpoint bytes; name is what errors call them.");

  nb::class_<omkl::StudySource>(m, "StudySource")
      .def(nb::init<>())
      .def_rw("path", &omkl::StudySource::path)
      .def_rw("target_column", &omkl::StudySource::target_column)
      .def_rw("format", &omkl::StudySource::format)
      .def_rw("group_column", &omkl::StudySource::group_column)
      .def_rw("labels", &omkl::StudySource::labels)
      .def_rw("one_hot", &omkl::StudySource::one_hot)
      .def_rw("preset", &omkl::StudySource::preset)
      .def_rw("normalize", &omkl::StudySource::normalize)
      .def_rw("clients", &omkl::StudySource::clients)
      .def_rw("rounds", &omkl::StudySource::rounds)
      .def_rw("seed", &omkl::StudySource::seed)
      .def_rw("within_site_order", &omkl::StudySource::within_site_order)
      .def_rw("client_order", &omkl::StudySource::client_order);

  m.def("run_study", &run_study, nb::arg("source"), nb::arg("algos"), nb::arg("seeds"), nb::arg("profile"),
        nb::arg("backend"), nb::arg("threads"), nb::arg("metric"), nb::arg("loss"), nb::arg("curve_points"),
        nb::arg("out"), nb::arg("shuffle"), nb::arg("regret"), nb::arg("regret_include_reg"), nb::arg("time_match"),
        nb::arg("spread"), nb::arg("regret_comparator"), nb::arg("regret_lambda"), nb::arg("regret_dict"),
        nb::arg("command"),
        nb::call_guard<nb::gil_scoped_release>(),
        "Runs a study; returns (summary.json, curves.csv, logs.json, regret.csv) as text, and the scale note (omkl::scale_advice(); empty for none).");
  m.def("list_algorithms", [] {
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    for (const auto& a : omkl::list_algorithms()) out.emplace_back(a.name, a.family, a.summary);
    return out;
  });
  m.def("describe_algorithm", &omkl::describe_algorithm, nb::arg("name"));
  m.def("preset_names", &omkl::preset_names);
  m.def("default_seeds", &omkl::default_seeds, nb::arg("preset"));
}
