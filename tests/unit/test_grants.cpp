// Tests for src/toolsets/grants.h: the shapes request_access and
// list_granted_applications answer with.
#include "toolsets/grants.h"

#include <catch2/catch.hpp>

TEST_CASE("request_access answers with the contract's shape, applications sorted") {
  cu::session_grants g;
  g.apps = {"xterm", "Firefox", "code"};
  g.clipboard_read = true;
  CHECK(cu::request_access_json(g) ==
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
