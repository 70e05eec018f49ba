// LIBSVM reader (sparse text) and the file dispatch of load_stream.
#include "common/temp_dir_test.h"
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "data/libsvm_rows.h"
#include "omkl/dataset.h"
#include "omkl/error.h"
#include "omkl/row_stream.h"

namespace {

namespace fs = std::filesystem;

class LibsvmTest : public omkl::test::TempDirTest {};

using omkl::test::expect_input_error;

TEST_F(LibsvmTest, ReadsSparseRowsWithCommentsAndBlankLines) {
  const std::string path = write("small.svm",
                                 "# a comment line\n"
                                 "1.5 1:2 3:-4.5   # trailing comment\n"
                                 "\n"
                                 "-2\t2:7\r\n"
                                 "   \n"
                                 "0 1:1e-3 2:1 3:1\n");
  const omkl::Dataset data = omkl::load_libsvm(path);
  EXPECT_EQ(data.name, "small");
  EXPECT_EQ(data.n_samples, 3u);
  EXPECT_EQ(data.n_features, 3u);  // inferred from the largest index
  EXPECT_EQ(data.x, (std::vector<double>{2, 0, -4.5, 0, 7, 0, 1e-3, 1, 1}));
  EXPECT_EQ(data.y, (std::vector<double>{1.5, -2, 0}));
  EXPECT_EQ(data.task, omkl::Task::Regression);
}

// SVMlight ranking files put a query id between the label and the features: skipped, not a
// feature; after a feature it is no query id, and a bad index as any other.
TEST_F(LibsvmTest, AQueryIdBeforeTheFeaturesIsSkipped) {
  const std::string path = write("rank.svm", "3 qid:1 1:0.5 2:1\n1 qid:1 2:0.25\n2 qid:2 1:1\n");
  const omkl::Dataset data = omkl::load_libsvm(path);
  EXPECT_EQ(data.n_features, 2u);
  EXPECT_EQ(data.x, (std::vector<double>{0.5, 1, 0, 0.25, 1, 0}));
  EXPECT_EQ(data.y, (std::vector<double>{3, 1, 2}));
  const std::string late = write("late.svm", "1 1:0.5 qid:3\n");
  expect_input_error([&] { omkl::load_libsvm(late); }, late + ":1:3: ", "'qid:3'");
}

TEST_F(LibsvmTest, ExplicitDimensionPadsWithZeros) {
  const std::string path = write("pad.libsvm", "+1 2:3\n-1\n");
  const omkl::Dataset data = omkl::load_libsvm(path, 4);
  EXPECT_EQ(data.n_features, 4u);
  EXPECT_EQ(data.x, (std::vector<double>{0, 3, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(data.task, omkl::Task::Classification);
}

TEST_F(LibsvmTest, AByteOrderMarkIsNotPartOfTheFirstLabel) {
  const std::string path = write("bom.svm", "\xEF\xBB\xBF-1 1:0.5\n+1 2:2\n");
  const omkl::Dataset data = omkl::load_libsvm(path);
  EXPECT_EQ(data.y, (std::vector<double>{-1, 1}));
  // The live reader too.
  omkl::RowStreamOptions options;
  options.format = omkl::RowStreamOptions::Format::Libsvm;
  options.n_features = 2;
  omkl::RowStream stream(path, options);
  omkl::StreamRow row;
  ASSERT_TRUE(stream.next(row));
  EXPECT_EQ(row.y, -1.0);
  EXPECT_EQ(row.x, (std::vector<double>{0.5, 0.0}));
}

TEST_F(LibsvmTest, ZeroOneLabelsAreNotConverted) {
  const omkl::Dataset data = omkl::load_libsvm(write("01.svm", "0 1:1\n1 1:2\n"));
  EXPECT_EQ(data.y, (std::vector<double>{0, 1}));
  EXPECT_EQ(data.task, omkl::Task::Regression);
}

TEST_F(LibsvmTest, IndexAboveDimensionIsLocated) {
  const std::string path = write("big.svm", "1 1:1\n1 2:1 5:2\n");
  expect_input_error([&] { omkl::load_libsvm(path, 4); }, path + ":2:3: ", "exceeds n_features = 4");
}

TEST_F(LibsvmTest, IndexZeroIsLocated) {
  const std::string path = write("zero.svm", "1 0:1\n");
  expect_input_error([&] { omkl::load_libsvm(path); }, path + ":1:2: ", "feature index 0");
}

TEST_F(LibsvmTest, BadTokensAreLocated) {
  const std::string no_colon = write("nocolon.svm", "1 1:1\n1 1:1 7\n");
  expect_input_error([&] { omkl::load_libsvm(no_colon); }, no_colon + ":2:3: ", "bad token '7'");
  const std::string bad_index = write("badindex.svm", "1 a:1\n");
  expect_input_error([&] { omkl::load_libsvm(bad_index); }, bad_index + ":1:2: ", "'a:1'");
  const std::string signed_index = write("signed.svm", "1 -2:1\n");
  expect_input_error([&] { omkl::load_libsvm(signed_index); }, signed_index + ":1:2: ", "'-2:1'");
  const std::string bad_value = write("badvalue.svm", "1 1:2 2:x\n");
  expect_input_error([&] { omkl::load_libsvm(bad_value); }, bad_value + ":1:3: ", "'2:x'");
  const std::string no_value = write("novalue.svm", "1 1: 2:3\n");
  expect_input_error([&] { omkl::load_libsvm(no_value); }, no_value + ":1:2: ", "'1:'");
  const std::string bad_label = write("badlabel.svm", "1 1:1\nyes 1:1\n");
  expect_input_error([&] { omkl::load_libsvm(bad_label); }, bad_label + ":2:1: ", "bad label 'yes'");
}

TEST_F(LibsvmTest, IndicesMustIncrease) {
  const std::string path = write("order.svm", "1 3:1 2:1\n");
  expect_input_error([&] { omkl::load_libsvm(path); }, path + ":1:3: ", "does not increase");
  const std::string dup = write("dup.svm", "1 2:1 2:1\n");
  expect_input_error([&] { omkl::load_libsvm(dup); }, dup + ":1:3: ", "does not increase");
}

TEST_F(LibsvmTest, NonFiniteValuesAreLocated) {
  const std::string value = write("nan.svm", "1 1:1\n1 1:nan\n");
  expect_input_error([&] { omkl::load_libsvm(value); }, value + ":2:2: ", "non-finite value");
  const std::string label = write("inf.svm", "inf 1:1\n");
  expect_input_error([&] { omkl::load_libsvm(label); }, label + ":1:1: ", "non-finite value");
}

TEST_F(LibsvmTest, MissingEmptyAndCommentOnlyFiles) {
  const std::string missing = (dir_ / "absent.svm").string();
  expect_input_error([&] { omkl::load_libsvm(missing); }, missing + ": cannot open file", "");
  const std::string empty = write("empty.svm", "\n\n");
  expect_input_error([&] { omkl::load_libsvm(empty); }, empty + ": empty file", "");
  const std::string comments = write("comments.svm", "# nothing\n  # here\n");
  expect_input_error([&] { omkl::load_libsvm(comments); }, comments + ": no data rows", "");
}

TEST_F(LibsvmTest, InferredDimensionTooLargeToDensifyIsRefused) {
  // Found by fuzz/fuzz_libsvm.cpp: with the dimension inferred from an index near 2^61, eight
  // rows × dimension wrapped around size_t to 0, and densifying wrote far outside x.
  std::string text = "1 2305843009213693952:1\n";
  for (int i = 0; i < 7; ++i) text += "1 1:1\n";
  const std::string path = write("wide.svm", text);
  // The message names the line of the widest index.
  expect_input_error([&] { omkl::load_libsvm(path); }, path + ":1:2: 8 rows of dimension 2305843009213693952",
                     "do not fit in memory as a dense matrix");
  // One row of dimension 2^60 already exceeds what a vector of doubles can hold.
  const std::string one = write("wide1.svm", "1 1152921504606846976:1\n");
  expect_input_error([&] { omkl::load_libsvm(one); }, one + ":1:2: 1 rows of dimension", "dense matrix");
}

TEST_F(LibsvmTest, ADenseMatrixOverHalfTheMachinesMemoryIsRefused) {
  // What the system would grant (overcommit) and then fill for minutes: refused before.
  using omkl::detail::dense_matrix_too_large;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  EXPECT_FALSE(dense_matrix_too_large(2, (std::size_t{1} << 26), 4 * gib));  // 1 GiB of 4
  EXPECT_FALSE(dense_matrix_too_large(4, (std::size_t{1} << 26), 4 * gib));  // 2 GiB: half
  EXPECT_TRUE(dense_matrix_too_large(5, (std::size_t{1} << 26), 4 * gib));
  EXPECT_TRUE(dense_matrix_too_large(2, 1000000000, 23 * gib));  // the audit's 10^9-wide file
  EXPECT_FALSE(dense_matrix_too_large(2, 1000000000, 0));        // memory unknown: only the vector's limit
  EXPECT_TRUE(dense_matrix_too_large(8, std::size_t{1} << 61, 0));
  EXPECT_FALSE(dense_matrix_too_large(0, std::size_t{1} << 61, 0));
}

TEST_F(LibsvmTest, AModelsWidthIsCheckedLineByLine) {
  // --resume's check before a whole-file load: the widest index on the first line beyond it.
  const std::string path = write("w.svm", "# comment\n1 1:0.5 3:1\n\n-1 2:1 7:0.5 9:1\n1 12:1\n");
  omkl::detail::check_libsvm_width(path, 12, "the model");
  expect_input_error([&] { omkl::detail::check_libsvm_width(path, 8, "the model in m.ckpt"); },
                     path + ":4:4: feature index 9 exceeds n_features = 8 (the model in m.ckpt)", "");
  const std::string bad = write("bad.svm", "1 1:0.5\n1 x:1\n");
  expect_input_error([&] { omkl::detail::check_libsvm_width(bad, 8, "m"); }, bad + ":2:2: bad feature index", "");
}

TEST_F(LibsvmTest, LoadStreamDispatchesOnExtension) {
  const std::string content = "1 1:0.5 2:0.25\n-1 2:1\n";
  for (const std::string name : {"a.svm", "b.libsvm", "c.txt", "d.SVM"}) {
    const omkl::Dataset data = omkl::load_stream(write(name, content));
    EXPECT_EQ(data.n_features, 2u) << name;
    EXPECT_EQ(data.task, omkl::Task::Classification) << name;
  }
  omkl::CsvOptions options;
  options.target_column = "t";
  const omkl::Dataset csv = omkl::load_stream(write("e.csv", "t,x\n1,2\n"), 1, options);
  EXPECT_EQ(csv.y, std::vector<double>{1});
  EXPECT_EQ(csv.x, std::vector<double>{2});
  const omkl::Dataset other = omkl::load_stream(write("f.data", "x,y\n3,4\n"));
  EXPECT_EQ(other.y, std::vector<double>{4});
  const std::string missing = (dir_ / "absent.csv").string();
  expect_input_error([&] { omkl::load_stream(missing); }, missing + ": cannot open file", "");
}

}  // namespace
