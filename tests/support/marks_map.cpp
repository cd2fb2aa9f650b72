#include "support/marks_map.h"

#include <unistd.h>

#include <catch2/catch.hpp>

namespace cu::test {

const std::map<std::string, std::string> kMarksOn = {{"CU_TOOLSETS", "marks"}};

namespace {

std::string text_at(simdjson::dom::element e, const char* key) {
  std::string_view v;
  if (e[key].get(v) != simdjson::SUCCESS) return {};
  return std::string(v);
}

// One line per mark, for a failure's message.
std::string listed(const std::vector<map_mark>& marks) {
  std::string out;
  for (const map_mark& m : marks) {
    out += std::to_string(m.n) + " " + m.role + " \"" + m.name + "\" " + m.source + "\n";
  }
  return out;
}

}  // namespace

std::vector<map_mark> marks_of(const json_line& r) {
  INFO(r.text.substr(0, 600));
  simdjson::dom::array a;
  REQUIRE(r.root["result"]["structuredContent"]["marks"].get(a) == simdjson::SUCCESS);
  std::vector<map_mark> out;
  for (simdjson::dom::element m : a) {
    map_mark k;
    REQUIRE(m["n"].get(k.n) == simdjson::SUCCESS);
    k.role = text_at(m, "role");
    k.name = text_at(m, "name");
    k.source = text_at(m, "source");
    simdjson::dom::array box;
    REQUIRE(m["box"].get(box) == simdjson::SUCCESS);
    std::vector<int64_t> v;
    for (simdjson::dom::element e : box) v.push_back(int64_t(e.get_int64().value()));
    REQUIRE(v.size() == 4);
    k.x = v[0];
    k.y = v[1];
    k.w = v[2];
    k.h = v[3];
    out.push_back(k);
  }
  return out;
}

bool holds(const map_mark& m, int64_t x, int64_t y) {
  return x >= m.x && x < m.x + m.w && y >= m.y && y < m.y + m.h;
}

int64_t mark_of(const std::vector<map_mark>& marks, std::string_view role, std::string_view name) {
  INFO(listed(marks));
  INFO(role << " \"" << name << "\"");
  for (const map_mark& m : marks) {
    if (m.role == role && m.name == name) return m.n;
  }
  FAIL("no such mark");
  return 0;
}

bool tesseract_installed() {
  return access("/usr/lib/x86_64-linux-gnu/libtesseract.so.5", R_OK) == 0;
}

}  // namespace cu::test
