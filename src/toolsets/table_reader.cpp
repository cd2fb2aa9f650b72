#include "toolsets/table_reader.h"

#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>

#include "core/json_writer.h"
#include "toolsets/tables.h"
#include "util/str_cat.h"

namespace cu {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// What a table entry of "extends" says: properties a toolset adds to other
// tools' schemas, at the object reached by `at` from the schema's root.
struct extension_source {
  toolset by;
  std::string_view doc;
  std::vector<std::string_view> tools;
  bool output = false;
  std::vector<std::string_view> at;
  element properties;  // An object.
  element required;    // An array, when has_required.
  bool has_required = false;
  // Names the object's own "required" loses: a property the toolset makes
  // optional because it adds another way to say the same (the marks
  // toolset's `mark` in place of `coordinate`).
  std::vector<std::string_view> unrequire;
  bool first = false;  // Its properties go before the object's own.
};

struct tool_source {
  element input;
  element output;
  bool has_output = false;
};

struct registry_data {
  std::vector<std::unique_ptr<simdjson::dom::parser>> parsers;
  object defs;
  std::deque<std::string> texts;
  std::deque<std::vector<tool_def>> tools;
  std::deque<std::vector<tool_source>> sources;
  std::vector<toolset_def> sets;
  std::vector<extension_source> extensions;
  std::map<const tool_def*, const tool_source*> source_of;
};


// A table the build embedded is wrong: a defect of this source tree, which
// the unit tests catch; the server cannot run without its tools.
[[noreturn]] void bad_table(std::string_view what) {
  std::fprintf(stderr, "computer-use-mcp: the tool tables are inconsistent: %.*s\n",
               int(what.size()), what.data());
  std::abort();
}

std::string_view text_at(object o, std::string_view key) {
  std::string_view v;
  return o[key].get(v) == simdjson::SUCCESS ? v : std::string_view();
}

// Writes schemas from the tables: {"$def": name, ...} becomes the fragment
// with the other keys put over it, {"$computed": "step_names"} the names a
// batch step may take, and each extension of a toolset that is on adds its
// properties where it says.
class schema_writer {
 public:
  schema_writer(const registry_data& r, json_writer& w, toolset_mask on, std::string_view tool,
                bool output)
      : r_(r), w_(w), on_(on), tool_(tool), output_(output) {}

  void value(element e) {
    switch (e.type()) {
      case simdjson::dom::element_type::OBJECT: object_value(e.get_object().value()); break;
      case simdjson::dom::element_type::ARRAY: {
        array items = e.get_array().value();
        w_.begin_array();
        for (element item : items) value(item);
        w_.end_array();
        break;
      }
      case simdjson::dom::element_type::STRING: w_.string(e.get_string().value()); break;
      case simdjson::dom::element_type::INT64: w_.number(e.get_int64().value()); break;
      case simdjson::dom::element_type::UINT64: w_.number(int64_t(e.get_uint64().value())); break;
      case simdjson::dom::element_type::DOUBLE: w_.number(e.get_double().value()); break;
      case simdjson::dom::element_type::BOOL: w_.boolean(e.get_bool().value()); break;
      case simdjson::dom::element_type::NULL_VALUE: w_.null(); break;
    }
  }

 private:
  void object_value(object o) {
    std::string_view computed = text_at(o, "$computed");
    if (!computed.empty()) return computed_value(computed);
    std::string_view def = text_at(o, "$def");
    object base;
    if (!def.empty() && r_.defs[def].get(base) != simdjson::SUCCESS) {
      bad_table(str_cat("no fragment named ", def));
    }
    w_.begin_object();
    if (!def.empty()) {
      for (auto field : base) {
        element over;
        member(field.key, o[field.key].get(over) == simdjson::SUCCESS ? over : field.value);
      }
    }
    for (auto field : o) {
      if (field.key == "$def" || (!def.empty() && base[field.key].error() == simdjson::SUCCESS)) {
        continue;
      }
      member(field.key, field.value);
    }
    w_.end_object();
  }

  void member(std::string_view key, element v) {
    // A "required" every name of which an extension made optional is left
    // out: an empty list says nothing, and older validators refuse it.
    if (key == "required" && all_unrequired(v)) return;
    w_.key(key);
    path_.push_back(key);
    if (key == "properties" || key == "required") {
      extended(key, v);
    } else {
      value(v);
    }
    path_.pop_back();
  }

  // An object's "properties" or "required", with what extensions add.
  void extended(std::string_view key, element v) {
    const bool props = key == "properties";
    props ? w_.begin_object() : w_.begin_array();
    if (props) added(true);
    if (props) {
      object fields = v.get_object().value();
      for (auto field : fields) member(field.key, field.value);
    } else {
      array items = v.get_array().value();
      for (element item : items) {
        std::string_view name;
        if (item.get(name) == simdjson::SUCCESS && unrequired(name)) continue;
        value(item);
      }
    }
    if (props) {
      added(false);
    } else {
      for (const extension_source& x : r_.extensions) {
        if (!applies(x) || !x.has_required) continue;
        array items = x.required.get_array().value();
        for (element item : items) value(item);
      }
    }
    props ? w_.end_object() : w_.end_array();
  }

