// CSV reader and writer: parsing, task inference, located errors, atomic round trips.
#include "common/temp_dir_test.h"
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "data/parse_number.h"
#include "omkl/dataset.h"
#include "omkl/error.h"
#include "omkl/row_stream.h"

namespace {

namespace fs = std::filesystem;

class CsvTest : public omkl::test::TempDirTest {};

using omkl::test::expect_input_error;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST_F(CsvTest, ReadsFeaturesAndLastColumnTarget) {
  const std::string path = write("small.csv", "a,b,y\n1,2,3.5\n-4,5e-1,6\n");
  const omkl::Dataset data = omkl::load_csv(path);
  EXPECT_EQ(data.name, "small");
  EXPECT_EQ(data.n_samples, 2u);
  EXPECT_EQ(data.n_features, 2u);
  EXPECT_EQ(data.x, (std::vector<double>{1, 2, -4, 0.5}));
  EXPECT_EQ(data.y, (std::vector<double>{3.5, 6}));
  EXPECT_EQ(data.task, omkl::Task::Regression);
  EXPECT_EQ(data.row(1)[1], 0.5);
}

TEST_F(CsvTest, NamedTargetColumnKeepsOtherColumnsInOrder) {
  const std::string path = write("named.csv", "a, target ,c,d\n1,2,3,4\n5,6,7,8\n");
  omkl::CsvOptions options;
  options.target_column = "target";
  const omkl::Dataset data = omkl::load_csv(path, options);
  EXPECT_EQ(data.n_features, 3u);
  EXPECT_EQ(data.x, (std::vector<double>{1, 3, 4, 5, 7, 8}));
  EXPECT_EQ(data.y, (std::vector<double>{2, 6}));
}

TEST_F(CsvTest, AcceptsCrlfSpacesAndTrailingBlankLine) {
  const std::string path = write("crlf.csv", "x1,x2,y\r\n 1 ,\t2,3\r\n4,5 , 6 \r\n\r\n");
  const omkl::Dataset data = omkl::load_csv(path);
  EXPECT_EQ(data.n_samples, 2u);
  EXPECT_EQ(data.x, (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(data.y, (std::vector<double>{3, 6}));
}

TEST_F(CsvTest, LinesEndingInCarriageReturnsAloneAreNamed) {
  // Classic Mac OS line endings make the file one line: the whole reader and the row reader both
  // say so at the header's first CR (line 1, the column it ends), not "no data rows".
  const std::string path = write("cr.csv", "x1,x2,y\r1,2,3\r4,5,6\r");
  for (const bool rows : {false, true}) {
    try {
      if (rows) {
        omkl::RowStream stream(path);
      } else {
        omkl::load_csv(path);
      }
      ADD_FAILURE() << "a CR-only file was read";
    } catch (const omkl::InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cr.csv:1:3"), std::string::npos) << what;
      EXPECT_NE(what.find("CR alone"), std::string::npos) << what;
    }
  }
}

TEST_F(CsvTest, KeepsTheHeadersFeatureNames) {
  omkl::CsvOptions options;
  options.target_column = "t";
  options.group_column = "site";
  const omkl::Dataset data = omkl::load_csv(write("names.csv", "a,t,b,site,c\n1,2,3,0,4\n"), options);
  EXPECT_EQ(data.feature_names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(omkl::load_libsvm(write("n.txt", "1 1:0.5\n"), 1).feature_names.empty());
}

TEST_F(CsvTest, TwoColumnsOfOneNameAreRefused) {
  // A model checks a file's features by name: two columns of one name (quotes and spaces do not
  // make names differ) could be swapped unseen, so the whole reader and the row reader refuse
  // them at the repeat's column; an unnamed column (blank, or "" quoted) at its own.
  const std::string named = write("dup.csv", "a,b, \"a\" ,y\n1,2,3,4\n");
  const std::string unnamed = write("unnamed.csv", "a,b,\"\",y\n1,2,3,4\n");
  const std::string first_unnamed = write("first_unnamed.csv", ",b,y\n1,2,3\n");
  for (const bool rows : {false, true}) {
    const auto read = [&](const std::string& path) {
      if (rows) {
        omkl::RowStream stream(path);
      } else {
        omkl::load_csv(path);
      }
    };
    expect_input_error([&] { read(named); }, named + ":1:3: ", "column 3 'a' repeats the name of column 1");
    expect_input_error([&] { read(unnamed); }, unnamed + ":1:3: ", "column 3 has no name");
    expect_input_error([&] { read(first_unnamed); }, first_unnamed + ":1:1: ", "column 1 has no name: give every column its own name (a row index written by pandas? write the file with to_csv(index=False)");
  }
}

TEST_F(CsvTest, ControlBytesInMessagesAreShownEscaped) {
  // A NUL in a cell would end the message (what() is a C string) before the cell's quote closes.
  const std::string path = write("nul.csv", std::string("a,b,y\n0.3,0") + '\0' + ".4,2\n");
  expect_input_error([&] { omkl::load_csv(path); }, path + ":2:2: ", "non-numeric cell '0\\x00.4'");
  EXPECT_EQ(omkl::detail::printable(std::string("a\tb\x7f") + '\0' + "\xc3\xa9"), "a\\x09b\\x7f\\x00\xc3\xa9");
  omkl::CsvOptions options;
  options.target_column = std::string("y") + '\0' + "z";
  expect_input_error([&] { omkl::load_csv(path, options); }, path + ":1:1: ", "unknown target column 'y\\x00z'");
}

TEST_F(CsvTest, GroupLabelsAreSmallNonNegativeIntegers) {
  omkl::CsvOptions options;
  options.group_column = "site";
  for (const auto& [cell, message] : std::vector<std::pair<std::string, std::string>>{
           {"-1", "is not a non-negative integer"}, {"1.5", "is not a non-negative integer"},
           {"99999999999", "is too large (group labels are below 2^32)"}}) {
    try {
      omkl::load_csv(write("g.csv", "a,site,y\n1," + cell + ",2\n"), options);
      ADD_FAILURE() << cell << " was taken";
    } catch (const omkl::InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("g.csv:2:2"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + cell + "' " + message), std::string::npos) << what;
    }
  }
  EXPECT_EQ(omkl::load_csv(write("g.csv", "a,site,y\n1,4294967295,2\n"), options).groups.at(0), 4294967295u);
}

TEST_F(CsvTest, AcceptsMissingFinalNewline) {
  const omkl::Dataset data = omkl::load_csv(write("nonl.csv", "x,y\n1,2\n3,4"));
  EXPECT_EQ(data.n_samples, 2u);
  EXPECT_EQ(data.y.back(), 4.0);
}

TEST_F(CsvTest, InfersClassificationOnlyForPlusMinusOne) {
  EXPECT_EQ(omkl::load_csv(write("pm.csv", "x,y\n1,-1\n2,1.0\n3,+1\n")).task,
            omkl::Task::Classification);
  // 0/1 labels are not rewritten, so the stream stays a regression stream.
  EXPECT_EQ(omkl::load_csv(write("01.csv", "x,y\n1,0\n2,1\n")).task, omkl::Task::Regression);
  EXPECT_EQ(omkl::load_csv(write("almost.csv", "x,y\n1,-1\n2,1.0000001\n")).task,
            omkl::Task::Regression);
}

TEST_F(CsvTest, RaggedRowWithTooFewFields) {
  const std::string path = write("short.csv", "a,b,y\n1,2,3\n4,5\n");
  expect_input_error([&] { omkl::load_csv(path); }, path + ":3:3: ", "expected 3 fields, got 2");
}

TEST_F(CsvTest, RaggedRowWithTooManyFields) {
  const std::string path = write("long.csv", "a,b,y\n1,2,3\n4,5,6\n7,8,9,10\n");
  expect_input_error([&] { omkl::load_csv(path); }, path + ":4:4: ", "expected 3 fields, got 4");
}

TEST_F(CsvTest, NonNumericCellIsQuoted) {
  const std::string path = write("text.csv", "a,b,y\n1,2,3\n4,abc,6\n");
  expect_input_error([&] { omkl::load_csv(path); }, path + ":3:2: ", "non-numeric cell 'abc'");
}

TEST_F(CsvTest, PartiallyNumericCellIsRejected) {
  const std::string path = write("partial.csv", "a,y\n1.5x,2\n");
  expect_input_error([&] { omkl::load_csv(path); }, path + ":2:1: ", "'1.5x'");
  const std::string inner = write("inner.csv", "a,y\n1 2,2\n");
  expect_input_error([&] { omkl::load_csv(inner); }, inner + ":2:1: ", "'1 2'");
  // strtod's hexadecimal floats are not numbers of a data file.
  const std::string hex = write("hex.csv", "a,y\n0.5,2\n0x1A,3\n");
  expect_input_error([&] { omkl::load_csv(hex); }, hex + ":3:1: ", "'0x1A'");
  const std::string hex_float = write("hexf.csv", "a,y\n0.5,0x1p3\n");
  expect_input_error([&] { omkl::load_csv(hex_float); }, hex_float + ":2:2: ", "'0x1p3'");
}

TEST_F(CsvTest, EmptyCellIsRejected) {
  const std::string path = write("hole.csv", "a,b,y\n1,,3\n");
  expect_input_error([&] { omkl::load_csv(path); }, path + ":2:2: ", "empty cell");
}

TEST_F(CsvTest, NonFiniteCellsAreRejected) {
  const std::string nan = write("nan.csv", "a,y\n1,2\nnan,3\n");
  expect_input_error([&] { omkl::load_csv(nan); }, nan + ":3:1: ", "non-finite value");
  const std::string inf = write("inf.csv", "a,y\n1,-inf\n");
  expect_input_error([&] { omkl::load_csv(inf); }, inf + ":2:2: ", "non-finite value");
  const std::string overflow = write("overflow.csv", "a,y\n1e999,1\n");
  expect_input_error([&] { omkl::load_csv(overflow); }, overflow + ":2:1: ", "non-finite value");
}

TEST_F(CsvTest, UnknownTargetColumnIsNamed) {
  const std::string path = write("cols.csv", "a,b,y\n1,2,3\n");
  omkl::CsvOptions options;
  options.target_column = "price";
  expect_input_error([&] { omkl::load_csv(path, options); }, path + ":1:1: ",
               "unknown target column 'price'");
}

TEST_F(CsvTest, MissingFileCannotBeOpened) {
  const std::string path = (dir_ / "absent.csv").string();
  expect_input_error([&] { omkl::load_csv(path); }, path + ": cannot open file", "");
  expect_input_error([&] { omkl::load_csv(dir_.string()); }, dir_.string() + ": cannot open file", "");
}

TEST_F(CsvTest, EmptyAndHeaderOnlyFiles) {
  const std::string empty = write("empty.csv", "");
  expect_input_error([&] { omkl::load_csv(empty); }, empty + ": empty file", "");
  const std::string header = write("header.csv", "a,b,y\n");
  expect_input_error([&] { omkl::load_csv(header); }, header + ": no data rows", "");
  const std::string header_blank = write("header_blank.csv", "a,b,y\r\n\r\n");
  expect_input_error([&] { omkl::load_csv(header_blank); }, header_blank + ": no data rows", "");
}

TEST_F(CsvTest, BlankLineInsideDataIsLocated) {
  const std::string path = write("gap.csv", "a,y\n1,2\n\n3,4\n");
  expect_input_error([&] { omkl::load_csv(path); }, path + ":3:1: ", "blank line");
}

TEST_F(CsvTest, WriteThenLoadRoundTripsExactly) {
  omkl::Dataset data;
  data.name = "rt";
  data.n_samples = 3;
  data.n_features = 3;
  data.x = {0.1, 1.0 / 3.0, -0.0, 1e-300, 5e-324, std::numeric_limits<double>::max(),
            -123456789.123456789, 2.0 / 7.0, std::nextafter(1.0, 2.0)};
  data.y = {std::acos(-1.0), -1e308, 0.0};
  const std::string path = (dir_ / "rt.csv").string();
  omkl::write_csv(data, path);
  const omkl::Dataset back = omkl::load_csv(path);
  ASSERT_EQ(back.n_samples, data.n_samples);
  ASSERT_EQ(back.n_features, data.n_features);
  for (std::size_t i = 0; i < data.x.size(); ++i) {
    EXPECT_TRUE(same_bits(back.x[i], data.x[i])) << i << ": " << back.x[i];
  }
  for (std::size_t i = 0; i < data.y.size(); ++i) EXPECT_TRUE(same_bits(back.y[i], data.y[i]));
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "x1,x2,x3,y");
}

TEST_F(CsvTest, WriteLeavesNoTemporaryFileAndReplacesTarget) {
  const std::string path = write("out.csv", "old contents\n");
  omkl::Dataset data;
  data.n_samples = 2;
  data.n_features = 1;
  data.x = {1, 2};
  data.y = {-1, 1};
  omkl::write_csv(data, path);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"out.csv"});
  const omkl::Dataset back = omkl::load_csv(path);
  EXPECT_EQ(back.y, data.y);
  EXPECT_EQ(back.task, omkl::Task::Classification);
}

