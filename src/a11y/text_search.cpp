#include "a11y/text_search.h"

#include <atspi/atspi.h>

#include <algorithm>

#include "a11y/app_window.h"
#include "a11y/atspi_util.h"
#include "util/log.h"
#include "vision/phrase.h"
#include "x11/app_identity.h"
#include "x11/window_control.h"

namespace cu {

using namespace cu::atspi;

namespace {

// The roles whose name is text the element shows: a button's label, a
// link's, a menu item's. A window's name is its title, an entry's or a
// panel's is a description the screen may not show, so they are not read.
bool label_role(AtspiRole role) {
  switch (role) {
    case ATSPI_ROLE_PUSH_BUTTON:
    case ATSPI_ROLE_PUSH_BUTTON_MENU:
    case ATSPI_ROLE_TOGGLE_BUTTON:
    case ATSPI_ROLE_CHECK_BOX:
    case ATSPI_ROLE_RADIO_BUTTON:
    case ATSPI_ROLE_MENU:
    case ATSPI_ROLE_MENU_ITEM:
    case ATSPI_ROLE_CHECK_MENU_ITEM:
    case ATSPI_ROLE_RADIO_MENU_ITEM:
    case ATSPI_ROLE_PAGE_TAB:
    case ATSPI_ROLE_LINK:
    case ATSPI_ROLE_LABEL:
    case ATSPI_ROLE_STATIC:
    case ATSPI_ROLE_HEADING:
    case ATSPI_ROLE_CAPTION:
    case ATSPI_ROLE_LIST_ITEM:
    case ATSPI_ROLE_TABLE_CELL:
    case ATSPI_ROLE_COLUMN_HEADER:
    case ATSPI_ROLE_ROW_HEADER:
    case ATSPI_ROLE_TABLE_COLUMN_HEADER:
    case ATSPI_ROLE_TABLE_ROW_HEADER:
    case ATSPI_ROLE_TREE_ITEM:
      return true;
    default:
      return false;
  }
}

// The roles an agent acts on: what screenshot_marks marks.
bool actionable_role(AtspiRole role) {
  switch (role) {
    case ATSPI_ROLE_PUSH_BUTTON:
    case ATSPI_ROLE_PUSH_BUTTON_MENU:
    case ATSPI_ROLE_TOGGLE_BUTTON:
    case ATSPI_ROLE_CHECK_BOX:
    case ATSPI_ROLE_RADIO_BUTTON:
    case ATSPI_ROLE_MENU:
    case ATSPI_ROLE_MENU_ITEM:
    case ATSPI_ROLE_CHECK_MENU_ITEM:
    case ATSPI_ROLE_RADIO_MENU_ITEM:
    case ATSPI_ROLE_PAGE_TAB:
    case ATSPI_ROLE_LINK:
    case ATSPI_ROLE_ENTRY:
    case ATSPI_ROLE_PASSWORD_TEXT:
    case ATSPI_ROLE_SPIN_BUTTON:
    case ATSPI_ROLE_COMBO_BOX:
    case ATSPI_ROLE_SLIDER:
    case ATSPI_ROLE_SCROLL_BAR:
    case ATSPI_ROLE_LIST_ITEM:
    case ATSPI_ROLE_TREE_ITEM:
    case ATSPI_ROLE_TABLE_CELL:
    case ATSPI_ROLE_TABLE_ROW:
    case ATSPI_ROLE_COLUMN_HEADER:
    case ATSPI_ROLE_TABLE_COLUMN_HEADER:
    case ATSPI_ROLE_TEXT:
      return true;
    default:
      return false;
  }
}

// The label as words laid along the element's box, each as wide as its
// characters' share of the label (spaces included), so that find_phrase,
// which matches words on a line, can match it and narrow a match to part
// of it.
std::vector<ocr_word> label_words(const std::string& label, const rect& box) {
  auto chars = [](std::string_view s) {
    return size_t(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  };
  const size_t total = std::max<size_t>(1, chars(label));
  std::vector<ocr_word> words;
  size_t at = 0;  // Characters before the current one.
  size_t i = 0;
  while (i < label.size()) {
    if (label[i] == ' ' || label[i] == '\t' || label[i] == '\n' || label[i] == '\r') {
      ++at;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < label.size() && label[j] != ' ' && label[j] != '\t' && label[j] != '\n' &&
           label[j] != '\r') {
      ++j;
    }
    std::string_view w(label.data() + i, j - i);
    const size_t n = chars(w);
    const int x0 = box.x + int(int64_t(box.w) * int64_t(at) / int64_t(total));
    const int x1 = box.x + int(int64_t(box.w) * int64_t(at + n) / int64_t(total));
    words.push_back(ocr_word{std::string(w), rect{x0, box.y, std::max(1, x1 - x0), box.h}, 1.0});
    at += n;
    i = j;
  }
  return words;
}

bool contains(const rect& r, point p) {
  return p.x >= r.x && p.x < r.x + r.w && p.y >= r.y && p.y < r.y + r.h;
}

// The shown client window whose area (frame included) is topmost at p.
const window_details* topmost_at(const std::vector<window_details>& stack, point p) {
  for (auto w = stack.rbegin(); w != stack.rend(); ++w) {
    const rect outer{w->device.x - w->border - w->frame.left,
                     w->device.y - w->border - w->frame.top,
                     w->device.w + 2 * w->border + w->frame.left + w->frame.right,
                     w->device.h + 2 * w->border + w->frame.top + w->frame.bottom};
    if (contains(outer, p)) return &*w;
  }
  return nullptr;
}

class text_search final : public a11y_op {
 public:
  explicit text_search(std::shared_ptr<a11y_text_search> io) : io_(std::move(io)) {
    // A search that cannot be done in this time is done by OCR instead: a
    // hung application costs it a third of a second once.
    budget = std::chrono::milliseconds(1500);
    call_timeout_ms = 300;
  }

  std::optional<tool_result> run(const a11y_control& c) override {
    const auto started = a11y_clock::now();
    status s = search(c);
    if (!s) {
      if (s.err().code == errc::cancelled) return std::nullopt;
      io_->hits.clear();
      io_->unavailable = s.err().message;
    }
    log(log_level::debug, "find_text: the accessibility trees: %zu found, %d labels read in %lld ms%s%s",
        io_->hits.size(), io_->elements_read,
        static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   a11y_clock::now() - started).count()),
        io_->unavailable.empty() ? "" : "; ", io_->unavailable.c_str());
    return tool_result::json("{}");
  }