  // The properties extensions add here, those placed first or the others.
  void added(bool first) {
    for (const extension_source& x : r_.extensions) {
      if (!applies(x) || x.first != first) continue;
      object fields = x.properties.get_object().value();
      for (auto field : fields) member(field.key, field.value);
    }
  }

  // Whether the object's own required names are all made optional here,
  // and no extension adds one.
  bool all_unrequired(element v) {
    path_.push_back("required");
    bool all = true;
    for (const extension_source& x : r_.extensions) {
      if (applies(x) && x.has_required) all = false;
    }
    array items;
    if (all && v.get(items) == simdjson::SUCCESS) {
      for (element item : items) {
        std::string_view name;
        if (item.get(name) != simdjson::SUCCESS || !unrequired(name)) all = false;
      }
    }
    path_.pop_back();
    return all;
  }

  // Whether an extension that applies here makes name optional.
  bool unrequired(std::string_view name) const {
    for (const extension_source& x : r_.extensions) {
      if (!applies(x)) continue;
      for (std::string_view n : x.unrequire) {
        if (n == name) return true;
      }
    }
    return false;
  }

  // Whether x extends the object whose member is being written.
  bool applies(const extension_source& x) const {
    if (!has(on_, x.by) || x.output != output_ || path_.size() != x.at.size() + 1) return false;
    for (size_t i = 0; i < x.at.size(); ++i) {
      if (path_[i] != x.at[i]) return false;
    }
    for (std::string_view t : x.tools) {
      if (t == tool_) return true;
    }
    return false;
  }

  void computed_value(std::string_view what) {
    if (what != "step_names") bad_table(str_cat("no computed value named ", what));
    // Every tool that is on but computer_batch itself, in tools/list order.
    w_.begin_array();
    for (const toolset_def& set : r_.sets) {
      if (!has(on_ | kDefaultToolsets, set.id)) continue;
      for (const tool_def& t : set.tools) {
        if (t.name != "computer_batch") w_.string(t.name);
      }
    }
    w_.end_array();
  }

  const registry_data& r_;
  json_writer& w_;
  toolset_mask on_;
  std::string_view tool_;
  bool output_;
  std::vector<std::string_view> path_;
};

std::string write_schema(const registry_data& r, element schema, toolset_mask on,
                         std::string_view tool, bool output) {
  std::string out;
  json_writer w(out);
  schema_writer(r, w, on, tool, output).value(schema);
  return out;
}

executor executor_of_binding(const toolset_room& room, std::string_view name,
                             const tool_binding** found) {
  for (const tool_binding& b : room.bindings) {
    if (b.name == name) {
      *found = &b;
      return b.runs_on;
    }
  }
  bad_table(str_cat("the tool ", name, " has no handler in its room"));
}

object parse_table(registry_data& r, std::string_view text, std::string_view what) {
  r.parsers.push_back(std::make_unique<simdjson::dom::parser>());
  object o;
  if (r.parsers.back()->parse(text.data(), text.size()).get(o) != simdjson::SUCCESS) {
    bad_table(str_cat(what, " is not a JSON object"));
  }
  return o;
}

void read_extensions(registry_data& r, toolset by, object table) {
  array extends;
  if (table["extends"].get(extends) != simdjson::SUCCESS) return;
  for (element e : extends) {
    object o = e.get_object().value();
    extension_source x;
    x.by = by;
    x.doc = text_at(o, "doc");
    array tools = o["tools"].get_array().value();
    for (element t : tools) x.tools.push_back(t.get_string().value());
    x.output = text_at(o, "schema") == "output";
    array at;
    if (o["at"].get(at) == simdjson::SUCCESS) {
      for (element step : at) x.at.push_back(step.get_string().value());
    }
    if (o["properties"].get(x.properties) != simdjson::SUCCESS) {
      bad_table("an extension without properties");
    }
    x.has_required = o["required"].get(x.required) == simdjson::SUCCESS;
    array unrequire;
    if (o["unrequire"].get(unrequire) == simdjson::SUCCESS) {
      for (element n : unrequire) x.unrequire.push_back(n.get_string().value());
    }
    bool first = false;
    x.first = o["first"].get(first) == simdjson::SUCCESS && first;
    r.extensions.push_back(std::move(x));
  }
}

// Whether an input schema's properties take a point or a region of the
// screenshot's image (the `coordinate` and `image_region` fragments).
bool takes_image_coordinates(element input) {
  object props;
  if (input["properties"].get(props) != simdjson::SUCCESS) return false;
  for (auto field : props) {
    object p;
    if (field.value.get(p) != simdjson::SUCCESS) continue;
    std::string_view def = text_at(p, "$def");
    if (def == "coordinate" || def == "image_region") return true;
  }
  return false;
}

registry_data build(std::span<const toolset_room* const> rooms) {
  registry_data r;
  r.defs = parse_table(r, tables::defs, "defs.json");
  std::vector<object> tables;
  for (const toolset_room* room : rooms) {
    object table = parse_table(r, room->table, "a toolset's tools.json");
    tables.push_back(table);
    std::vector<tool_def>& tools = r.tools.emplace_back();
    std::vector<tool_source>& sources = r.sources.emplace_back();
    array entries = table["tools"].get_array().value();
    for (element e : entries) {
      object t = e.get_object().value();
      tool_def def{};
      def.name = r.texts.emplace_back(text_at(t, "name"));
      def.title = r.texts.emplace_back(text_at(t, "title"));
      def.description = r.texts.emplace_back(text_at(t, "description"));
      const tool_binding* binding = nullptr;
      def.runs_on = executor_of_binding(*room, def.name, &binding);
      def.handler = binding->handler;
      object a;
      if (t["annotations"].get(a) == simdjson::SUCCESS) {
        auto flag = [&](std::string_view k) {
          bool v = false;
          return a[k].get(v) == simdjson::SUCCESS && v;
        };
        def.annotations = {.read_only = flag("readOnly"), .destructive = flag("destructive"),
                           .idempotent = flag("idempotent"), .open_world = flag("openWorld")};
      }
      bool session = false;
      def.makes_session = t["session"].get(session) == simdjson::SUCCESS && session;
      uint64_t timeout = 0;
      if (t["timeoutMs"].get(timeout) == simdjson::SUCCESS) def.timeout_ms = uint32_t(timeout);
      tool_source src;
      if (t["input"].get(src.input) != simdjson::SUCCESS) {
        bad_table(str_cat("the tool ", def.name, " has no input schema"));
      }
      src.has_output = t["output"].get(src.output) == simdjson::SUCCESS;
      def.image_coordinates = takes_image_coordinates(src.input);
      tools.push_back(def);
      sources.push_back(src);
    }
    if (tools.size() != room->bindings.size()) {
      bad_table(str_cat("the ", text_at(table, "toolset"), " room binds a tool its table lacks"));
    }
    r.sets.push_back({room->id, text_at(table, "toolset"), text_at(table, "summary"), tools});
    read_extensions(r, room->id, table);
  }
  // The schema texts with the default toolset, now that every name is known.
  for (size_t s = 0; s < r.sets.size(); ++s) {
    for (size_t i = 0; i < r.tools[s].size(); ++i) {
      tool_def& def = r.tools[s][i];
      const tool_source& src = r.sources[s][i];
      def.input_schema = r.texts.emplace_back(
          write_schema(r, src.input, kDefaultToolsets, def.name, false));
      if (src.has_output) {
        def.output_schema = r.texts.emplace_back(
            write_schema(r, src.output, kDefaultToolsets, def.name, true));
      }
      r.source_of[&def] = &src;
    }
  }
  return r;
}


}  // namespace