TEST_F(CsvTest, WriteIntoMissingDirectoryThrowsAndCreatesNothing) {
  const fs::path missing = dir_ / "no_such_dir";
  const std::string path = (missing / "out.csv").string();
  omkl::Dataset data;
  data.n_samples = 1;
  data.n_features = 1;
  data.x = {1};
  data.y = {2};
  expect_input_error([&] { omkl::write_csv(data, path); }, path + ": cannot open for writing", "No such file");
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 0);
}

TEST_F(CsvTest, WriteRefusesNonFiniteValuesAndKeepsOldFile) {
  const std::string path = write("keep.csv", "x,y\n1,2\n");
  omkl::Dataset data;
  data.n_samples = 1;
  data.n_features = 1;
  data.x = {std::nan("")};
  data.y = {2};
  expect_input_error([&] { omkl::write_csv(data, path); }, path + ": ", "non-finite");
  EXPECT_EQ(omkl::load_csv(path).x, std::vector<double>{1});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(CsvTest, SharedAirfoilFile) {
  const std::string path = std::string(OMKL_SHARED_DATA_DIR) + "/airfoil.csv";
  if (!fs::exists(path)) GTEST_SKIP() << path << " not present";
  const omkl::Dataset data = omkl::load_csv(path);
  EXPECT_EQ(data.name, "airfoil");
  EXPECT_EQ(data.n_samples, 1503u);
  EXPECT_EQ(data.n_features, 5u);
  EXPECT_EQ(data.task, omkl::Task::Regression);
  EXPECT_EQ(data.x.size(), 1503u * 5u);
  EXPECT_EQ(data.row(0)[0], 800.0);
  EXPECT_EQ(data.row(0)[4], 0.00266337);
  EXPECT_EQ(data.y[0], 126.201);
}

}  // namespace

