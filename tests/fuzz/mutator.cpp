// libFuzzer's custom mutator and cross-over for the server's input: a stream
// of lines. Half the time it edits whole lines with the grammar (insert,
// replace, drop, duplicate, reorder; edit one message as a JSON tree, with
// the tool schemas when it is a call; wrap messages into a batch array;
// cancel an id the input uses; change the line ends); otherwise it leaves
// the bytes to LLVMFuzzerMutate (byte flips, the dictionary, ...), on the
// whole input or on one line.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "grammar.h"
#include "json_tree.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace cu_fuzz {

grammar& the_grammar() {
  static grammar g;
  return g;
}

namespace {

size_t pick(rng& r, size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(r); }
bool chance(rng& r, double p) { return std::uniform_real_distribution<double>(0, 1)(r) < p; }

// Lines with their ends ("\n", "\r\n" or none for the last).
std::vector<std::string> split_lines(const uint8_t* data, size_t size) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      out.emplace_back(reinterpret_cast<const char*>(data) + start, i + 1 - start);
      start = i + 1;
    }
  }
  if (start < size) out.emplace_back(reinterpret_cast<const char*>(data) + start, size - start);
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l;
  return out;
}

// A line's text and its end, apart.
std::pair<std::string, std::string> cut_end(const std::string& line) {
  size_t n = line.size();
  if (n >= 2 && line.compare(n - 2, 2, "\r\n") == 0) return {line.substr(0, n - 2), "\r\n"};
  if (n >= 1 && line[n - 1] == '\n') return {line.substr(0, n - 1), "\n"};
  return {line, ""};
}

std::string line_end(rng& r) {
  size_t c = pick(r, 100);
  return c < 92 ? "\n" : c < 98 ? "\r\n" : "";
}

// Byte mutations confined to one line.
std::string mutate_bytes(const std::string& s, size_t room) {
  std::vector<uint8_t> buf(s.begin(), s.end());
  size_t cap = s.size() + std::min<size_t>(room, 256);
  buf.resize(std::max<size_t>(cap, 1));
  size_t n = LLVMFuzzerMutate(buf.data(), s.size(), cap);
  return std::string(reinterpret_cast<const char*>(buf.data()), n);
}

const char* kVersion2025_03_26 = "2025-03-26";

bool has_batch_init(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) {
    if (l.find("\"initialize\"") != std::string::npos &&
        l.find(kVersion2025_03_26) != std::string::npos) {
      return true;
    }
  }
  return false;
}