 private:
  // Whether the grants let the agent see what window w's application shows.
  bool allowed(const window_info& w) const {
    if (!io_->view || !io_->view->filtering()) return true;
    app_identity a = process_identity(w.pid, w.instance);
    a.cls = w.cls;
    a.window = w.id;
    if (a.what == app_identity::kind::unknown && !a.cls.empty()) a.what = app_identity::kind::app;
    return io_->view->allows(a);
  }

  status search(const a11y_control& c) {
    if (c.windows == nullptr) return make_error(errc::a11y_unavailable, "no X connection");
    auto stack = c.windows->shown_clients();
    if (!stack) return stack.take_error();
    // With a window: its application alone, where its window is.
    int only_pid = 0;
    if (io_->window != 0) {
      auto w = std::find_if(stack->begin(), stack->end(),
                            [&](const window_details& d) { return d.info.id == io_->window; });
      if (w == stack->end() || w->info.pid == 0) {
        return make_error(errc::not_found, "the window is not shown, or names no process");
      }
      only_pid = int(w->info.pid);
      io_->origin = point{w->device.x, w->device.y};
      if (!allowed(w->info)) return {};
      stack->clear();
    }
    area_ = rect{io_->origin.x + io_->area.x, io_->origin.y + io_->area.y, io_->area.w,
                 io_->area.h};
    bus_calls calls(c);
    gobj<AtspiAccessible> desktop(atspi_get_desktop(0));
    if (!desktop) return make_error(errc::a11y_unavailable, "the registry has no desktop");
    GError* err = nullptr;
    if (auto x = calls.before(); !x) return x;
    const int apps = atspi_accessible_get_child_count(desktop.get(), &err);
    if (err != nullptr) return skip(calls, err);
    std::vector<a11y_text_hit> whole, part;
    for (int i = 0; i < apps; ++i) {
      if (auto x = calls.before(); !x) return x;
      gobj<AtspiAccessible> app(atspi_accessible_get_child_at_index(desktop.get(), i, &err));
      if (err != nullptr) {
        if (auto x = skip(calls, err); !x) return x;
        continue;
      }
      if (!app) continue;
      if (auto x = calls.before(); !x) return x;
      const int pid = int(atspi_accessible_get_process_id(app.get(), &err));
      if (err != nullptr) {
        if (auto x = skip(calls, err); !x) return x;
        continue;
      }
      // Only applications with a window on the screen where we look, and
      // that the grants allow: one window of its process the view does
      // not allow keeps the whole process out.
      bool shown = only_pid != 0 && pid == only_pid;
      bool kept_out = false;
      for (const window_details& w : *stack) {
        if (pid > 0 && w.info.pid == uint32_t(pid)) {
          if (intersect(w.device, area_).w > 0) shown = true;
          if (!allowed(w.info)) kept_out = true;
        }
      }
      if (!shown || kept_out) continue;
      if (auto x = search_app(app.get(), pid, *stack, calls, whole, part); !x) return x;
    }
    auto order = [](const a11y_text_hit& a, const a11y_text_hit& b) {
      return a.box.y != b.box.y ? a.box.y < b.box.y : a.box.x < b.box.x;
    };
    std::stable_sort(whole.begin(), whole.end(), order);
    std::stable_sort(part.begin(), part.end(), order);
    // A label is often said twice, by an element and by its text (a link
    // and the static text in it): the same words over the same place are
    // one match.
    auto repeated = [&](const a11y_text_hit& h) {
      for (const a11y_text_hit& k : io_->hits) {
        const rect both = intersect(k.box, h.box);
        if (k.text == h.text && int64_t(both.w) * both.h * 2 >= int64_t(h.box.w) * h.box.h) {
          return true;
        }
      }
      return false;
    };
    for (auto* group : {&whole, &part}) {
      for (a11y_text_hit& h : *group) {
        if (io_->hits.size() < io_->max_results && !repeated(h)) io_->hits.push_back(std::move(h));
      }
    }
    return {};
  }

