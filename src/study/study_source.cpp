// Reading and preparing a study's stream (omkl/study.h: StudySource), shared by every front end.
#include <string>

#include "omkl/error.h"
#include "omkl/study.h"

namespace omkl {

Dataset load_study_stream(const StudySource& source) {
  if (source.path == "-")
    throw ConfigError("data '-': standard input is read live by `omkl run` and `omkl predict` only; a study needs a whole "
                      "stream (a file)");
  CsvOptions csv;
  csv.target_column = source.target_column;
  csv.group_column = source.group_column;
  Dataset data = load_stream(source.path, source.seed, csv, source.format);
  if (source.labels == "pm1") map_labels_to_pm1(data);
  else if (!source.labels.empty() && source.labels != "as_written")
    throw ConfigError("--labels (labels) '" + source.labels + "': one of as_written, pm1");
  // Targets of ±1 only read as two classes when nothing says otherwise: a regression loss asked
  // for learns them as numbers (a constant target of 1 included).
  const bool regression_loss = source.loss == "square" || source.loss == "absolute";
  if (regression_loss) data.task = Task::Regression;
  if (!source.one_hot.empty()) one_hot_encode(data, source.one_hot);
  if (!source.group_column.empty() && data.groups.empty())
    throw ConfigError("group column '" + source.group_column + "': " + source.path +
                      " is not a CSV file with a header (only CSV streams have named columns)");
  const Preset* preset = source.preset.empty() ? nullptr : &find_preset(source.preset);
  // A classification protocol's defaults (its loss and λ) are the algorithms' classification
  // ones: on other targets they would silently give way to the regression ones.
  if (preset && preset->classification && data.task != Task::Classification)
    throw ConfigError("preset '" + preset->name + "' is a classification protocol, but " + source.path +
                      (regression_loss ? " is learned as a regression stream (--loss " + source.loss + ")"
                                       : "'s targets are not the labels −1 and +1") +
                      ": two classes written otherwise (0/1, 1/2) map to ±1 with --labels pm1 (labels=\"pm1\" in "
                      "Python); a regression target takes a regression preset (jmlr19-regression)");
  FederatedLayout layout;
  if (source.rounds) layout.rounds = source.rounds;
  else if (preset && preset->federated_rounds) layout.rounds = preset->federated_rounds;
  layout.clients = source.clients;
  layout.seed = source.seed;
  // The grouped deal's two orders: each group's rows before it, each client's after it.
  const auto grouped_order = [&](const char* option, const std::string& value, const char* first,
                                 const char* second) {
    if (value.empty()) return false;
    if (value != first && value != second)
      throw ConfigError(std::string(option) + " '" + value + "': one of " + first + ", " + second);
    if (data.groups.empty())
      throw ConfigError(std::string(option) + " '" + value +
                        "' orders a grouped (non-i.i.d.) deal: give a group column (--group-column; an i.i.d. "
                        "deal's order is its permutation)");
    return value == second;
  };
  layout.shuffle_sites =
      grouped_order("--within-site-order (within_site_order)", source.within_site_order, "chronological", "shuffled");
  layout.shuffle_within_client =
      !grouped_order("--client-order (client_order)", source.client_order, "shuffled", "listed");
  const bool federated = (preset && preset->federated_rounds > 0) || source.clients > 0 || source.rounds > 0;
  if (!federated && !data.groups.empty())
    throw ConfigError("group column '" + source.group_column + "' deals rows to federated clients by group: give a "
                      "federated preset (fed-pofmkl) or a number of clients / rounds");
  if (federated) arrange_federated(data, layout);
  return data;
}

Normalization study_normalization(const StudySource& source) {
  if (!source.normalize.empty()) return parse_normalization(source.normalize);
  return source.preset.empty() ? Normalization::None : find_preset(source.preset).normalization;
}

Dataset load_study_data(const StudySource& source) {
  Dataset data = load_study_stream(source);
  normalize(data, study_normalization(source));
  return data;
}

std::string loss_parameter(const std::string& loss) {
  if (loss != "logistic" && loss != "square" && loss != "absolute")
    throw ConfigError("loss '" + loss + "': one of logistic, square, absolute");
  return loss == "square" ? "squared" : loss;
}

std::string loss_metric(const std::string& loss, Task task) {
  if (loss.empty()) return task == Task::Regression ? "mse" : "error_rate";
  loss_parameter(loss);  // refuses a name that is no loss
  return loss == "square" ? "mse" : loss == "absolute" ? "mae" : "error_rate";
}

void set_study_loss(StudyConfig& config, const std::string& loss) {
  if (loss.empty()) return;
  config.defaults.emplace_back("loss", loss_parameter(loss));
  // The metric follows the loss (§8.6), whatever the task.
  config.metric = loss_metric(loss, Task::Regression);
}

}  // namespace omkl