void ensure_batch_init(rng& r, std::vector<std::string>& lines) {
  if (has_batch_init(lines)) return;
  std::vector<std::string> head{grammar::initialize_line(kVersion2025_03_26, 0) + "\n"};
  if (chance(r, 0.5)) head.push_back("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
  lines.insert(lines.begin(), head.begin(), head.end());
}

// Finds a string member's plain value (keys and values without escapes).
std::string string_member(const jvalue& o, std::string_view key) {
  const jvalue* v = o.k == jvalue::kind::object ? o.get(key) : nullptr;
  return v != nullptr && v->k == jvalue::kind::string ? v->text : std::string();
}

// Edits a call ({"name": tool, "arguments": {...}}: tools/call params or a
// batch action) with the tool's schema.
void edit_call(rng& r, grammar& g, jvalue& call, size_t budget) {
  const tool_schema* t = g.find(string_member(call, "name"));
  if (t == nullptr) t = &g.random_tool(r);
  jvalue* args = call.get("arguments");
  size_t c = pick(r, 100);
  if (args == nullptr || args->k != jvalue::kind::object || c < 25) {
    jvalue fresh = g.arguments(r, *t, budget);
    if (args != nullptr) {
      *args = std::move(fresh);
    } else {
      call.set("arguments", std::move(fresh));
    }
    return;
  }
  if (c < 80 && !t->props.empty()) {
    // One argument: a new value (right or wrong type), or gone.
    const prop_schema& p = t->props[pick(r, t->props.size())];
    jvalue* v = args->get(p.name);
    if (v != nullptr && chance(r, 0.2)) {
      std::string k = escape(p.name);
      for (size_t i = 0; i < args->keys.size(); ++i) {
        if (args->keys[i] == k) {
          args->keys.erase(args->keys.begin() + long(i));
          args->kids.erase(args->kids.begin() + long(i));
          break;
        }
      }
      return;
    }
    jvalue nv = g.prop_value(r, p, budget);
    if (v != nullptr) {
      *v = std::move(nv);
    } else {
      args->set(p.name, std::move(nv));
    }
    return;
  }
  if (c < 90) {
    // Another tool with the same arguments.
    jvalue* name = call.get("name");
    if (name != nullptr) *name = jvalue::string(g.random_tool(r).name);
    return;
  }
  jvalue* meta = call.get("_meta");
  jvalue m = jvalue::object();
  m.set("progressToken", g.id(r));
  if (meta != nullptr) {
    *meta = std::move(m);
  } else {
    call.set("_meta", std::move(m));
  }
}

// Any node: another value, or for a container one child fewer, doubled or added.
void edit_node(rng& r, grammar& g, jvalue& n, size_t budget) {
  bool container = n.k == jvalue::kind::array || n.k == jvalue::kind::object;
  size_t c = pick(r, 100);
  if (container && !n.kids.empty() && c < 20) {
    size_t i = pick(r, n.kids.size());
    n.kids.erase(n.kids.begin() + long(i));
    if (n.k == jvalue::kind::object) n.keys.erase(n.keys.begin() + long(i));
    return;
  }
  if (container && !n.kids.empty() && c < 35) {
    size_t i = pick(r, n.kids.size());
    n.kids.push_back(n.kids[i]);
    if (n.k == jvalue::kind::object) n.keys.push_back(n.keys[i]);
    return;
  }
  if (container && c < 50) {
    n.kids.push_back(g.any_value(r, budget, 1));
    if (n.k == jvalue::kind::object) n.keys.push_back(g.string_value(r, "", 64).text);
    return;
  }
  switch (pick(r, 4)) {
    case 0: n = g.any_value(r, budget); break;
    case 1: n = g.id(r); break;
    case 2: n = g.wrong_value(r, n.k == jvalue::kind::string ? "string" : "", budget); break;
    default: n = g.string_value(r, "", budget); break;
  }
}

// A JSON edit of one line; false when it is not JSON simdjson reads.
bool edit_tree(rng& r, grammar& g, std::string& text, size_t budget) {
  auto root = parse(text);
  if (!root) return false;
  std::vector<jvalue*> nodes;
  collect(*root, nodes);
  std::vector<jvalue*> calls;
  for (jvalue* n : nodes) {
    if (n->k == jvalue::kind::object && g.find(string_member(*n, "name")) != nullptr) {
      calls.push_back(n);
    }
  }
  size_t c = pick(r, 100);
  if (!calls.empty() && c < 55) {
    edit_call(r, g, *calls[pick(r, calls.size())], budget);
  } else if (root->k == jvalue::kind::object && c < 65) {
    jvalue* id = root->get("id");
    if (id != nullptr) {
      *id = g.id(r);
    } else {
      root->set("id", g.id(r));
    }
  } else {
    edit_node(r, g, *nodes[pick(r, nodes.size())], budget);
  }
  text = write(*root);
  return true;
}

// The ids the input's requests use, as JSON text.
std::vector<std::string> ids_in(const std::vector<std::string>& lines) {
  std::vector<std::string> ids;
  for (const std::string& l : lines) {
    auto root = parse(cut_end(l).first);
    if (!root) continue;
    std::vector<jvalue*> nodes;
    collect(*root, nodes);
    for (jvalue* n : nodes) {
      if (n->k != jvalue::kind::object) continue;
      if (const jvalue* id = n->get("id")) ids.push_back(write(*id));
    }
  }
  return ids;
}

size_t mutate(rng& r, uint8_t* data, size_t size, size_t max_size) {
  grammar& g = the_grammar();
  std::vector<std::string> lines = split_lines(data, size);
  size_t room = max_size > size ? max_size - size : 0;
  size_t budget = std::min<size_t>(std::max<size_t>(room, 64), 16384);
  if (chance(r, 0.1)) budget = std::max<size_t>(room, 64);  // Now and then a big one.
  size_t op = pick(r, 100);
  if (lines.empty()) op = 0;
  auto random_line = [&] { return pick(r, lines.size()); };
  if (op < 18) {  // Insert a new line (often at the end).
    size_t at = chance(r, 0.5) ? lines.size() : pick(r, lines.size() + 1);
    if (at == lines.size() && !lines.empty() && cut_end(lines.back()).second.empty()) {
      lines.back() += "\n";
    }
    lines.insert(lines.begin() + long(at), g.line(r, budget) + line_end(r));
  } else if (op < 28) {  // Replace a line.
    size_t i = random_line();
    lines[i] = g.line(r, budget) + cut_end(lines[i]).second;
  } else if (op < 33) {  // Drop a line.
    lines.erase(lines.begin() + long(random_line()));
  } else if (op < 38) {  // Duplicate a line.
    size_t i = random_line();
    lines.insert(lines.begin() + long(pick(r, lines.size() + 1)), lines[i]);
  } else if (op < 41) {  // Swap two lines.
    std::swap(lines[random_line()], lines[random_line()]);
  } else if (op < 66) {  // Edit one message as a tree (with the schemas for calls).
    size_t i = random_line();
    auto [text, end] = cut_end(lines[i]);
    if (!edit_tree(r, g, text, budget)) text = mutate_bytes(text, room);
    lines[i] = text + end;
  } else if (op < 76) {  // Byte mutations within one line.
    size_t i = random_line();
    auto [text, end] = cut_end(lines[i]);
    lines[i] = mutate_bytes(text, room) + end;
  } else if (op < 81) {  // Cancel an id the input uses.
    auto ids = ids_in(lines);
    std::string id = ids.empty() ? write(g.id(r)) : ids[pick(r, ids.size())];
    std::string cancel = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                         "\"params\":{\"requestId\":" + id + ",\"reason\":\"fuzz\"}}\n";
    lines.insert(lines.begin() + long(1 + pick(r, lines.size())), cancel);
  } else if (op < 86) {  // Wrap a run of lines into a batch array.
    size_t a = random_line();
    size_t b = std::min(lines.size(), a + 1 + pick(r, 4));
    std::string arr = "[";
    for (size_t i = a; i < b; ++i) {
      if (i > a) arr += ',';
      arr += cut_end(lines[i]).first;
    }
    arr += "]\n";
    lines.erase(lines.begin() + long(a), lines.begin() + long(b));
    lines.insert(lines.begin() + long(a), arr);
    if (chance(r, 0.85)) ensure_batch_init(r, lines);
  } else if (op < 90) {  // An initialize first (2025-03-26 takes batch arrays).
    static constexpr const char* kV[] = {"2025-03-26", "2024-11-05", "2025-06-18", "2025-11-25"};
    lines.insert(lines.begin(),
                 grammar::initialize_line(kV[chance(r, 0.6) ? 0 : pick(r, 4)], 0) + "\n");
  } else {  // Line ends: CRLF, blank lines, no final newline, joined or split lines.
    size_t i = random_line();
    auto [text, end] = cut_end(lines[i]);
    switch (pick(r, 6)) {
      case 0: lines[i] = text + (end == "\r\n" ? "\n" : "\r\n"); break;
      case 1: {
        static constexpr const char* kBlank[] = {"\n", "\r\n", "   \n", "\t\n", "\r\n\r\n"};
        lines.insert(lines.begin() + long(i), kBlank[pick(r, 5)]);
        break;
      }
      case 2: lines.back() = cut_end(lines.back()).first; break;
      case 3:
        if (i + 1 < lines.size()) {
          lines[i] = text + lines[i + 1];
          lines.erase(lines.begin() + long(i + 1));
        }
        break;
      case 4:
        if (!text.empty()) {
          size_t at = pick(r, text.size());
          lines[i] = text.substr(0, at) + "\n" + text.substr(at) + end;
        }
        break;
      default: lines[i] = text + "\r" + end; break;
    }
  }
  std::string out = join(lines);
  if (out.size() > max_size || (out.size() == size && memcmp(out.data(), data, size) == 0)) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace
}  // namespace cu_fuzz

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  cu_fuzz::rng r(seed);
  if (size > 0 && cu_fuzz::chance(r, 0.4)) return LLVMFuzzerMutate(data, size, max_size);
  return cu_fuzz::mutate(r, data, size, max_size);
}