  // A failed call: an application that does not answer ends the search
  // (OCR reads the screen instead); anything else skips what failed.
  static status skip(bus_calls& calls, GError* err) { return calls.failed(err); }

  status search_app(AtspiAccessible* app, int pid, const std::vector<window_details>& stack,
                    bus_calls& calls, std::vector<a11y_text_hit>& whole,
                    std::vector<a11y_text_hit>& part) {
    GError* err = nullptr;
    if (auto x = calls.before(); !x) return x;
    const int windows = atspi_accessible_get_child_count(app, &err);
    if (err != nullptr) return skip(calls, err);
    gobj<AtspiStateSet> wanted(atspi_state_set_new(nullptr));
    atspi_state_set_add(wanted.get(), ATSPI_STATE_SHOWING);
    gobj<AtspiMatchRule> rule(atspi_match_rule_new(
        wanted.get(), ATSPI_Collection_MATCH_ALL, nullptr, ATSPI_Collection_MATCH_NONE, nullptr,
        ATSPI_Collection_MATCH_NONE, nullptr, ATSPI_Collection_MATCH_NONE, FALSE));
    for (int i = 0; i < windows; ++i) {
      if (auto x = calls.before(); !x) return x;
      gobj<AtspiAccessible> window(atspi_accessible_get_child_at_index(app, i, &err));
      if (err != nullptr) {
        if (auto x = skip(calls, err); !x) return x;
        continue;
      }
      if (!window) continue;
      gobj<AtspiCollection> collection{atspi_accessible_get_collection_iface(window.get())};
      if (!collection) continue;
      if (auto x = calls.before(); !x) return x;
      GArray* found = atspi_collection_get_matches(collection.get(), rule.get(),
                                                   ATSPI_Collection_SORT_ORDER_CANONICAL,
                                                   kMostElements, TRUE, &err);
      if (err != nullptr) {
        if (found != nullptr) g_array_free(found, TRUE);
        if (auto x = skip(calls, err); !x) return x;
        continue;
      }
      if (found == nullptr) continue;
      std::vector<gobj<AtspiAccessible>> elements;
      elements.reserve(found->len);
      for (guint k = 0; k < found->len; ++k) {
        elements.emplace_back(g_array_index(found, AtspiAccessible*, k));
      }
      g_array_free(found, TRUE);
      for (const auto& e : elements) {
        if (auto x = consider(e.get(), pid, stack, calls, whole, part); !x) return x;
      }
    }
    return {};
  }

