// Tests that the documents' lists are the code's: the environment table
// (util/environment.h) against the source that reads the variables, the
// defaults config_from_env() gives and README.md's Configuration table;
// the blocks gen-manifest writes into README.md (packages, from
// tools/lib/deps.sh) and docs/HACKING.md (threads); HACKING's layers table
// against the folders of src/, and its toolset rooms against the registry.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tools/doc_lists.h"
#include "toolsets/registry.h"
#include "util/config.h"
#include "util/environment.h"
#include "util/str_cat.h"
#include "source_tree.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kRegenerate =
    "the committed block differs from what its source makes; run `build/tools/gen-manifest "
    "write .` in the source directory and commit the result";

using cu::test::read_file;
using cu::test::read_source_file;
using cu::test::source_dir;

// The text of a Markdown section: from its "## title" line to the next
// "## " heading.
std::string section(const std::string& doc, const std::string& title) {
  const std::string head = "\n## " + title;
  size_t a = doc.find(head);
  INFO("no section \"## " << title << "\"");
  REQUIRE(a != std::string::npos);
  size_t b = doc.find("\n## ", a + head.size());
  return doc.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

// The cells of a Markdown table row "| a | b | c |", trimmed.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  size_t at = row.find('|');
  while (at != std::string::npos) {
    size_t next = row.find(" | ", at + 1);
    size_t end = next == std::string::npos ? row.rfind('|') : next + 1;
    if (end <= at) break;
    std::string cell = row.substr(at + 1, end - at - 1);
    while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
    while (!cell.empty() && cell.back() == ' ') cell.pop_back();
    out.push_back(cell);
    at = next == std::string::npos ? std::string::npos : next + 1;
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string first_difference(const std::string& committed, const std::string& generated) {
  return cu::test::first_difference(committed, generated, " of the block", "<end>");
}

// Every variable the source reads by name, with the files (under src/)
// that read it: getenv and config.cpp's readers, called with a literal.
std::map<std::string, std::set<std::string>> variables_read() {
  const std::regex read(
      R"((?:^|[^A-Za-z0-9_])(?:secure_getenv|getenv|env|read_seconds|read_seconds_ms|read_count)\("([A-Z][A-Z0-9_]*)\")");
  const fs::path src = fs::path(source_dir()) / "src";
  std::map<std::string, std::set<std::string>> out;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
    const std::string text = read_file(entry.path());
    const std::string rel = fs::relative(entry.path(), src).generic_string();
    for (std::sregex_iterator m(text.begin(), text.end(), read), end; m != end; ++m) {
      out[(*m)[1].str()].insert(rel);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every environment variable the source reads is a row of the environment table") {
  const auto read = variables_read();
  REQUIRE(read.size() > 20);  // The pattern still finds the readers.
  for (const auto& [name, files] : read) {
    INFO(name << " is read in src/" << *files.begin()
              << " but is no row of src/util/environment.cpp");
    CHECK(cu::find_env_var(name) != nullptr);
  }
}

TEST_CASE("every row of the environment table is read in the file it names") {
  const auto read = variables_read();
  for (const cu::env_var& v : cu::environment_variables()) {
    auto it = read.find(std::string(v.name));
    INFO(v.name << " is a row of the environment table, but src/" << v.read_in
                << " does not read it");
    CHECK((it != read.end() && it->second.count(std::string(v.read_in)) == 1));
  }
}

TEST_CASE("the environment table's names are unique and each meaning is one line") {
  std::set<std::string_view> seen;
  for (const cu::env_var& v : cu::environment_variables()) {
    INFO(v.name);
    CHECK(seen.insert(v.name).second);
    CHECK(!v.meaning.empty());
    CHECK(v.meaning.find('\n') == std::string_view::npos);
    CHECK((v.setting || !v.literal || !v.default_text.empty()));
  }
}

TEST_CASE("config_from_env gives the defaults the environment table states") {
  // The settings only: the session's PATH and HOME stay the test's.
  for (const cu::env_var& v : cu::environment_variables()) {
    if (v.setting) unsetenv(std::string(v.name).c_str());
  }
  const cu::config c = cu::config_from_env();
  auto text = [](std::string_view name) {
    const cu::env_var* v = cu::find_env_var(name);
    REQUIRE(v != nullptr);
    return std::string(v->default_text);
  };
  auto number = [&](std::string_view name) { return std::stod(text(name)); };
  CHECK(text("DISPLAY") == c.display);
  CHECK(text("CU_TOOLSETS") == c.toolsets);
  CHECK(text("CU_SAVE_DIR") == c.save_dir);
  CHECK(number("CU_IDLE_RELEASE_SECS") == c.idle_release_secs);
  CHECK(number("CU_SCREENSHOT_DELAY") == c.screenshot_delay_secs);
  CHECK(number("CU_SETTLE_QUIET_MS") == c.settle_quiet_ms);
  CHECK(text("CU_IMAGE_FORMAT") == "auto");
  CHECK(c.format == cu::image_format::automatic);
  CHECK(number("CU_MAX_RESULT_BYTES") == double(c.max_result_bytes));
  CHECK(number("CU_MAX_FRAME_BYTES") == double(c.max_frame_bytes));
  CHECK(number("CU_PACE_QUIET_MS") == c.pace_quiet_ms);
  CHECK(number("CU_PACE_TEXT_MS") == c.pace_text_ms);
  CHECK(number("CU_PACE_MAX_MS") == c.pace_max_ms);
  CHECK(number("CU_TYPE_DELAY_MS") == c.type_delay_ms);
  CHECK(text("CU_INPUT_GUARD") == (c.input_guard ? "1" : "0"));
  CHECK(text("CU_UINPUT") == c.uinput_path);
  CHECK(text("CU_TRACE_DIR") == "empty");
  CHECK(c.trace_dir.empty());
  CHECK(text("CU_TRACE_REDACT_TEXT") == (c.trace_redact_text ? "1" : "0"));
  CHECK(number("CU_TRACE_MAX_BYTES") == double(c.trace_max_bytes));
  CHECK(number("CU_TRACE_KEEP") == double(c.trace_keep));
  CHECK(text("CU_GRANTS") == c.grants);
  CHECK(text("CU_DENY_APPS") == "empty");
  CHECK(c.deny_apps.empty());
  CHECK(text("CU_GRANTS_DESKTOP") == c.grants_desktop);
  CHECK(text("CU_LOG_LEVEL") == "info");
  CHECK(c.level == cu::log_level::info);
}

TEST_CASE("a literal default applied outside config.cpp is a string of the source") {
  std::string all;
  const fs::path src = fs::path(source_dir()) / "src";
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (entry.is_regular_file() && entry.path().extension() == ".cpp") {
      all += read_file(entry.path());
    }
  }
  for (const cu::env_var& v : cu::environment_variables()) {
    if (!v.literal || v.read_in == "util/config.cpp" ||
        v.default_text.find('$') != std::string_view::npos) {
      continue;
    }
    INFO(v.name << "'s default \"" << v.default_text << "\" is no string under src/");
    CHECK(all.find(cu::str_cat("\"", v.default_text, "\"")) != std::string::npos);
  }
}

TEST_CASE(
    "README's Configuration table lists the environment table's settings, with their defaults") {
  const std::string text = section(read_source_file("README.md"), "Configuration");
  std::vector<std::pair<std::string, std::string>> rows;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("| `", 0) != 0) continue;
    auto c = cells(line);
    REQUIRE(c.size() >= 3);
    std::string name = c[0];
    name.erase(std::remove(name.begin(), name.end(), '`'), name.end());
    rows.emplace_back(name, c[1]);
  }
  std::vector<std::pair<std::string, std::string>> expected;
  for (const cu::env_var& v : cu::environment_variables()) {
    if (!v.setting) continue;
    expected.emplace_back(std::string(v.name), v.literal ? cu::str_cat("`", v.default_text, "`")
                                                         : std::string(v.default_text));
  }
  INFO(
      "README.md's Configuration table must list src/util/environment.cpp's settings in its "
      "order, each default as the table writes it (a value as code)");
  for (size_t i = 0; i < std::max(rows.size(), expected.size()); ++i) {
    const std::string have = i < rows.size() ? rows[i].first + " | " + rows[i].second : "<none>";
    const std::string want =
        i < expected.size() ? expected[i].first + " | " + expected[i].second : "<none>";
    INFO("row " << i + 1);
    CHECK(have == want);
  }
  for (const cu::env_var& v : cu::environment_variables()) {
    if (v.setting) continue;
    INFO("the session's variable " << v.name << " is not named in README.md's Configuration");
    CHECK(text.find(cu::str_cat("`", v.name, "`")) != std::string::npos);
  }
}