struct toolset_tables::impl {
  registry_data r;
};

toolset_tables::toolset_tables(std::span<const toolset_room* const> rooms)
    : impl_(std::make_unique<impl>(impl{build(rooms)})) {}

toolset_tables::~toolset_tables() = default;

std::span<const toolset_def> toolset_tables::sets() const { return impl_->r.sets; }

std::string toolset_tables::input_schema(const tool_def& t, toolset_mask on) const {
  const registry_data& r = impl_->r;
  auto it = r.source_of.find(&t);
  if (it == r.source_of.end() || (on | kDefaultToolsets) == kDefaultToolsets) {
    return std::string(t.input_schema);
  }
  return write_schema(r, it->second->input, on, t.name, false);
}

std::string toolset_tables::output_schema(const tool_def& t, toolset_mask on) const {
  const registry_data& r = impl_->r;
  auto it = r.source_of.find(&t);
  if (it == r.source_of.end() || !it->second->has_output ||
      (on | kDefaultToolsets) == kDefaultToolsets) {
    return std::string(t.output_schema);
  }
  return write_schema(r, it->second->output, on, t.name, true);
}

std::vector<toolset_extension> toolset_tables::extensions_of(toolset by) const {
  const registry_data& r = impl_->r;
  std::vector<toolset_extension> out;
  for (const extension_source& x : r.extensions) {
    if (x.by != by) continue;
    // The properties it adds, written as a schema of their own.
    std::string text;
    json_writer w(text);
    w.begin_object().key("properties");
    schema_writer(r, w, mask_of(by), "", x.output).value(x.properties);
    if (x.has_required) {
      w.key("required");
      schema_writer(r, w, mask_of(by), "", x.output).value(x.required);
    }
    if (!x.unrequire.empty()) {
      w.key("unrequire").begin_array();
      for (std::string_view n : x.unrequire) w.string(n);
      w.end_array();
    }
    w.end_object();
    toolset_extension e{x.doc, x.tools, {}, {}, {}};
    for (std::string_view step : x.at) e.where += str_cat(e.where.empty() ? "" : ".", step);
    (x.output ? e.output : e.input) = std::move(text);
    out.push_back(std::move(e));
  }
  return out;
}


}  // namespace cu
