// Owns: what the operator decides of the grants before any agent asks
// (docs/grants.md, "The operator's lists"): CU_ALLOW_APPS (the only names
// request_access may grant), CU_DENY_APPS (names no grant lifts), and the
// policy file CU_GRANTS_FILE, which can say both and pre-approve grants for
// unattended runs (the session starts with them, and the idle release goes
// back to them rather than to nothing).
// Thread affinity: none; read once at start.
#pragma once

#include <set>
#include <string>

#include "toolsets/grants.h"
#include "util/config.h"
#include "util/result.h"

namespace cu {

struct operator_grants {
  bool allow_list = false;        // CU_ALLOW_APPS or the file's "allow" was given.
  std::set<std::string> allowed;  // Lower-case names.
  std::set<std::string> denied;   // Lower-case names.
  session_grants approved;        // Granted from the start.
};

// Reads CU_ALLOW_APPS, CU_DENY_APPS and the file CU_GRANTS_FILE names (if
// any): a JSON object with any of "allow" and "deny" (arrays of names) and
// "approved" ({"apps": [...], "clipboardRead", "clipboardWrite",
// "systemKeyCombos"}). The lists add to the variables'. An error (the file
// unreadable, malformed, over 1 MiB, an unknown key, a wrong type, an
// approved name the deny list or the allow list refuses) names the file and
// what is wrong: a mistyped policy must stop the server, not run open.
result<operator_grants> read_operator_grants(const config& cfg);

}  // namespace cu