// The tests below name the library's data functions unqualified (in the unity build another
// file's using-directive used to supply them; a file must compile on its own).
using omkl::ConfigError;
using omkl::Dataset;
using omkl::kMaxOneHotValues;
using omkl::map_labels_to_pm1;
using omkl::one_hot_encode;
using omkl::one_hot_encode_like;
using omkl::Task;

TEST_F(CsvTest, AFirstRowOfNumbersIsNotAHeader) {
  const std::string path = write("numbers.csv", "1,2.5,-3\n4,5,6\n");
  omkl::test::expect_input_error([&] { omkl::load_csv(path); }, path + ":1:1", "header row");
  // A header with one name among numbers is a header.
  EXPECT_EQ(omkl::load_csv(write("mixed.csv", "1,2,y\n4,5,6\n")).n_samples, 1u);
}

TEST(LabelsTest, TwoClassesMapToMinusOneAndPlusOne) {
  // spec/bandit.md §8.2: the smaller value → −1, the larger → +1, the stream a classifier's.
  const auto mapped = [](std::vector<double> y) {
    Dataset data;
    data.name = "s";
    data.n_samples = y.size();
    data.y = std::move(y);
    map_labels_to_pm1(data);
    EXPECT_EQ(data.task, Task::Classification);
    return data.y;
  };
  EXPECT_EQ(mapped({0, 1, 1, 0}), (std::vector<double>{-1, 1, 1, -1}));
  EXPECT_EQ(mapped({2, 1, 2}), (std::vector<double>{1, -1, 1}));
  EXPECT_EQ(mapped({1, -1}), (std::vector<double>{1, -1}));
  const auto refused = [](std::vector<double> y) {
    Dataset data;
    data.name = "s";
    data.n_samples = y.size();
    data.y = std::move(y);
    try {
      map_labels_to_pm1(data);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused({0, 1, 0.5, 3}).find("s's target takes more than two values (0, 1, 0.5, …)"), std::string::npos);
  EXPECT_NE(refused({5, 5}).find("the one value 5"), std::string::npos);
  EXPECT_NE(refused({}).find("no value"), std::string::npos);
}

TEST(OneHotTest, CategoricalColumnsBecomeIndicatorColumnsOnePerValue) {
  // LIBSVM's binarisation (spec/bandit.md §10 A13): each chosen column's distinct values,
  // ascending, as 0/1 columns in its place; the other columns kept; names say column and value.
  const auto stream = [] {
    Dataset data;
    data.name = "s";
    data.n_samples = 4;
    data.n_features = 3;
    data.x = {-1, 0.5, 1,   //
              1, 0.25, 0,   //
              0, 0.5, 1,    //
              1, 0.75, 1};
    data.y = {1, -1, 1, -1};
    data.feature_names = {"a", "b", "c"};
    return data;
  };
  Dataset all = stream();
  one_hot_encode(all, "all");
  EXPECT_EQ(all.n_features, 3u + 3u + 2u);
  EXPECT_EQ(all.feature_names, (std::vector<std::string>{"a=-1", "a=0", "a=1", "b=0.25", "b=0.5", "b=0.75", "c=0",
                                                         "c=1"}));
  EXPECT_EQ(all.x, (std::vector<double>{1, 0, 0, 0, 1, 0, 0, 1,    //
                                        0, 0, 1, 1, 0, 0, 1, 0,    //
                                        0, 1, 0, 0, 1, 0, 0, 1,    //
                                        0, 0, 1, 0, 0, 1, 0, 1}));
  EXPECT_EQ(all.y, stream().y);
  Dataset some = stream();
  one_hot_encode(some, "c,a");
  EXPECT_EQ(some.feature_names, (std::vector<std::string>{"a=-1", "a=0", "a=1", "b", "c=0", "c=1"}));
  EXPECT_EQ(some.x, (std::vector<double>{1, 0, 0, 0.5, 0, 1,    //
                                         0, 0, 1, 0.25, 1, 0,   //
                                         0, 1, 0, 0.5, 0, 1,    //
                                         0, 0, 1, 0.75, 0, 1}));
  // Refusals, by name: a column the header lacks, names without a header, too many values.
  const auto refused = [](Dataset data, const std::string& columns) {
    try {
      one_hot_encode(data, columns);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused(stream(), "a,z").find("s has no feature column 'z'"), std::string::npos);
  EXPECT_NE(refused(stream(), "a,").find("no feature column ''"), std::string::npos);
  Dataset unnamed = stream();
  unnamed.feature_names.clear();
  EXPECT_NE(refused(unnamed, "a").find("no column names"), std::string::npos);
  one_hot_encode(unnamed, "all");
  EXPECT_EQ(unnamed.feature_names.front(), "x1=-1");
  Dataset wide;
  wide.name = "w";
  wide.n_samples = kMaxOneHotValues + 1;
  wide.n_features = 1;
  for (std::size_t t = 0; t < wide.n_samples; ++t) wide.x.push_back(static_cast<double>(t));
  wide.y.assign(wide.n_samples, 1.0);
  wide.feature_names = {"id"};
  EXPECT_NE(refused(wide, "all").find("w's column 'id' takes more than 256 values"), std::string::npos);
  wide.x.pop_back();
  wide.y.pop_back();
  wide.n_samples = kMaxOneHotValues;
  one_hot_encode(wide, "id");
  EXPECT_EQ(wide.n_features, kMaxOneHotValues);
  // An indicator named like another column ("a" = 1 beside a column "a=1"; found by the fuzzer)
  // would be read back as that column: refused, naming both.
  Dataset clash = stream();
  clash.feature_names = {"a", "a=1", "c"};
  EXPECT_NE(refused(clash, "a").find("column 'a' would have an indicator named 'a=1', the name of another column"),
            std::string::npos)
      << refused(clash, "a");
  EXPECT_NE(refused(clash, "all").find("'a=1'"), std::string::npos);
  one_hot_encode(clash, "c");  // no indicator of c is named like a column
  EXPECT_EQ(clash.feature_names, (std::vector<std::string>{"a", "a=1", "c=0", "c=1"}));
}

TEST(OneHotTest, AStreamIsEncodedAsTheModelsColumnsReadIt) {
  // one_hot_encode_like(): the indicators a model learned on, from a stream as written; a value
  // the model never saw sets none; plain names copy their column; the stream's own names, names
  // without an indicator, or a missing column leave it alone.
  Dataset data;
  data.name = "s";
  data.n_samples = 3;
  data.n_features = 2;
  data.x = {1, 0.5, -1, 0.25, 7, 0.75};
  data.y = {1, 1, -1};
  data.feature_names = {"a", "b"};
  const std::vector<std::string> model = {"a=-1", "a=1", "b"};
  Dataset encoded = data;
  ASSERT_TRUE(one_hot_encode_like(encoded, model));
  EXPECT_EQ(encoded.n_features, 3u);
  EXPECT_EQ(encoded.feature_names, model);
  EXPECT_EQ(encoded.x, (std::vector<double>{0, 1, 0.5, 1, 0, 0.25, 0, 0, 0.75}));
  // Learned and read back the same way: the training encoding's columns are reproduced.
  Dataset trained = data;
  trained.x = {1, 0.5, -1, 0.25, -1, 0.75};
  one_hot_encode(trained, "a");
  Dataset reread = trained;
  reread.x = data.x;
  reread.n_features = 2;
  reread.feature_names = {"a", "b"};
  reread.x = {1, 0.5, -1, 0.25, -1, 0.75};
  ASSERT_TRUE(one_hot_encode_like(reread, trained.feature_names));
  EXPECT_EQ(reread.x, trained.x);
  for (const std::vector<std::string>& names :
       {std::vector<std::string>{"a", "b"}, {"b", "a"}, {"a=1", "c"}, {"z=1", "b"}, std::vector<std::string>{}}) {
    Dataset same = data;
    EXPECT_FALSE(one_hot_encode_like(same, names));
    EXPECT_EQ(same.x, data.x);
  }
  Dataset unnamed = data;
  unnamed.feature_names.clear();
  ASSERT_TRUE(one_hot_encode_like(unnamed, {"x1=1", "x2"}));
  EXPECT_EQ(unnamed.x, (std::vector<double>{1, 0.5, 0, 0.25, 0, 0.75}));
}
