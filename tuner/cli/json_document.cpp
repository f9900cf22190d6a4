#include "json_document.hpp"

#include <kiln/param_space.hpp>

namespace kiln::cli {

Json config_json(const Config& config) {
  Json j = Json::object();
  for (const auto& [name, value] : config.values()) j.set(name, value);
  return j;
}

Json error_document(const std::string& kind, const std::string& message) {
  return json_document().set("error", Json::object().set("kind", kind).set("message", message));
}

}  // namespace kiln::cli
