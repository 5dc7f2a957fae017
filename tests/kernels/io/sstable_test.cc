#include "kernels/io/sstable.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "kernels/io/coding.h"
#include "kernels/io/crc32c.h"

namespace dflow {
namespace {

TEST_CASE("crc32c matches the standard check value and masks reversibly") {
  CHECK(crc32c::Value("123456789", 9) == 0xe3069283u);
  CHECK(crc32c::Value("", 0) == 0u);
  // Extending in pieces equals one pass (covers the 8-byte and tail paths).
  const std::string text = "The quick brown fox jumps over the lazy dog, twice over.";
  CHECK(crc32c::Extend(crc32c::Value(text.data(), 13), text.data() + 13, text.size() - 13) ==
        crc32c::Value(text));
  for (uint32_t crc : {0u, 1u, 0xe3069283u, 0xffffffffu}) {
    CHECK(crc32c::Unmask(crc32c::Mask(crc)) == crc);
    CHECK(crc32c::Mask(crc) != crc);
  }
  // TF's mask: rotate right by 15, add 0xa282ead8.
  CHECK(crc32c::Mask(0) == 0xa282ead8u);
  CHECK(crc32c::Mask(1) == (0x00020000u + 0xa282ead8u));
}

TEST_CASE("varints round trip and reject truncation") {
  std::string buf;
  for (uint64_t v : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{300},
                     uint64_t{1} << 40, ~uint64_t{0}}) {
    buf.clear();
    coding::PutVarint64(&buf, v);
    absl::string_view in = buf;
    uint64_t got = 0;
    REQUIRE(coding::GetVarint64(&in, &got));
    CHECK(got == v);
    CHECK(in.empty());
    absl::string_view truncated(buf.data(), buf.size() - 1);
    CHECK_FALSE(coding::GetVarint64(&truncated, &got));
  }
}

SSTableEntries ManyEntries(int n) {
  SSTableEntries entries;
  for (int i = 0; i < n; ++i) {
    // Shared prefixes exercise the key compression; zero padding keeps them sorted.
    entries.emplace_back(absl::StrCat("layer/", 10000 + i, "/weights"),
                         std::string(static_cast<size_t>(i % 7), static_cast<char>('a' + i % 26)));
  }
  return entries;
}

TEST_CASE("a table round trips through one block and through many") {
  for (size_t block_size : {size_t{64}, size_t{256 * 1024}}) {
    const SSTableEntries entries = ManyEntries(500);
    const std::string file = BuildSSTable(entries, block_size);
    absl::StatusOr<SSTableEntries> read = ReadSSTable(file, "t.index");
    INFO(read.status().ToString());
    REQUIRE(read.ok());
    CHECK(*read == entries);
  }
  // The empty table too, and the header-only key "".
  absl::StatusOr<SSTableEntries> empty = ReadSSTable(BuildSSTable({}), "e.index");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  const SSTableEntries header_only = {{"", "h"}};
  CHECK(*ReadSSTable(BuildSSTable(header_only), "h.index") == header_only);
}

TEST_CASE("the footer ends with LevelDB's magic number") {
  const std::string file = BuildSSTable(ManyEntries(3));
  CHECK(coding::DecodeFixed64(file.data() + file.size() - 8) == 0xdb4775248b80fb57ull);
}

TEST_CASE("corrupt tables are DATA_LOSS naming the file") {
  const std::string file = BuildSSTable(ManyEntries(50));
  std::string flipped = file;
  flipped[10] ^= 0x01;  // inside the first data block
  absl::Status status = ReadSSTable(flipped, "/ckpt/x.index").status();
  CHECK(status.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(std::string(status.message()), Catch::Contains("/ckpt/x.index"));
  CHECK_THAT(std::string(status.message()), Catch::Contains("checksum"));

  status = ReadSSTable(file.substr(0, file.size() - 20), "/ckpt/x.index").status();
  CHECK(status.code() == absl::StatusCode::kDataLoss);
  CHECK_THAT(std::string(status.message()), Catch::Contains("truncated"));
  CHECK(ReadSSTable("", "e").status().code() == absl::StatusCode::kDataLoss);
}

TEST_CASE("snappy-compressed blocks are UNIMPLEMENTED") {
  const SSTableEntries entries = {{"a", "1"}};
  std::string file = BuildSSTable(entries);
  // The first block (the data block) starts at 0; its trailer follows its contents.
  // Rewrite its type to snappy (1) with a valid checksum, so only the type is at fault.
  absl::string_view footer(file.data() + file.size() - 48, 40);
  uint64_t meta_offset = 0, meta_size = 0;
  REQUIRE(coding::GetVarint64(&footer, &meta_offset));
  REQUIRE(coding::GetVarint64(&footer, &meta_size));
  absl::string_view index_handle = footer;
  uint64_t index_offset = 0, index_size = 0;
  REQUIRE(coding::GetVarint64(&index_handle, &index_offset));
  REQUIRE(coding::GetVarint64(&index_handle, &index_size));
  const size_t data_size = static_cast<size_t>(meta_offset) - 5;
  file[data_size] = 1;
  std::string crc;
  coding::PutFixed32(&crc, crc32c::Mask(crc32c::Value(file.data(), data_size + 1)));
  file.replace(data_size + 1, 4, crc);
  absl::Status status = ReadSSTable(file, "s.index").status();
  CHECK(status.code() == absl::StatusCode::kUnimplemented);
  CHECK_THAT(std::string(status.message()), Catch::Contains("snappy"));
}

}  // namespace
}  // namespace dflow