TEST_CASE("README's package lists are tools/lib/deps.sh's") {
  auto generated = cu::docs::packages_block(read_source_file("tools/lib/deps.sh"));
  if (!generated) FAIL("tools/lib/deps.sh: " << generated.err().message);
  auto committed = cu::docs::block_of(read_source_file("README.md"), "packages");
  if (!committed) FAIL("README.md: " << committed.err().message);
  INFO(kRegenerate);
  INFO(first_difference(*committed, *generated));
  const bool same = *committed == *generated;
  CHECK(same);
}

TEST_CASE("HACKING's thread table is the thread table in the code") {
  auto committed = cu::docs::block_of(read_source_file("docs/HACKING.md"), "threads");
  if (!committed) FAIL("docs/HACKING.md: " << committed.err().message);
  const std::string generated = cu::docs::threads_block();
  INFO(kRegenerate);
  INFO(first_difference(*committed, generated));
  const bool same = *committed == generated;
  CHECK(same);
}

TEST_CASE("HACKING's layers table lists every folder of src/ and every toolset room") {
  const std::string text = section(read_source_file("docs/HACKING.md"), "Layers");
  std::set<std::string> listed;
  std::string toolsets_row;
  for (const std::string& line : lines_of(text)) {
    auto c = cells(line);
    if (c.size() < 3 || c[1].size() < 3 || c[1].front() != '`') continue;
    std::string folder = c[1].substr(1, c[1].size() - 2);
    listed.insert(folder);
    if (folder == "toolsets/") toolsets_row = c[2];
  }
  const fs::path src = fs::path(source_dir()) / "src";
  std::set<std::string> on_disk = {"main.cpp"};
  std::set<std::string> rooms;
  for (const auto& entry : fs::directory_iterator(src)) {
    if (entry.is_directory()) on_disk.insert(entry.path().filename().string() + "/");
  }
  for (const auto& entry : fs::directory_iterator(src / "toolsets")) {
    if (entry.is_directory()) rooms.insert(entry.path().filename().string());
  }
  INFO("docs/HACKING.md's Layers table and the folders of src/ differ");
  CHECK(listed == on_disk);
  std::set<std::string> registered;
  for (const cu::toolset_def& t : cu::all_toolsets()) registered.insert(std::string(t.name));
  INFO("the folders of src/toolsets/ are not the registry's toolsets");
  CHECK(rooms == registered);
  for (const std::string& room : rooms) {
    INFO("the toolsets/ row of HACKING's Layers table does not name the room `" << room << "/`");
    CHECK(toolsets_row.find(cu::str_cat("`", room, "/`")) != std::string::npos);
  }
}

TEST_CASE("HACKING's toolset rooms section names every toolset") {
  const std::string text =
      section(read_source_file("docs/HACKING.md"), "Toolset rooms, and what a new tool takes");
  for (const cu::toolset_def& t : cu::all_toolsets()) {
    INFO("docs/HACKING.md's Toolset rooms section does not name `" << t.name << "`");
    CHECK(text.find(cu::str_cat("`", t.name, "`")) != std::string::npos);
  }
}
