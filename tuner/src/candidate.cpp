#include "kiln/tuner/candidate.hpp"

namespace kiln {

std::string Candidate::to_string() const {
  const std::string name = variant ? variant->name() : std::string("(none)");
  return config.empty() ? name : name + " [" + config.to_string() + "]";
}

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok: return "ok";
    case Outcome::rejected: return "rejected";
    case Outcome::failed: return "failed";
    case Outcome::fault: return "fault";
  }
  return "?";
}

bool preferred_on_tie(const Candidate& a, const Candidate& b) {
  const int pa = a.variant ? a.variant->priority() : 0;
  const int pb = b.variant ? b.variant->priority() : 0;
  if (pa != pb) return pa > pb;
  const std::string ca = a.config.to_string(), cb = b.config.to_string();
  if (ca != cb) return ca < cb;
  const std::string na = a.variant ? a.variant->name() : std::string();
  const std::string nb = b.variant ? b.variant->name() : std::string();
  return na < nb;
}

}  // namespace kiln
