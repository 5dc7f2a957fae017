#include "kernels/cpu/einsum_equation.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dflow {
namespace {

// TF's GetDimensionType.
EinsumDim DimensionType(bool removed, bool unique) {
  if (!removed) return unique ? EinsumDim::kFree : EinsumDim::kBatch;
  return unique ? EinsumDim::kReduce : EinsumDim::kContract;
}

// TF's MapToLabels: '.' stands for "..." and skips the next two characters
// unchecked.
void MapToLabels(const std::string &subscript, std::vector<int> *labels,
                 absl::flat_hash_map<char, int> *mapping, std::vector<char> *chars) {
  for (size_t i = 0; i < subscript.size(); ++i) {
    const char c = subscript[i];
    if (c == '.') {
      labels->push_back(kEinsumEllipsis);
      i += 2;
      continue;
    }
    auto [it, inserted] = mapping->try_emplace(c, static_cast<int>(mapping->size()));
    if (inserted) chars->push_back(c);
    labels->push_back(it->second);
  }
}

}  // namespace

absl::StatusOr<EinsumEquation> ParseEinsumEquation(const std::string &equation) {
  std::vector<std::string> sides = absl::StrSplit(equation, "->");
  if (sides.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Expecting exactly one '->' in einsum equation: ", equation));
  }
  std::vector<std::string> inputs = absl::StrSplit(sides[0], ',');
  if (inputs.size() != 1 && inputs.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Expecting 1 or 2 input subscripts in equation '", equation, "' but got: ", inputs.size()));
  }
  EinsumEquation eq;
  absl::flat_hash_map<char, int> mapping;
  const int num_inputs = static_cast<int>(inputs.size());
  eq.input_labels.resize(num_inputs);
  for (int i = 0; i < num_inputs; ++i) {
    MapToLabels(inputs[i], &eq.input_labels[i], &mapping, &eq.label_chars);
  }
  MapToLabels(sides[1], &eq.output_labels, &mapping, &eq.label_chars);
  const int num_labels = static_cast<int>(mapping.size());
  eq.input_label_counts.assign(num_inputs, std::vector<int>(num_labels, 0));
  eq.input_has_ellipsis.assign(num_inputs, false);
  for (int i = 0; i < num_inputs; ++i) {
    for (int label : eq.input_labels[i]) {
      if (label == kEinsumEllipsis) {
        eq.input_has_ellipsis[i] = true;
      } else {
        ++eq.input_label_counts[i][label];
      }
    }
  }
  eq.output_label_counts.assign(num_labels, 0);
  for (int label : eq.output_labels) {
    if (label == kEinsumEllipsis) {
      eq.output_has_ellipsis = true;
    } else {
      ++eq.output_label_counts[label];
    }
  }
  eq.label_types.resize(num_labels);
  for (int label = 0; label < num_labels; ++label) {
    const bool removed = eq.output_label_counts[label] == 0;
    const bool unique = num_inputs == 1 || eq.input_label_counts[0][label] == 0 ||
                        eq.input_label_counts[1][label] == 0;
    eq.label_types[label] = DimensionType(removed, unique);
  }
  return eq;
}

int EinsumOutputOnlyLabel(const EinsumEquation &eq) {
  for (int label : eq.output_labels) {
    if (label == kEinsumEllipsis) continue;
    bool found = false;
    for (const std::vector<int> &counts : eq.input_label_counts) found |= counts[label] > 0;
    if (!found) return label;
  }
  return -1;
}

absl::Status EinsumOutputOnlyLabelError(const std::string &equation, const EinsumEquation &eq,
                                        int label) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Einsum output subscripts for equation '", equation, "' has label '",
      std::string(1, eq.label_chars[label]), "' which is not present in the input subscripts"));
}

}  // namespace dflow
