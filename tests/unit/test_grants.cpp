// Tests for src/toolsets/grants.h (the shapes request_access and
// list_granted_applications answer with) and src/core/grant_policy.h (which
// windows a view allows).
#include "toolsets/grants.h"

#include "core/grant_policy.h"

#include <catch2/catch.hpp>

TEST_CASE("request_access answers with the contract's shape, applications sorted") {
  cu::session_grants g;
  g.apps = {"xterm", "Firefox", "code"};
  g.clipboard_read = true;
  CHECK(cu::request_access_json(g, {}, false) ==
        R"({"grantedApplications":["Firefox","code","xterm"],"deniedApplications":[],)"
        R"("screenshotFiltering":false,"clipboardRead":true,"clipboardWrite":false,)"
        R"("systemKeyCombos":false})");
}

TEST_CASE("list_granted_applications answers with the contract's shape") {
  cu::session_grants g;
  CHECK(g.empty());
  CHECK(cu::granted_json(g) ==
        R"({"applications":[],"clipboardRead":false,"clipboardWrite":false,)"
        R"("systemKeyCombos":false,"coordinateMode":"screenshot"})");
  g.system_key_combos = true;
  CHECK_FALSE(g.empty());
}

TEST_CASE("request_access says what the deny list denied, and that captures are filtered") {
  cu::session_grants g;
  g.apps = {"xterm"};
  CHECK(cu::request_access_json(g, {"keepassxc"}, true) ==
        R"({"grantedApplications":["xterm"],"deniedApplications":["keepassxc"],)"
        R"("screenshotFiltering":true,"clipboardRead":false,"clipboardWrite":false,)"
        R"("systemKeyCombos":false})");
}

namespace {

cu::app_identity app(std::string instance, std::string cls, std::string exe = {}) {
  cu::app_identity a;
  a.what = cu::app_identity::kind::app;
  a.instance = std::move(instance);
  a.cls = std::move(cls);
  a.exe = std::move(exe);
  return a;
}

}  // namespace

TEST_CASE("an open policy allows every window, and a deny list still denies its names") {
  cu::grant_policy open(cu::grants_mode::open, {}, true, nullptr);
  auto v = open.view();
  CHECK_FALSE(v->filtering());
  CHECK(v->allows(app("xterm", "XTerm")));
  cu::grant_policy deny(cu::grants_mode::open, cu::parse_app_list(" KeePassXC , ,mail"), true,
                        nullptr);
  auto d = deny.view();
  CHECK(d->filtering());
  CHECK(d->judge(app("keepassxc", "KeePassXC")) == cu::grant_view::verdict::denied);
  CHECK(d->allows(app("xterm", "XTerm")));
  CHECK(d->name_denied("keepassxc"));
  CHECK_FALSE(d->name_denied("xterm"));
  // A window type is declared by the client: a denied program's dock is
  // still denied, enforcing or not.
  cu::app_identity dock = app("mail", "Mail");
  dock.what = cu::app_identity::kind::desktop;
  CHECK(d->judge(dock) == cu::grant_view::verdict::denied);
  cu::grant_policy enforce_deny(cu::grants_mode::enforce, cu::parse_app_list("mail"), true,
                                nullptr);
  CHECK(enforce_deny.view()->judge(dock) == cu::grant_view::verdict::denied);
  cu::app_identity panel = app("xfce4-panel", "Xfce4-panel");
  panel.what = cu::app_identity::kind::desktop;
  CHECK(enforce_deny.view()->allows(panel));
}

TEST_CASE("an enforcing policy allows what is granted by WM_CLASS, executable or desktop name") {
  auto aliases = std::make_shared<cu::desktop_aliases>();
  aliases->by_key["mousepad"] = {"text editor", "org.xfce.mousepad"};
  cu::grant_policy p(cu::grants_mode::enforce, {"keepassxc"}, true, aliases);
  CHECK(p.view()->judge(app("xterm", "XTerm")) == cu::grant_view::verdict::not_granted);
  const uint64_t before = p.view()->epoch;
  p.set_granted({"XTerm", "Text Editor", "keepassxc"});
  auto v = p.view();
  CHECK(v->epoch > before);
  CHECK(v->allows(app("xterm", "XTerm")));
  CHECK(v->allows(app("mousepad", "Mousepad")));
  CHECK(v->judge(app("", "", "keepassxc")) == cu::grant_view::verdict::denied);
  CHECK(v->judge(app("other", "Other")) == cu::grant_view::verdict::not_granted);
  cu::app_identity unknown;
  CHECK(v->judge(unknown) == cu::grant_view::verdict::unidentified);
  cu::app_identity desktop;
  desktop.what = cu::app_identity::kind::desktop;
  CHECK(v->allows(desktop));
  cu::grant_policy no_desktop(cu::grants_mode::enforce, {}, false, nullptr);
  CHECK(no_desktop.view()->judge(desktop) == cu::grant_view::verdict::desktop_off);
}

TEST_CASE("a refusal names the application by a name a grant of which covers it") {
  CHECK(app("other", "XTerm").label() == "other");
  CHECK(app("chromium (/tmp/profile)", "Chromium").label() == "Chromium");
  CHECK(app("", "", "keepassxc").label() == "keepassxc");
}

TEST_CASE("a refusal names the application and how to grant it") {
  cu::grant_policy p(cu::grants_mode::enforce, {}, true, nullptr);
  auto v = p.view();
  const std::string text = v->refusal("left_click", "the point [10, 20] is on", app("other", "Other"),
                                      cu::grant_view::verdict::not_granted);
  CHECK(text ==
        "left_click was refused: the point [10, 20] is on a window of \"other\", which is not "
        "granted to this session (CU_GRANTS=enforce); call request_access with apps "
        "[\"other\"] first");
}
