// Owns: the session grants of request_access (applications and the
// clipboard and system-key flags), additive across calls and cleared by the
// idle release, and their JSON shapes.
// Thread affinity: the loop thread.
#pragma once

#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/grant_policy.h"
#include "input/keys.h"

namespace cu {

struct session_grants {
  std::set<std::string> apps;  // Sorted, unique.
  bool clipboard_read = false;
  bool clipboard_write = false;
  bool system_key_combos = false;

  bool operator==(const session_grants&) const = default;
  bool empty() const {
    return apps.empty() && !clipboard_read && !clipboard_write && !system_key_combos;
  }
};

// request_access's answer: {"grantedApplications":[...],"deniedApplications":[],
// "screenshotFiltering":false,"clipboardRead":b,"clipboardWrite":b,"systemKeyCombos":b}.
// denied: the names asked for that the operator's deny list names;
// filtering: whether captures hide windows (CU_GRANTS=enforce or a deny list).
std::string request_access_json(const session_grants& g, const std::vector<std::string>& denied,
                                bool filtering);

// Why tool may not send chords (written text) now: a chord that reaches the
// X server itself (is_server_chord), in any mode; a system key combo
// (is_system_combo) while grants are enforced and the session has no
// systemKeyCombos grant; nothing when it may. The input actor judges the
// keys held at each press again (input_context::judge_key): this one
// answers early, with the call's own text.
std::optional<std::string> system_combo_refusal(const session_grants& g, const grant_view& view,
                                                const std::vector<key_chord>& chords,
                                                std::string_view tool, std::string_view text);

// list_granted_applications's answer: {"applications":[...],"clipboardRead":b,
// "clipboardWrite":b,"systemKeyCombos":b,"coordinateMode":"screenshot"}.
std::string granted_json(const session_grants& g);

}  // namespace cu
