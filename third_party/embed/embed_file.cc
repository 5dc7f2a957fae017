// embed_file IN SYMBOL OUT_CC OUT_H: writes IN's bytes as `dflow::SYMBOL`.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: embed_file IN SYMBOL OUT_CC OUT_H\n");
    return 1;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "embed_file: cannot read %s\n", argv[1]);
    return 1;
  }
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  const std::string symbol = argv[2];
  std::FILE* cc = std::fopen(argv[3], "w");
  std::FILE* h = std::fopen(argv[4], "w");
  if (cc == nullptr || h == nullptr) return 1;
  std::fprintf(h,
               "#pragma once\n#include \"absl/strings/string_view.h\"\n"
               "namespace dflow {\nextern const absl::string_view %s;\n}\n",
               symbol.c_str());
  std::fprintf(cc, "#include \"absl/strings/string_view.h\"\nnamespace dflow {\n");
  std::fprintf(cc, "static const unsigned char %s_data[] = {\n", symbol.c_str());
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::fprintf(cc, "%u,%s", bytes[i], (i % 32 == 31) ? "\n" : "");
  }
  std::fprintf(cc, "0};\nextern const absl::string_view %s(\n"
               "    reinterpret_cast<const char*>(%s_data), %zu);\n}\n",
               symbol.c_str(), symbol.c_str(), bytes.size());
  std::fclose(cc);
  std::fclose(h);
  return 0;
}