// Cross-over by lines: a run of the second input's lines spliced into the
// first at a line boundary.
extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,
                                            const uint8_t* data2, size_t size2, uint8_t* out,
                                            size_t max_out_size, unsigned int seed) {
  using namespace cu_fuzz;
  rng r(seed);
  std::vector<std::string> a = split_lines(data1, size1);
  std::vector<std::string> b = split_lines(data2, size2);
  size_t at = pick(r, a.size() + 1);
  size_t from = pick(r, b.size() + 1);
  size_t to = std::min(b.size(), from + 1 + pick(r, 8));
  if (at > 0 && cut_end(a[at - 1]).second.empty()) a[at - 1] += "\n";
  std::vector<std::string> mid(b.begin() + long(from), b.begin() + long(to));
  if (!mid.empty() && at < a.size() && cut_end(mid.back()).second.empty()) mid.back() += "\n";
  if (chance(r, 0.3)) a.erase(a.begin() + long(at), a.begin() + long(std::min(a.size(), at + mid.size())));
  a.insert(a.begin() + long(std::min(at, a.size())), mid.begin(), mid.end());
  std::string joined = join(a);
  if (joined.size() > max_out_size) joined.resize(max_out_size);
  memcpy(out, joined.data(), joined.size());
  return joined.size();
}
