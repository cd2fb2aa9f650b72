#include "tools/doc_lists.h"

#include "util/str_cat.h"
#include "util/threads.h"

namespace cu::docs {
namespace {

constexpr size_t kWrap = 90;

// text wrapped at spaces before column kWrap, continuation lines indented
// by indent (a list item's two, or none for a paragraph), ending in a newline.
std::string wrapped(std::string_view text, size_t indent) {
  std::string out;
  size_t column = 0;
  bool line_empty = true;
  while (!text.empty()) {
    size_t space = text.find(' ');
    std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (!line_empty && column + 1 + word.size() > kWrap) {
      out += '\n';
      out.append(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_empty = false;
  }
  return out + "\n";
}

// A list item: prefix, then the words as one Markdown code span (a line
// break inside a code span reads as a space).
std::string code_span_item(std::string_view prefix, const std::vector<std::string>& words) {
  std::string text = str_cat("- ", prefix, " `");
  for (size_t i = 0; i < words.size(); ++i) text += str_cat(i > 0 ? " " : "", words[i]);
  return wrapped(text + "`", 2);
}

std::string code_list(std::string_view items) {
  // "main.cpp, protocol/" -> "`main.cpp`, `protocol/`".
  std::string out;
  while (!items.empty()) {
    size_t comma = items.find(", ");
    std::string_view item = items.substr(0, comma);
    out += str_cat(out.empty() ? "" : ", ", "`", item, "`");
    items = comma == std::string_view::npos ? std::string_view() : items.substr(comma + 2);
  }
  return out;
}

}  // namespace

result<std::vector<std::string>> shell_words(std::string_view script, std::string_view name) {
  const std::string start = str_cat(name, "=\"");
  size_t at = 0;
  for (;;) {
    at = script.find(start, at);
    if (at == std::string_view::npos) {
      return make_error(errc::not_found, str_cat("no ", name, "=\"...\" in the script"));
    }
    if (at == 0 || script[at - 1] == '\n') break;
    ++at;
  }
  size_t open = at + start.size();
  size_t close = script.find('"', open);
  if (close == std::string_view::npos) {
    return make_error(errc::invalid_argument, str_cat(name, "'s quote is not closed"));
  }
  std::vector<std::string> words;
  std::string word;
  for (char c : script.substr(open, close - open)) {
    if (c == ' ' || c == '\n' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

result<std::string> packages_block(std::string_view deps_sh) {
  auto build = shell_words(deps_sh, "CU_PKGS_BUILD");
  auto a11y = shell_words(deps_sh, "CU_PKGS_A11Y");
  auto test = shell_words(deps_sh, "CU_PKGS_TEST");
  auto fuzz = shell_words(deps_sh, "CU_PKGS_FUZZ");
  for (auto* r : {&build, &a11y, &test, &fuzz}) {
    if (!*r) return r->take_error();
  }
  // The a11y toolset's build-time package is its -dev one; the others are
  // its accessibility bus at run time.
  std::string dev;
  for (const std::string& p : *a11y) {
    if (p.ends_with("-dev")) dev = p;
  }
  return str_cat(
      code_span_item("to build:", *build),
      code_span_item(str_cat("the `a11y` toolset, optional (built in when `", dev,
                             "` is there; the others are its accessibility bus at run time):"),
                     *a11y),
      code_span_item("the tests:", *test), code_span_item("the fuzzer:", *fuzz));
}

std::string number_word(size_t n) {
  static constexpr const char* kWords[] = {
      "no",       "one",     "two",     "three",     "four",     "five",     "six",
      "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen",
      "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"};
  return n < std::size(kWords) ? kWords[n] : std::to_string(n);
}

std::string threads_block() {
  std::string word = number_word(server_threads().size());
  word[0] = char(word[0] - 'a' + 'A');
  std::string out = wrapped(
      str_cat(word,
              " kinds of thread run. Each has the kernel name below (`top -H`, gdb's `info "
              "threads`, `/proc/<pid>/task/*/comm`), given by `name_thread` from the table in "
              "`src/util/threads.cpp`, which this table is generated from."),
      0);
  out +=
      "\n| thread | kernel name | runs | owns | code |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const thread_row& t : server_threads()) {
    out += str_cat("| **", t.name, "** | ",
                   t.comm.empty() ? std::string("the process's") : str_cat("`", t.comm, "`"), " | ",
                   t.runs, " | ", t.owns, " | ", code_list(t.code), " |\n");
  }
  return out;
}

result<std::string> block_of(std::string_view text, std::string_view name) {
  const std::string open = str_cat("<!-- ", name, " -->\n");
  const std::string close = str_cat("<!-- /", name, " -->");
  size_t a = text.find(open);
  if (a == std::string_view::npos) {
    return make_error(errc::not_found, str_cat("no line \"<!-- ", name, " -->\""));
  }
  a += open.size();
  size_t b = text.find(close, a);
  if (b == std::string_view::npos) {
    return make_error(errc::not_found, str_cat("no line \"", close, "\" after its start"));
  }
  return std::string(text.substr(a, b - a));
}

result<std::string> with_block(std::string_view text, std::string_view name,
                               std::string_view contents) {
  auto old = block_of(text, name);
  if (!old) return old.take_error();
  const std::string open = str_cat("<!-- ", name, " -->\n");
  size_t a = text.find(open) + open.size();
  return str_cat(text.substr(0, a), contents, text.substr(a + old->size()));
}

}  // namespace cu::docs