  // One element shown: its label read and, when it holds the phrase, its
  // box, kept when the screen shows it there.
  status consider(AtspiAccessible* e, int pid, const std::vector<window_details>& stack,
                  bus_calls& calls, std::vector<a11y_text_hit>& whole,
                  std::vector<a11y_text_hit>& part) {
    GError* err = nullptr;
    if (auto x = calls.before(); !x) return x;
    const AtspiRole role = atspi_accessible_get_role(e, &err);
    if (err != nullptr) return skip(calls, err);
    if (io_->actionable) return keep_actionable(e, role, pid, stack, calls, whole);
    if (!label_role(role)) return {};
    if (auto x = calls.before(); !x) return x;
    std::string label = take(atspi_accessible_get_name(e, &err));
    if (err != nullptr) return skip(calls, err);
    ++io_->elements_read;
    if (label.empty() || label.size() > 4096) return {};
    // A cheap test first: most labels hold none of the phrase's words.
    // (Laid out as a line of 8-pixel characters: find_phrase joins words
    // whose gap is small beside their height.)
    std::vector<ocr_word> words =
        label_words(label, rect{0, 0, int(std::min<size_t>(label.size(), 4096)) * 8, 16});
    if (find_phrase(words, io_->phrase, io_->exact, 1).empty()) return {};
    std::optional<rect> frame;
    if (auto x = read_frame(e, calls, frame); !x) return x;
    if (!frame) return {};
    const point center{frame->x + frame->w / 2, frame->y + frame->h / 2};
    if (!contains(area_, center)) return {};
    // Shown there only when no other application's window covers it (a
    // menu outside every window, such as a popup's, is its own).
    const window_details* top = topmost_at(stack, center);
    if (top != nullptr && top->info.pid != uint32_t(pid)) return {};
    std::vector<phrase_match> m = find_phrase(label_words(label, *frame), io_->phrase,
                                              io_->exact, 1);
    if (m.empty()) return {};
    a11y_text_hit hit;
    hit.text = std::move(label);
    if (auto x = calls.before(); !x) return x;
    hit.role = take(atspi_accessible_get_role_name(e, &err));
    if (err != nullptr) return skip(calls, err);
    hit.whole_words = m[0].whole_words;
    // A label matched whole is the element's own box; part of one, the
    // share of it the matched characters take.
    std::string all;
    for (const ocr_word& w : words) all += (all.empty() ? "" : " ") + w.text;
    hit.box = m[0].text == all ? *frame : m[0].box;
    hit.box.x -= io_->origin.x;
    hit.box.y -= io_->origin.y;
    (hit.whole_words ? whole : part).push_back(std::move(hit));
    return {};
  }

  // screenshot_marks' mode: an actionable element shown in the area kept
  // with its name (empty for an unnamed entry) and box.
  status keep_actionable(AtspiAccessible* e, AtspiRole role, int pid,
                         const std::vector<window_details>& stack, bus_calls& calls,
                         std::vector<a11y_text_hit>& kept) {
    if (!actionable_role(role)) return {};
    if (kept.size() >= io_->max_results) return {};
    std::optional<rect> frame;
    if (auto x = read_frame(e, calls, frame); !x) return x;
    if (!frame || frame->w <= 0 || frame->h <= 0) return {};
    const point center{frame->x + frame->w / 2, frame->y + frame->h / 2};
    if (!contains(area_, center)) return {};
    const window_details* top = topmost_at(stack, center);
    if (top != nullptr && top->info.pid != uint32_t(pid)) return {};
    GError* err = nullptr;
    a11y_text_hit hit;
    if (auto x = calls.before(); !x) return x;
    hit.text = take(atspi_accessible_get_name(e, &err));
    if (err != nullptr) return skip(calls, err);
    ++io_->elements_read;
    if (auto x = calls.before(); !x) return x;
    hit.role = take(atspi_accessible_get_role_name(e, &err));
    if (err != nullptr) return skip(calls, err);
    hit.whole_words = true;
    hit.window = top != nullptr ? top->info.id : io_->window;
    hit.pid = pid;
    hit.box = *frame;
    hit.box.x -= io_->origin.x;
    hit.box.y -= io_->origin.y;
    kept.push_back(std::move(hit));
    return {};
  }

  // Elements of one window read at most: of a longer page, the first
  // ones (a page's elements shown at once are far fewer).
  static constexpr int kMostElements = 5000;

  std::shared_ptr<a11y_text_search> io_;
  rect area_;  // Where to look, in root window pixels.
};

}  // namespace

std::unique_ptr<a11y_op> make_text_search(std::shared_ptr<a11y_text_search> io) {
  return std::make_unique<text_search>(std::move(io));
}

}  // namespace cu
